package payout

import (
	"fmt"
	"regexp"
	"strings"

	"payd/internal/money"
	"payd/internal/param"
)

// Method is one way to pay out, as data: the catalogue below is the only
// place a payout method is defined (CONTRACT §5, §16).
type Method struct {
	Code        string
	Currency    string
	Description string
	// MinMinor and MaxMinor bound each transaction's amount, in minor units.
	MinMinor, MaxMinor int64
	// FeeFixedMinor plus FeeBPS basis points of the amount is each
	// transaction's fee, taken from the available balance with it.
	FeeFixedMinor int64
	FeeBPS        int64
	Params        []param.Param
	// Rules span Params (ug_bank_ugx's by user_type).
	Rules []param.Rule
	// BankField names the parameter that must be one of the method's banks
	// ("bank_code"), or "" when the method takes no bank from a list.
	BankField string
	// BranchField names the parameter that must be a branch of that bank
	// where the directory knows branches (BranchChecker), or "".
	BranchField string
	// currency is Currency's definition, filled in from money at start.
	currency money.Currency
}

// Fee is the fee of one transaction of amountMinor.
func (m Method) Fee(amountMinor int64) int64 {
	return m.FeeFixedMinor + money.Percent(amountMinor, m.FeeBPS)
}

// PayIDTypes are the v2 spellings of pay_id_type (upper case; v1 spells
// them in lower case).
var PayIDTypes = []string{"EMAIL", "PHONE", "ABN", "ORGANISATION_ID"}

// PaymentReasons are the payment_reason values of ug_bank_ugx.
var PaymentReasons = []string{"other", "bills", "groceries", "travel", "health", "entertainment", "housing", "school-fees"}

var (
	bsbPattern     = regexp.MustCompile(`^[0-9]{6}$`)
	auAccount      = regexp.MustCompile(`^[0-9]{5,9}$`)
	digits         = regexp.MustCompile(`^[0-9]{4,20}$`)
	zenginBank     = regexp.MustCompile(`^[0-9]{4}$`)
	zenginBranch   = regexp.MustCompile(`^[0-9]{3}$`)
	zenginAccount  = regexp.MustCompile(`^[0-9]{7}$`)
	swiftPattern   = regexp.MustCompile(`^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	napasBIN       = regexp.MustCompile(`^[0-9]{6}$`)
	accountNumbers = "must be 4 to 20 digits"
)

func matches(re *regexp.Regexp, problem string) func(any) string {
	return func(v any) string {
		if !re.MatchString(v.(string)) {
			return problem
		}
		return ""
	}
}

// payIDType refuses v1's lower-case spellings with a message that says so.
func payIDType(v any) string {
	s := v.(string)
	for _, t := range PayIDTypes {
		if s == t {
			return ""
		}
		if s == strings.ToLower(t) {
			return fmt.Sprintf("must be upper case in v2 (%s); %q is the v1 spelling", strings.Join(PayIDTypes, ", "), s)
		}
	}
	return "must be one of " + strings.Join(PayIDTypes, ", ")
}

var (
	pAccountName = param.Param{Name: "account_name", Type: "string", Mandatory: true, Label: "account holder's name", Check: param.Text(140)}
	pAccountNo   = param.Param{Name: "account_number", Type: "string", Mandatory: true, Label: "account number", Check: matches(digits, accountNumbers)}
	pSwift       = param.Param{Name: "swift_code", Type: "string", Mandatory: true, Label: "recipient bank's SWIFT/BIC code",
		Check: matches(swiftPattern, "must be a SWIFT/BIC code of 8 or 11 characters (for example BKKBTHBK)")}
)

// catalogue is every payout method. Fees and the limits the spec leaves open
// are payd's decisions, published by GET /v2/payouts/payout_methods.
var catalogue = []Method{
	{Code: "au_bank_aud", Currency: "AUD", Description: "Australian bank transfer (BSB and account number)",
		MinMinor: money.UnitsOf("AUD", 1), MaxMinor: money.UnitsOf("AUD", 1_000_000), FeeFixedMinor: 50,
		Params: []param.Param{
			{Name: "bsb", Type: "string", Mandatory: true, Label: "BSB (6 digits)", Check: matches(bsbPattern, "must be 6 digits")},
			{Name: "account_number", Type: "string", Mandatory: true, Label: "account number", Check: matches(auAccount, "must be 5 to 9 digits")},
			pAccountName}},
	{Code: "au_payid_npp_aud", Currency: "AUD", Description: "PayID over the New Payments Platform",
		MinMinor: money.UnitsOf("AUD", 1), MaxMinor: money.UnitsOf("AUD", 100_000), FeeFixedMinor: 30,
		Params: []param.Param{
			{Name: "pay_id", Type: "string", Mandatory: true, Label: "recipient's PayID (email, phone, ABN or organisation id)", Check: param.Text(256)},
			{Name: "pay_id_type", Type: "string", Mandatory: true, Label: "EMAIL, PHONE, ABN or ORGANISATION_ID", Check: payIDType}}},
	{Code: "jp_bank_jpy", Currency: "JPY", Description: "Japanese bank transfer (Zengin)", BankField: "bank_code", BranchField: "branch_code",
		MinMinor: money.UnitsOf("JPY", 1), MaxMinor: money.UnitsOf("JPY", 100_000_000), FeeFixedMinor: money.UnitsOf("JPY", 250),
		Params: []param.Param{
			{Name: "bank_code", Type: "string", Mandatory: true, Label: "Zengin bank code (4 digits)", Check: matches(zenginBank, "must be a 4-digit Zengin bank code")},
			{Name: "branch_code", Type: "string", Mandatory: true, Label: "Zengin branch code (3 digits)", Check: matches(zenginBranch, "must be a 3-digit Zengin branch code")},
			{Name: "account_number", Type: "string", Mandatory: true, Label: "account number (7 digits)", Check: matches(zenginAccount, "must be 7 digits")},
			{Name: "account_name", Type: "string", Mandatory: true, Label: "account holder's name in katakana", Check: param.Katakana},
			{Name: "account_type", Type: "string", Mandatory: true, Label: "ordinary or current", Check: param.OneOf("ordinary", "current")}}},
	{Code: "vn_bank_vnd", Currency: "VND", Description: "Vietnamese bank transfer (NAPAS)", BankField: "bank_code",
		MinMinor: money.UnitsOf("VND", 10_000), MaxMinor: money.UnitsOf("VND", 500_000_000), FeeBPS: 50,
		Params: []param.Param{
			{Name: "bank_code", Type: "string", Mandatory: true, Label: "NAPAS bank BIN (6 digits)", Check: matches(napasBIN, "must be a 6-digit NAPAS BIN")},
			pAccountNo, pAccountName}},
	{Code: "id_bank_idr", Currency: "IDR", Description: "Indonesian bank transfer", BankField: "bank_code",
		MinMinor: money.UnitsOf("IDR", 10_000), MaxMinor: money.UnitsOf("IDR", 500_000_000), FeeFixedMinor: money.UnitsOf("IDR", 4_000),
		Params: []param.Param{
			{Name: "bank_code", Type: "string", Mandatory: true, Label: "the bank's SWIFT/BIC code (checked by shape: payd ships no Indonesian bank directory)", Check: matches(swiftPattern, "must be a SWIFT/BIC code (for example BMRIIDJA)")},
			pAccountNo, pAccountName,
			{Name: "description", Type: "string", Label: "transfer description", Check: param.Text(140)}}},
	{Code: "kr_bank_krw", Currency: "KRW", Description: "Korean bank transfer", BankField: "bank_code",
		MinMinor: money.UnitsOf("KRW", 1_000), MaxMinor: money.UnitsOf("KRW", 50_000_000), FeeFixedMinor: money.UnitsOf("KRW", 500),
		Params: []param.Param{
			{Name: "bank_code", Type: "string", Mandatory: true, Label: "the bank's code (checked by shape: payd ships no directory for this country)", Check: param.Code},
			pAccountNo, pAccountName}},
	{Code: "us_bank_usd", Currency: "USD", Description: "US dollar bank transfer (SWIFT)",
		MinMinor: money.UnitsOf("USD", 1), MaxMinor: money.UnitsOf("USD", 1_000_000), FeeFixedMinor: money.UnitsOf("USD", 15),
		Params: []param.Param{pSwift, pAccountNo, pAccountName,
			{Name: "address", Type: "string", Mandatory: true, Label: "account holder's address", Check: param.Text(255)}}},
	{Code: "th_bank_thb", Currency: "THB", Description: "Thai bank transfer",
		MinMinor: money.UnitsOf("THB", 300), MaxMinor: money.UnitsOf("THB", 2_000_000), FeeFixedMinor: money.UnitsOf("THB", 10),
		Params: []param.Param{pAccountNo, pAccountName,
			{Name: "description", Type: "string", Mandatory: true, Label: "transfer description", Check: param.Text(140)},
			{Name: "type", Type: "string", Mandatory: true, Label: "individual or corporate", Check: param.OneOf("individual", "corporate")},
			pSwift},
		Rules: []param.Rule{param.NotTaken("bank_code", "give the recipient bank's swift_code instead")}},
	{Code: "ug_bank_ugx", Currency: "UGX", Description: "Ugandan bank transfer", BankField: "bank_code",
		MinMinor: money.UnitsOf("UGX", 15_000), MaxMinor: money.UnitsOf("UGX", 36_000_000), FeeBPS: 150,
		Params: []param.Param{pAccountNo, pAccountName,
			{Name: "bank_code", Type: "string", Mandatory: true, Label: "the bank's code (checked by shape: payd ships no directory for this country)", Check: param.Code},
			{Name: "payment_reason", Type: "string", Mandatory: true, Label: strings.Join(PaymentReasons, ", "), Check: param.OneOf(PaymentReasons...)},
			{Name: "user_type", Type: "string", Mandatory: true, Label: "individual or business", Check: param.OneOf("individual", "business")},
			{Name: "phone", Type: "string", Label: "recipient's phone (individual)", Check: param.Phone},
			{Name: "business_name", Type: "string", Label: "business name (business)", Check: param.Text(200)},
			{Name: "registration_number", Type: "string", Label: "registration number (business)", Check: param.Text(64)}},
		Rules: []param.Rule{param.RequiredWhen("user_type", map[string][]string{
			"individual": {"phone"}, "business": {"business_name", "registration_number"}})}},
}

// methods indexes the catalogue, each method's currency filled in from money.
var methods = param.NewCatalogue("payout", catalogue, func(m *Method) string {
	m.currency = money.MustLookup(m.Currency)
	return m.Code
})

// Lookup finds a method by its code. A code that is not in the catalogue is
// an error that names it.
func Lookup(code string) (Method, error) { return methods.Lookup(code) }

// enabled reports whether an account offers m. accountMethods is the
// account's method setting, shared with payins: nil, or a list naming no
// payout method, means every payout method of the account's currency.
func enabled(m Method, currency string, accountMethods []string) bool {
	if m.Currency != currency {
		return false
	}
	namesPayouts := false
	for _, c := range accountMethods {
		if c == m.Code {
			return true
		}
		if methods.Has(c) {
			namesPayouts = true
		}
	}
	return !namesPayouts
}

// Bank is one bank a method pays into: the banks list of payout_method/params.
type Bank struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	ShortName string `json:"short_name"`
}

// Banks lists, for a method with a BankField, the banks it pays into: the
// directories of package bank implement it (Zengin for JPY, NAPAS for VND, …).
type Banks interface {
	Banks(method string) []Bank
}

// BranchChecker is implemented by a Banks that knows branches (Zengin): a
// jp_bank_jpy branch_code must be one of its bank's branches.
type BranchChecker interface {
	HasBranch(bankCode, branchCode string) bool
}
