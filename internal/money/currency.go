// Package money holds exact amounts of money as int64 counts of a currency's
// minor unit, the ISO 4217 minor-unit table that decides their precision, and
// the parsing and formatting rules of the API. No float64 is ever involved, so
// an amount a merchant sends is the amount that is recorded, or it is refused.
package money

import (
	"fmt"
	"slices"
)

// Currency describes one currency payd can hold. Digits is the number of
// decimal places of the minor unit (ISO 4217 exponent: 2 for AUD, 0 for JPY,
// 3 for KWD), which decides how amounts are parsed and formatted. Digits is
// between 0 and 18 for every currency in the table.
type Currency struct {
	Code   string
	Digits int
	Name   string
	Symbol string
}

// currencies is the table of supported currencies, keyed by code. Minor units
// follow ISO 4217 exactly, not CLDR (which gives IDR and TZS no decimals); USDC
// is not an ISO currency and carries the token's 6 decimals.
var currencies = map[string]Currency{
	"AED":  {Code: "AED", Digits: 2, Name: "UAE Dirham", Symbol: "د.إ"},
	"AUD":  {Code: "AUD", Digits: 2, Name: "Australian Dollar", Symbol: "A$"},
	"BDT":  {Code: "BDT", Digits: 2, Name: "Bangladeshi Taka", Symbol: "৳"},
	"BHD":  {Code: "BHD", Digits: 3, Name: "Bahraini Dinar", Symbol: "BD"},
	"BIF":  {Code: "BIF", Digits: 0, Name: "Burundian Franc", Symbol: "FBu"},
	"BRL":  {Code: "BRL", Digits: 2, Name: "Brazilian Real", Symbol: "R$"},
	"CAD":  {Code: "CAD", Digits: 2, Name: "Canadian Dollar", Symbol: "CA$"},
	"CHF":  {Code: "CHF", Digits: 2, Name: "Swiss Franc", Symbol: "CHF"},
	"CLP":  {Code: "CLP", Digits: 0, Name: "Chilean Peso", Symbol: "CLP$"},
	"CNY":  {Code: "CNY", Digits: 2, Name: "Chinese Yuan", Symbol: "CN¥"},
	"CZK":  {Code: "CZK", Digits: 2, Name: "Czech Koruna", Symbol: "Kč"},
	"DJF":  {Code: "DJF", Digits: 0, Name: "Djiboutian Franc", Symbol: "Fdj"},
	"DKK":  {Code: "DKK", Digits: 2, Name: "Danish Krone", Symbol: "kr."},
	"EGP":  {Code: "EGP", Digits: 2, Name: "Egyptian Pound", Symbol: "E£"},
	"EUR":  {Code: "EUR", Digits: 2, Name: "Euro", Symbol: "€"},
	"GBP":  {Code: "GBP", Digits: 2, Name: "Pound Sterling", Symbol: "£"},
	"GHS":  {Code: "GHS", Digits: 2, Name: "Ghanaian Cedi", Symbol: "GH₵"},
	"GNF":  {Code: "GNF", Digits: 0, Name: "Guinean Franc", Symbol: "FG"},
	"HKD":  {Code: "HKD", Digits: 2, Name: "Hong Kong Dollar", Symbol: "HK$"},
	"HUF":  {Code: "HUF", Digits: 2, Name: "Hungarian Forint", Symbol: "Ft"},
	"IDR":  {Code: "IDR", Digits: 2, Name: "Indonesian Rupiah", Symbol: "Rp"},
	"INR":  {Code: "INR", Digits: 2, Name: "Indian Rupee", Symbol: "₹"},
	"ISK":  {Code: "ISK", Digits: 0, Name: "Icelandic Króna", Symbol: "kr"},
	"JOD":  {Code: "JOD", Digits: 3, Name: "Jordanian Dinar", Symbol: "JD"},
	"JPY":  {Code: "JPY", Digits: 0, Name: "Japanese Yen", Symbol: "¥"},
	"KES":  {Code: "KES", Digits: 2, Name: "Kenyan Shilling", Symbol: "KSh"},
	"KHR":  {Code: "KHR", Digits: 2, Name: "Cambodian Riel", Symbol: "៛"},
	"KMF":  {Code: "KMF", Digits: 0, Name: "Comorian Franc", Symbol: "CF"},
	"KRW":  {Code: "KRW", Digits: 0, Name: "South Korean Won", Symbol: "₩"},
	"KWD":  {Code: "KWD", Digits: 3, Name: "Kuwaiti Dinar", Symbol: "KD"},
	"LKR":  {Code: "LKR", Digits: 2, Name: "Sri Lankan Rupee", Symbol: "Rs"},
	"MAD":  {Code: "MAD", Digits: 2, Name: "Moroccan Dirham", Symbol: "DH"},
	"MWK":  {Code: "MWK", Digits: 2, Name: "Malawian Kwacha", Symbol: "MK"},
	"MXN":  {Code: "MXN", Digits: 2, Name: "Mexican Peso", Symbol: "MX$"},
	"MYR":  {Code: "MYR", Digits: 2, Name: "Malaysian Ringgit", Symbol: "RM"},
	"NGN":  {Code: "NGN", Digits: 2, Name: "Nigerian Naira", Symbol: "₦"},
	"NOK":  {Code: "NOK", Digits: 2, Name: "Norwegian Krone", Symbol: "kr"},
	"NZD":  {Code: "NZD", Digits: 2, Name: "New Zealand Dollar", Symbol: "NZ$"},
	"OMR":  {Code: "OMR", Digits: 3, Name: "Omani Rial", Symbol: "RO"},
	"PHP":  {Code: "PHP", Digits: 2, Name: "Philippine Peso", Symbol: "₱"},
	"PKR":  {Code: "PKR", Digits: 2, Name: "Pakistani Rupee", Symbol: "Rs"},
	"PLN":  {Code: "PLN", Digits: 2, Name: "Polish Złoty", Symbol: "zł"},
	"PYG":  {Code: "PYG", Digits: 0, Name: "Paraguayan Guaraní", Symbol: "₲"},
	"RWF":  {Code: "RWF", Digits: 0, Name: "Rwandan Franc", Symbol: "FRw"},
	"SAR":  {Code: "SAR", Digits: 2, Name: "Saudi Riyal", Symbol: "﷼"},
	"SEK":  {Code: "SEK", Digits: 2, Name: "Swedish Krona", Symbol: "kr"},
	"SGD":  {Code: "SGD", Digits: 2, Name: "Singapore Dollar", Symbol: "S$"},
	"THB":  {Code: "THB", Digits: 2, Name: "Thai Baht", Symbol: "฿"},
	"TND":  {Code: "TND", Digits: 3, Name: "Tunisian Dinar", Symbol: "DT"},
	"TRY":  {Code: "TRY", Digits: 2, Name: "Turkish Lira", Symbol: "₺"},
	"TWD":  {Code: "TWD", Digits: 2, Name: "New Taiwan Dollar", Symbol: "NT$"},
	"TZS":  {Code: "TZS", Digits: 2, Name: "Tanzanian Shilling", Symbol: "TSh"},
	"UGX":  {Code: "UGX", Digits: 0, Name: "Ugandan Shilling", Symbol: "USh"},
	"USD":  {Code: "USD", Digits: 2, Name: "US Dollar", Symbol: "$"},
	"USDC": {Code: "USDC", Digits: 6, Name: "USD Coin", Symbol: "USDC"},
	"VND":  {Code: "VND", Digits: 0, Name: "Vietnamese Đồng", Symbol: "₫"},
	"VUV":  {Code: "VUV", Digits: 0, Name: "Vanuatu Vatu", Symbol: "VT"},
	"XAF":  {Code: "XAF", Digits: 0, Name: "Central African CFA Franc", Symbol: "FCFA"},
	"XOF":  {Code: "XOF", Digits: 0, Name: "West African CFA Franc", Symbol: "CFA"},
	"XPF":  {Code: "XPF", Digits: 0, Name: "CFP Franc", Symbol: "₣"},
	"ZAR":  {Code: "ZAR", Digits: 2, Name: "South African Rand", Symbol: "R"},
}

// codes is the sorted list of the table's codes, computed once.
var codes = sortedCodes()

func sortedCodes() []string {
	list := make([]string, 0, len(currencies))
	for code := range currencies {
		list = append(list, code)
	}
	slices.Sort(list)
	return list
}

// Lookup returns the currency with the given code. Codes are matched exactly:
// "aud" or " AUD" is not a currency, so a request that spells a code in lower
// case is refused rather than silently accepted.
// A code that is not a currency is an error that names it.
func Lookup(code string) (Currency, error) {
	c, ok := currencies[code]
	if !ok {
		return Currency{}, fmt.Errorf("%q is not a supported currency", code)
	}
	return c, nil
}

// Codes returns the codes of every supported currency in ascending order. The
// caller owns the returned slice.
func Codes() []string {
	return slices.Clone(codes)
}

// MustLookup is Lookup for tables built at start (the payin and payout
// method catalogues): it panics on a code that is not a currency, which in
// such a table is a bug.
func MustLookup(code string) Currency {
	c, err := Lookup(code)
	if err != nil {
		panic(err)
	}
	return c
}

// UnitsOf is n whole units of the currency code in its minor units (n
// times ten to its digits). It panics, as MustLookup does, on a code that is
// not a currency: it is for tables written in whole units.
func UnitsOf(code string, n int64) int64 {
	return n * int64(pow10[MustLookup(code).digits()])
}

// RoundsOnInput reports whether amounts in c are rounded to the currency's
// precision when they are received. The spec names VND, JPY, XAF, KRW and XOF:
// they are "rounded half away from zero to their precision (0 decimals) and the
// recorded amount is returned"; every other currency refuses an amount with
// more decimals than its minor unit.
func (c Currency) RoundsOnInput() bool {
	switch c.Code {
	case "VND", "JPY", "XAF", "KRW", "XOF":
		return true
	}
	return false
}

// digits returns c.Digits clamped to the range an int64 of minor units can
// express, so that a hand-built Currency can never make parsing or formatting
// index out of range.
func (c Currency) digits() int {
	return clampDigits(c.Digits)
}

func clampDigits(d int) int {
	return min(max(d, 0), maxDigits)
}
