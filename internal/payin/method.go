package payin

import (
	"sort"

	"payd/internal/money"
	"payd/internal/param"
)

// Family groups methods by how the customer pays, which decides the shape of
// pay_code (CONTRACT §4).
type Family string

const (
	// BankTransfer: the customer pushes money to bank details issued shortly
	// after creation (jp_bank_jpy, au_payid_npp_aud).
	BankTransfer Family = "bank_transfer"
	// VirtualAccount: a virtual account number to pay into.
	VirtualAccount Family = "virtual_account"
	// QR: an EMVCo merchant-presented QR payload.
	QR Family = "qr"
	// Redirect: the customer pays on a hosted page and returns to callback_url.
	Redirect Family = "e_wallet"
	// MobileMoney: an OTP confirms the payer's phone, then the payer approves.
	MobileMoney Family = "mobile_money"
)

// Method is one way to pay, as data: the catalogue below is the only place
// a method is defined.
type Method struct {
	Code        string
	Currency    string
	Family      Family
	Description string
	// MinMinor and MaxMinor bound the amount, in minor units of Currency.
	MinMinor, MaxMinor int64
	Refundable         bool
	Cancellable        bool
	RequireContact     bool
	RequireKYC         bool
	// OTP methods start at stage authorize_otp.
	OTP    bool
	Params []param.Param
	// Rules span Params (ug_bank_ugx's by user_type).
	Rules []param.Rule
	// OffByDefault methods must be enabled per account (ug_bank_ugx).
	OffByDefault bool
	// FeeBPS and FeeFixedMinor are the default fee: basis points of the paid
	// amount plus a fixed part.
	FeeBPS        int64
	FeeFixedMinor int64
	// currency is Currency's definition, filled in from money at start.
	currency money.Currency
}

var (
	pCallback        = param.Param{Name: "callback_url", Type: "string", Mandatory: true, Label: "callback URL", Check: param.URL}
	pCallbackOpt     = param.Param{Name: "callback_url", Type: "string", Label: "callback URL", Check: param.URL}
	pFailureCallback = param.Param{Name: "failure_callback_url", Type: "string", Label: "failure callback URL", Check: param.URL}
	pIP              = param.Param{Name: "ip_address", Type: "string", Mandatory: true, Label: "customer IP address", Check: param.IP}
	pPhone           = param.Param{Name: "phone", Type: "string", Mandatory: true, Label: "customer phone number", Check: param.Phone}
	pPhoneOpt        = param.Param{Name: "phone", Type: "string", Label: "customer phone number", Check: param.Phone}
	pUserName        = param.Param{Name: "user_name", Type: "string", Mandatory: true, Label: "account holder name", Check: param.Text(100)}
	pUserID          = param.Param{Name: "user_id", Type: "string", Mandatory: true, Label: "merchant's user id", Check: param.Text(64)}
	pUserIDOpt       = param.Param{Name: "user_id", Type: "string", Label: "merchant's user id", Check: param.Text(64)}
	pFirstName       = param.Param{Name: "first_name", Type: "string", Mandatory: true, Label: "first name", Check: param.Text(100)}
	pLastName        = param.Param{Name: "last_name", Type: "string", Mandatory: true, Label: "last name", Check: param.Text(100)}
	pFirstKana       = param.Param{Name: "first_name", Type: "string", Mandatory: true, Label: "first name (katakana)", Check: param.Katakana}
	pLastKana        = param.Param{Name: "last_name", Type: "string", Mandatory: true, Label: "last name (katakana)", Check: param.Katakana}
	pEmail           = param.Param{Name: "email", Type: "string", Mandatory: true, Label: "customer email", Check: param.Email}
)

// catalogue is every payin method payd offers (CONTRACT §4). Limits come from
// the spec where it gives them (ug_bank_ugx, au_payid_npp_aud) and are
// otherwise set to what such rails commonly take.
var catalogue = []Method{
	{Code: "au_payid_npp_aud", Currency: "AUD", Family: BankTransfer, Description: "PayID (NPP) bank transfer",
		MinMinor: money.UnitsOf("AUD", 20), MaxMinor: money.UnitsOf("AUD", 10_000), Refundable: true, Cancellable: true, RequireContact: true,
		Params: []param.Param{pCallback}, FeeBPS: 50},
	{Code: "id_bank_qris_idr", Currency: "IDR", Family: QR, Description: "QRIS",
		MinMinor: money.UnitsOf("IDR", 1_000), MaxMinor: money.UnitsOf("IDR", 10_000_000), Refundable: true, Cancellable: true,
		FeeBPS: 70},
	{Code: "vn_vietqr_vnd", Currency: "VND", Family: QR, Description: "VietQR bank transfer",
		MinMinor: money.UnitsOf("VND", 10_000), MaxMinor: money.UnitsOf("VND", 500_000_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pIP, pPhone, {Name: "transliterate", Type: "boolean", Label: "transliterate Vietnamese names"}}, FeeBPS: 60},
	{Code: "kr_bank_krw", Currency: "KRW", Family: VirtualAccount, Description: "Korean bank transfer to a virtual account",
		MinMinor: money.UnitsOf("KRW", 1_000), MaxMinor: money.UnitsOf("KRW", 50_000_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pUserName}, FeeBPS: 80},
	{Code: "kr_bank_va_kyc_krw", Currency: "KRW", Family: VirtualAccount, Description: "Korean virtual account with KYC and OTP",
		MinMinor: money.UnitsOf("KRW", 1_000), MaxMinor: money.UnitsOf("KRW", 50_000_000), Refundable: true, Cancellable: true,
		RequireContact: true, RequireKYC: true, OTP: true, Params: []param.Param{pUserName, pPhone}, FeeBPS: 90},
	{Code: "jp_bank_jpy", Currency: "JPY", Family: BankTransfer, Description: "Japanese domestic bank transfer (Zengin)",
		MinMinor: money.UnitsOf("JPY", 100), MaxMinor: money.UnitsOf("JPY", 10_000_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pUserID, pUserName, pIP, pFirstKana, pLastKana, pPhone, pEmail}, FeeBPS: 100},
	{Code: "th_qrpay_thb", Currency: "THB", Family: QR, Description: "Thai QR payment (PromptPay) or manual bank transfer",
		MinMinor: money.UnitsOf("THB", 20), MaxMinor: money.UnitsOf("THB", 2_000_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pFirstName, pLastName, pPhone, {Name: "bank_code", Type: "string", Mandatory: true, Label: "payer's bank code", Check: param.Code}},
		FeeBPS: 80},
	{Code: "ph_ewallet_gcash_php", Currency: "PHP", Family: Redirect, Description: "GCash e-wallet",
		MinMinor: money.UnitsOf("PHP", 20), MaxMinor: money.UnitsOf("PHP", 100_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pCallback, pFailureCallback}, FeeBPS: 230},
	{Code: "ph_bank_maya_php", Currency: "PHP", Family: Redirect, Description: "Maya",
		MinMinor: money.UnitsOf("PHP", 20), MaxMinor: money.UnitsOf("PHP", 100_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pUserIDOpt, {Name: "product_name", Type: "string", Label: "product name", Check: param.Text(100)}, pCallbackOpt, pFailureCallback},
		FeeBPS: 200},
	{Code: "my_bank_fpx_myr", Currency: "MYR", Family: Redirect, Description: "FPX online banking",
		MinMinor: money.UnitsOf("MYR", 1), MaxMinor: money.UnitsOf("MYR", 30_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pCallback, pFailureCallback}, FeeBPS: 120},
	{Code: "gh_mobile_money_ghs", Currency: "GHS", Family: MobileMoney, Description: "Ghana mobile money",
		MinMinor: money.UnitsOf("GHS", 1), MaxMinor: money.UnitsOf("GHS", 10_000), Refundable: false, Cancellable: true, OTP: true,
		Params: []param.Param{pPhone}, FeeBPS: 250},
	{Code: "ke_mobile_money_kes", Currency: "KES", Family: MobileMoney, Description: "Kenya mobile money (M-Pesa)",
		MinMinor: money.UnitsOf("KES", 10), MaxMinor: money.UnitsOf("KES", 150_000), Refundable: false, Cancellable: true, OTP: true,
		Params: []param.Param{pPhone}, FeeBPS: 250},
	{Code: "cm_mobile_money_xaf", Currency: "XAF", Family: MobileMoney, Description: "Cameroon mobile money",
		MinMinor: money.UnitsOf("XAF", 100), MaxMinor: money.UnitsOf("XAF", 1_000_000), Refundable: false, Cancellable: true, OTP: true,
		Params: []param.Param{pPhone}, FeeBPS: 300},
	{Code: "ci_mobile_money_xof", Currency: "XOF", Family: MobileMoney, Description: "Côte d'Ivoire mobile money",
		MinMinor: money.UnitsOf("XOF", 100), MaxMinor: money.UnitsOf("XOF", 1_000_000), Refundable: false, Cancellable: true, OTP: true,
		Params: []param.Param{pPhone}, FeeBPS: 300},
	{Code: "ug_bank_ugx", Currency: "UGX", Family: VirtualAccount, Description: "Uganda bank transfer",
		MinMinor: money.UnitsOf("UGX", 15_000), MaxMinor: money.UnitsOf("UGX", 36_000_000), Refundable: true, Cancellable: true, OffByDefault: true,
		Params: []param.Param{{Name: "user_type", Type: "string", Mandatory: true, Label: "individual or business", Check: param.OneOf("individual", "business")},
			{Name: "first_name", Type: "string", Label: "first name (individual)", Check: param.Text(100)},
			{Name: "last_name", Type: "string", Label: "last name (individual)", Check: param.Text(100)},
			pPhoneOpt,
			{Name: "business_name", Type: "string", Label: "business name (business)", Check: param.Text(200)},
			{Name: "registration_number", Type: "string", Label: "registration number (business)", Check: param.Text(64)}},
		Rules: []param.Rule{param.RequiredWhen("user_type", map[string][]string{
			"individual": {"first_name", "last_name", "phone"}, "business": {"business_name", "registration_number"}})},
		FeeBPS: 150},
	{Code: "kh_pay_khr", Currency: "KHR", Family: Redirect, Description: "Cambodian bank payment",
		MinMinor: money.UnitsOf("KHR", 400), MaxMinor: money.UnitsOf("KHR", 40_000_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pCallback, pFailureCallback}, FeeBPS: 150},
	{Code: "us_pay_usd", Currency: "USD", Family: Redirect, Description: "US online payment",
		MinMinor: money.UnitsOf("USD", 1), MaxMinor: money.UnitsOf("USD", 10_000), Refundable: true, Cancellable: true,
		Params: []param.Param{pCallback, pFailureCallback}, FeeBPS: 290, FeeFixedMinor: 30},
}

// methods indexes the catalogue, each method's currency filled in from money.
var methods = param.NewCatalogue("payin", catalogue, func(m *Method) string {
	m.currency = money.MustLookup(m.Currency)
	return m.Code
})

// Lookup finds a method by its code. A code that is not in the catalogue is
// an error that names it.
func Lookup(code string) (Method, error) { return methods.Lookup(code) }

// Enabled returns the methods an account offers: those named in its
// settings, or, when it has none, every default method of its currency.
func Enabled(currency string, accountMethods []string) []Method {
	var out []Method
	if accountMethods == nil {
		for m := range methods.All() {
			if m.Currency == currency && !m.OffByDefault {
				out = append(out, m)
			}
		}
		return out
	}
	for _, code := range accountMethods {
		if m, err := methods.Lookup(code); err == nil && m.Currency == currency {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// isEnabled reports whether code is among an account's methods.
func isEnabled(m Method, currency string, accountMethods []string) bool {
	for _, e := range Enabled(currency, accountMethods) {
		if e.Code == m.Code {
			return true
		}
	}
	return false
}
