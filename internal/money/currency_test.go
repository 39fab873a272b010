package money

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fataler is the part of testing.TB and *rapid.T that mustLookup needs.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// mustLookup returns the currency with the given code or stops the test.
func mustLookup(t fataler, code string) Currency {
	t.Helper()
	c, err := Lookup(code)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", code, err)
	}
	return c
}

func TestLookupDigits(t *testing.T) {
	t.Parallel()
	// The ISO 4217 minor units the brief and the contract rely on; CLDR
	// disagrees for IDR and TZS, so they are spelled out here.
	tests := []struct {
		code string
		want int
	}{
		{"AUD", 2}, {"USD", 2}, {"EUR", 2}, {"GBP", 2}, {"NZD", 2}, {"HKD", 2},
		{"SGD", 2}, {"JPY", 0}, {"KRW", 0}, {"VND", 0}, {"IDR", 2}, {"INR", 2},
		{"THB", 2}, {"PHP", 2}, {"MYR", 2}, {"KHR", 2}, {"UGX", 0}, {"MWK", 2},
		{"TZS", 2}, {"XAF", 0}, {"XOF", 0}, {"NGN", 2}, {"ZAR", 2}, {"KES", 2},
		{"GHS", 2}, {"BRL", 2}, {"CAD", 2}, {"USDC", 6}, {"CHF", 2}, {"CNY", 2},
		{"SEK", 2}, {"NOK", 2}, {"DKK", 2}, {"KWD", 3}, {"BHD", 3}, {"JOD", 3},
		{"OMR", 3}, {"TND", 3}, {"CLP", 0}, {"ISK", 0}, {"PYG", 0}, {"RWF", 0},
		{"XPF", 0}, {"BIF", 0}, {"DJF", 0}, {"GNF", 0}, {"KMF", 0}, {"VUV", 0},
		{"LKR", 2}, {"PKR", 2}, {"BDT", 2}, {"MXN", 2}, {"AED", 2}, {"SAR", 2},
		{"TWD", 2}, {"PLN", 2}, {"CZK", 2}, {"HUF", 2}, {"TRY", 2}, {"EGP", 2},
		{"MAD", 2},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			got := mustLookup(t, tt.code).Digits
			if got != tt.want {
				t.Errorf("Lookup(%q).Digits = %d, want %d", tt.code, got, tt.want)
			}
		})
	}
}

func TestLookupRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		code string
	}{
		{"lower case", "aud"},
		{"mixed case", "Aud"},
		{"lower case four letters", "usdc"},
		{"leading space", " AUD"},
		{"trailing space", "AUD "},
		{"empty", ""},
		{"unknown", "XXX"},
		{"too long", "AUDD"},
		{"too short", "AU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Lookup(tt.code)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.code)) {
				t.Errorf("Lookup(%q) = %v, want an error naming the code", tt.code, err)
			}
		})
	}
}

func TestTableIsConsistent(t *testing.T) {
	t.Parallel()
	for _, code := range Codes() {
		t.Run(code, func(t *testing.T) {
			c := mustLookup(t, code)
			if c.Code != code {
				t.Errorf("Code = %q, want %q", c.Code, code)
			}
			if c.Name == "" || c.Symbol == "" {
				t.Errorf("Name = %q, Symbol = %q, want both set", c.Name, c.Symbol)
			}
			if c.Digits < 0 || c.Digits > maxDigits {
				t.Errorf("Digits = %d, want 0..%d", c.Digits, maxDigits)
			}
		})
	}
}

func TestCodesSortedAndOwned(t *testing.T) {
	t.Parallel()
	got := Codes()
	if !slices.IsSorted(got) {
		t.Errorf("Codes() = %v, not sorted", got)
	}
	if len(got) != len(currencies) {
		t.Errorf("len(Codes()) = %d, want %d", len(got), len(currencies))
	}
	got[0] = "ZZZ"
	if again := Codes(); again[0] == "ZZZ" {
		t.Errorf("Codes() shares its slice with callers")
	}
}

func TestRoundsOnInput(t *testing.T) {
	t.Parallel()
	rounding := []string{"VND", "JPY", "XAF", "KRW", "XOF"}
	for _, code := range Codes() {
		t.Run(code, func(t *testing.T) {
			got := mustLookup(t, code).RoundsOnInput()
			want := slices.Contains(rounding, code)
			if got != want {
				t.Errorf("RoundsOnInput() = %v, want %v", got, want)
			}
		})
	}
}

func TestUnitsOf(t *testing.T) {
	for _, tt := range []struct {
		code string
		n    int64
		want int64
	}{{"USD", 10_000, 1_000_000}, {"JPY", 5, 5}, {"KWD", 1, 1_000}, {"IDR", 0, 0}} {
		if got := UnitsOf(tt.code, tt.n); got != tt.want {
			t.Errorf("UnitsOf(%s, %d) = %d, want %d", tt.code, tt.n, got, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("UnitsOf of a code that is not a currency did not panic")
		}
	}()
	UnitsOf("usd", 1)
}
