package qr

import "fmt"

// Thai QR's identifiers, from the Thai QR Code Payment Standard.
const (
	// promptPayTransferTemplate holds a PromptPay credit transfer to a
	// proxy, under AID promptPayTransferAID.
	promptPayTransferTemplate = "29"
	promptPayTransferAID      = "A000000677010111"
	// Objects of template 29, one per kind of proxy.
	idPromptPayMobile     = "01"
	idPromptPayNationalID = "02"
	idPromptPayEWallet    = "03"

	// promptPayBillTemplate holds a bill payment to a biller, under AID
	// promptPayBillAID.
	promptPayBillTemplate = "30"
	promptPayBillAID      = "A000000677010112"
	// Objects of template 30.
	idPromptPayBiller     = "01"
	idPromptPayReference1 = "02"
	idPromptPayReference2 = "03"

	// promptPayMobilePrefix replaces the trunk 0 of a Thai mobile number:
	// 00 and country code 66, padding the proxy to 13 digits.
	promptPayMobilePrefix = "0066"
	// maxPromptPayReference bounds each bill payment reference.
	maxPromptPayReference = 20
	// countryTH is Thailand's ISO 3166-1 alpha-2 code.
	countryTH = "TH"
)

// PromptPayParams is what a PromptPay credit transfer code says: pay Amount
// baht to the PromptPay proxy given by exactly one of MobileNumber,
// NationalID and EWalletID.
type PromptPayParams struct {
	// MobileNumber is a Thai mobile number in its 10-digit local form,
	// "0812345678".
	MobileNumber string
	// NationalID is a 13-digit national ID or tax ID.
	NationalID string
	// EWalletID is a 15-digit e-wallet ID.
	EWalletID string
	// Amount is in baht with at most two decimals; it is written with
	// exactly two ("100" as "100.00").
	Amount string
}

// PromptPay returns a dynamic PromptPay credit transfer payload, following
// the Thai QR Code Payment Standard of the Bank of Thailand and the Thai
// Bankers' Association (built on EMVCo MPM): template 29 with AID
// A000000677010111 and the proxy (01 mobile as "0066" and 9 digits, 02
// national or tax ID, 03 e-wallet ID), currency 764, the amount with two
// decimals and country TH. Simplified: the bank account proxy (29.04) is not
// offered, and a transfer carries no merchant name or additional data.
func PromptPay(p PromptPayParams) (string, error) {
	amount, err := p.validate()
	if err != nil {
		return "", fmt.Errorf("build PromptPay: %w", err)
	}
	var account fieldList
	account.add(idGUID, promptPayTransferAID)
	if p.MobileNumber != "" {
		account.add(idPromptPayMobile, promptPayMobilePrefix+p.MobileNumber[1:])
	}
	account.add(idPromptPayNationalID, p.NationalID)
	account.add(idPromptPayEWallet, p.EWalletID)

	l := dynamicHeader()
	l.addTemplate(promptPayTransferTemplate, account)
	l.add(idCurrency, CurrencyTHB)
	l.add(idAmount, amount)
	l.add(idCountry, countryTH)
	return encodeFor("PromptPay", l)
}

// validate checks p and returns its amount with two decimals.
func (p PromptPayParams) validate() (string, error) {
	if err := p.checkProxy(); err != nil {
		return "", err
	}
	return twoDecimals(p.Amount)
}

// checkProxy requires exactly one proxy, in its form.
func (p PromptPayParams) checkProxy() error {
	set := 0
	for _, v := range []string{p.MobileNumber, p.NationalID, p.EWalletID} {
		if v != "" {
			set++
		}
	}
	switch {
	case set != 1:
		return &InputError{Field: "proxy", Reason: fmt.Sprintf("exactly one of MobileNumber, NationalID and EWalletID is required, got %d", set)}
	case p.MobileNumber != "":
		return checkThaiMobile(p.MobileNumber)
	case p.NationalID != "":
		return checkDigits("NationalID", p.NationalID, 13, 13)
	}
	return checkDigits("EWalletID", p.EWalletID, 15, 15)
}

// checkThaiMobile requires a Thai mobile number in local form: a trunk 0 and
// nine digits.
func checkThaiMobile(number string) error {
	if len(number) != 10 || number[0] != '0' || !isDigits(number) {
		return &InputError{Field: "MobileNumber", Reason: fmt.Sprintf("%q is not 10 digits starting with 0", number)}
	}
	return nil
}

// PromptPayBillParams is what a PromptPay bill payment code says: pay Amount
// baht to the biller, quoting the references so that the biller can match
// the payment to a bill.
type PromptPayBillParams struct {
	// BillerID is the biller's 13-digit tax ID and a 2-digit suffix.
	BillerID string
	// Reference1 (required) and Reference2 (optional) are up to 20 ASCII
	// letters and digits each.
	Reference1 string
	Reference2 string
	// Amount is in baht with at most two decimals; it is written with
	// exactly two ("100" as "100.00").
	Amount string
	// MerchantName is optional, up to 25 characters.
	MerchantName   string
	AdditionalData AdditionalData
}

// PromptPayBill returns a dynamic PromptPay bill payment payload, the
// merchant form of the Thai QR Code Payment Standard: template 30 with AID
// A000000677010112, the biller ID and the references, currency 764, the
// amount with two decimals, country TH, and the merchant name and additional
// data when given. Simplified: no merchant category or city, and no third
// reference beyond the terminal label of the additional data (62.07).
func PromptPayBill(p PromptPayBillParams) (string, error) {
	amount, err := p.validate()
	if err != nil {
		return "", fmt.Errorf("build PromptPay bill: %w", err)
	}
	var biller fieldList
	biller.add(idGUID, promptPayBillAID)
	biller.add(idPromptPayBiller, p.BillerID)
	biller.add(idPromptPayReference1, p.Reference1)
	biller.add(idPromptPayReference2, p.Reference2)

	l := dynamicHeader()
	l.addTemplate(promptPayBillTemplate, biller)
	l.add(idCurrency, CurrencyTHB)
	l.add(idAmount, amount)
	l.add(idCountry, countryTH)
	l.add(idMerchantName, p.MerchantName)
	l.addTemplate(idAdditionalData, p.AdditionalData.fields())
	return encodeFor("PromptPay bill", l)
}

// validate checks p and returns its amount with two decimals.
func (p PromptPayBillParams) validate() (string, error) {
	err := firstError(
		checkDigits("BillerID", p.BillerID, 15, 15),
		checkReference("Reference1", p.Reference1, 1),
		checkReference("Reference2", p.Reference2, 0),
		checkText("MerchantName", p.MerchantName, 0, maxMerchantName),
		p.AdditionalData.validate(),
	)
	if err != nil {
		return "", err
	}
	return twoDecimals(p.Amount)
}

// checkReference requires a bill payment reference: at least minLen and at
// most 20 ASCII letters and digits, the alphanumeric form Thai bill
// references take.
func checkReference(field, ref string, minLen int) error {
	if err := checkText(field, ref, minLen, maxPromptPayReference); err != nil {
		return err
	}
	for _, c := range []byte(ref) {
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return &InputError{Field: field, Reason: fmt.Sprintf("%q has %q, not a letter or digit", ref, c)}
		}
	}
	return nil
}
