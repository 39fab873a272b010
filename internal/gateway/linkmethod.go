package gateway

import (
	"fmt"
	"slices"

	"payd/internal/money"
)

// MethodKind is how a customer pays a payin link, which decides its page.
type MethodKind string

const (
	// KindCard: a card form (sandbox cards 4242… pay, 4000…0002 is declined).
	KindCard MethodKind = "card"
	// KindBank: a bank transfer to the merchant's account, with the link's
	// uuid as reference.
	KindBank MethodKind = "bank_transfer"
	// KindKHQR: a KHQR code (National Bank of Cambodia) to scan.
	KindKHQR MethodKind = "khqr"
)

// LinkMethod is one way to pay a payin link, as data: the catalogue below
// is the only place a Payment Gateway 3 method is defined.
type LinkMethod struct {
	Code        string
	Currency    string
	Kind        MethodKind
	Description string
	// MinMinor and MaxMinor bound the amount, in minor units of Currency.
	MinMinor, MaxMinor int64
	// OffByDefault methods must be enabled per account (ug_bank_ugx).
	OffByDefault bool
	currency     money.Currency
}

// linkMethods are the methods of Payment Gateway 3 (spec "Currency rules"
// 2 and 3, CONTRACT §11). The spec gives the MWK minimum (2,000) and the UGX
// range (15,000 to 36,000,000); the other bounds are what such rails
// commonly take.
var linkMethods = []LinkMethod{
	{Code: "nz_card_nzd", Currency: "NZD", Kind: KindCard, Description: "Card (New Zealand dollars)",
		MinMinor: money.UnitsOf("NZD", 1), MaxMinor: money.UnitsOf("NZD", 100_000)},
	{Code: "hk_card_hkd", Currency: "HKD", Kind: KindCard, Description: "Card (Hong Kong dollars)",
		MinMinor: money.UnitsOf("HKD", 5), MaxMinor: money.UnitsOf("HKD", 800_000)},
	{Code: "mw_bank_mwk", Currency: "MWK", Kind: KindBank, Description: "Malawi bank transfer",
		MinMinor: money.UnitsOf("MWK", 2_000), MaxMinor: money.UnitsOf("MWK", 50_000_000)},
	{Code: "tz_bank_tzs", Currency: "TZS", Kind: KindBank, Description: "Tanzania bank transfer",
		MinMinor: money.UnitsOf("TZS", 1_000), MaxMinor: money.UnitsOf("TZS", 50_000_000)},
	{Code: "kh_khqr_usd", Currency: "USD", Kind: KindKHQR, Description: "KHQR (Bakong) in US dollars",
		MinMinor: money.UnitsOf("USD", 1), MaxMinor: money.UnitsOf("USD", 10_000)},
	{Code: "ug_bank_ugx", Currency: "UGX", Kind: KindBank, Description: "Uganda bank transfer",
		MinMinor: money.UnitsOf("UGX", 15_000), MaxMinor: money.UnitsOf("UGX", 36_000_000), OffByDefault: true},
}

var linkMethodByCode = func() map[string]LinkMethod {
	out := map[string]LinkMethod{}
	for i, m := range linkMethods {
		c, err := money.Lookup(m.Currency)
		if err != nil {
			panic("payin link catalogue: " + err.Error())
		}
		if _, dup := out[m.Code]; dup {
			panic(fmt.Sprintf("payin link catalogue: %s twice", m.Code))
		}
		linkMethods[i].currency = c
		out[m.Code] = linkMethods[i]
	}
	return out
}()

// LookupLinkMethod finds a Payment Gateway 3 method by its code.
func LookupLinkMethod(code string) (LinkMethod, bool) {
	m, ok := linkMethodByCode[code]
	return m, ok
}

// enabledOn reports whether an account with the given method settings
// offers m: its listed methods, or, when it lists none, every method that is
// not off by default (the rule payin methods follow too).
func (m LinkMethod) enabledOn(accountMethods []string) bool {
	if accountMethods == nil {
		return !m.OffByDefault
	}
	return slices.Contains(accountMethods, m.Code)
}
