package payin

import (
	"fmt"
	"strings"

	"payd/internal/money"
	"payd/internal/qr"
)

// The sandbox's QR codes are real EMVCo payloads (with valid CRCs) for a
// sandbox merchant, carrying the payin's amount and its uuid as reference,
// so any reader decodes them as a banking app would.

// qrAmount writes minor units as the decimal a QR carries, without a
// fraction when it is whole ("100000", "99.50").
func qrAmount(minor int64, c money.Currency) string {
	s := money.Format(minor, c)
	if i := strings.IndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		s = s[:i]
	}
	return s
}

// qrString returns the EMVCo payload of a QR method's payin.
func qrString(m Method, r row) (string, error) {
	amount := qrAmount(r.total, r.cur)
	switch m.Code {
	case "id_bank_qris_idr":
		return qr.QRIS(qr.QRISParams{
			MerchantPAN: "93600914" + digits(r.merchantID, 10), MerchantID: "PAYD" + digits(r.merchantID+"mid", 8),
			Criteria: qr.QRISMicro, NMID: "ID" + digits(r.merchantID+"nmid", 13), MerchantCategoryCode: "5999",
			MerchantName: "PAYD SANDBOX", MerchantCity: "JAKARTA", PostalCode: "10110", Amount: amount,
			AdditionalData: qr.AdditionalData{ReferenceLabel: r.uuid},
		})
	case "vn_vietqr_vnd":
		return qr.VietQR(qr.VietQRParams{BIN: "970436", Account: digits(r.merchantID+"vn", 13), Service: qr.VietQRToAccount,
			Amount: amount, AdditionalData: qr.AdditionalData{Purpose: r.uuid}})
	case "th_qrpay_thb":
		return qr.PromptPayBill(qr.PromptPayBillParams{BillerID: "0105561" + digits(r.merchantID+"th", 6) + "01",
			Reference1: r.uuid, Reference2: "PAYD", Amount: amount, MerchantName: "PAYD SANDBOX"})
	}
	return "", fmt.Errorf("no QR builder for %s", m.Code)
}
