package payin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"

	"payd/internal/clock"
)

// The sandbox rails issue payment details derived from the payin's uuid, so
// they are stable and unique per payin without any state of their own.

// digits returns n decimal digits derived from s.
func digits(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	out := make([]byte, n)
	for i := range out {
		out[i] = '0' + sum[i%len(sum)]%10
	}
	return string(out)
}

func encode(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// virtualBanks is the sandbox's virtual-account issuing bank per currency.
var virtualBanks = map[string][2]string{
	"KRW": {"004", "KB Kookmin Bank"},
	"UGX": {"031", "Stanbic Bank Uganda"},
}

func virtualAccount(r row) map[string]any {
	bank := virtualBanks[r.currency]
	return map[string]any{
		"virtual_account_number": "9" + digits(r.uuid, 13),
		"virtual_bank_code":      bank[0],
		"virtual_bank_name":      bank[1],
	}
}

// initialPayCode is the pay_code a payin is created with.
func (s *Service) initialPayCode(m Method, r row) (string, error) {
	switch m.Family {
	case QR:
		pc, err := s.qrPayCode(m, r)
		return encode(pc), err
	case VirtualAccount:
		if m.OTP {
			return "{}", nil
		}
		return encode(virtualAccount(r)), nil
	case Redirect:
		return encode(map[string]any{"pay_url": s.PayURL(r.uuid)}), nil
	}
	return "{}", nil
}

// qrPayCode is a QR method's pay_code: a real EMVCo payload; th_qrpay_thb
// also offers the bank details of a manual transfer.
func (s *Service) qrPayCode(m Method, r row) (map[string]any, error) {
	payload, err := qrString(m, r)
	if err != nil {
		return nil, err
	}
	pc := map[string]any{"qr_string": payload}
	if m.Code == "th_qrpay_thb" {
		pc["bank_information"] = map[string]any{
			"bank_name":      "Kasikornbank",
			"account_number": digits(r.uuid+"th", 10),
			"account_name":   "PAYD SANDBOX CO., LTD.",
			"branch_name":    "Phahon Yothin",
			"swift_code":     "KASITHBK",
		}
	}
	return pc, nil
}

// laterPayCode is what jp_bank_jpy and au_payid_npp_aud receive shortly after creation.
func (s *Service) laterPayCode(r row, now time.Time) string {
	switch r.method {
	case "jp_bank_jpy":
		return encode(map[string]any{
			"bank_name":         "ペイディ銀行",
			"transfer_id":       digits(r.uuid+"transfer", 7),
			"branch_code":       "1" + digits(r.uuid+"branch", 2),
			"branch_name":       "サンドボックス支店",
			"account_number":    digits(r.uuid+"account", 7),
			"account_name":      "ﾍﾟｲﾃﾞｨ(ｶ",
			"expired_timestamp": clock.Format(clock.FromMillis(r.expiredAt)),
			"account_type":      "futsu",
			"transfer_name":     digits(r.uuid+"transfer", 7) + " ﾍﾟｲﾃﾞｨ",
		})
	case "au_payid_npp_aud":
		return encode(map[string]any{"pay_id": "pay" + digits(r.uuid, 8) + "@payid.payd.money"})
	}
	return r.payCode
}

// otpPayCode is what a confirmed OTP issues.
func (s *Service) otpPayCode(r row) string {
	m := r.meth
	if m.Family == VirtualAccount {
		return encode(virtualAccount(r))
	}
	var params map[string]any
	json.Unmarshal([]byte(r.params), &params)
	return encode(map[string]any{"phone": params["phone"], "reference": r.uuid,
		"instructions": "Approve the payment request on your phone"})
}

// PayURL is the hosted payment page of a payin; the token keeps others from
// guessing it from the uuid.
func (s *Service) PayURL(uuid string) string {
	return s.PublicURL + "/pay/" + uuid + "?t=" + s.payToken(uuid)
}

func (s *Service) payToken(uuid string) string {
	mac := hmac.New(sha256.New, s.linkKey)
	mac.Write([]byte("pay:" + uuid))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// ValidPayToken reports whether token is the pay page token of uuid.
func (s *Service) ValidPayToken(uuid, token string) bool {
	return hmac.Equal([]byte(s.payToken(uuid)), []byte(token))
}
