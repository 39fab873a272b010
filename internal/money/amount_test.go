package money

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		text        string
		code        string
		wantMinor   int64
		wantRounded bool
		wantErr     error
	}{
		// Plain decimals in a two-digit currency.
		{"integer", "100", "AUD", 10000, false, nil},
		{"one decimal", "100.5", "AUD", 10050, false, nil},
		{"two decimals", "100.55", "AUD", 10055, false, nil},
		{"negative", "-5.05", "AUD", -505, false, nil},
		{"zero", "0", "AUD", 0, false, nil},
		{"negative zero", "-0", "AUD", 0, false, nil},
		{"negative zero with decimals", "-0.00", "AUD", 0, false, nil},
		{"one cent", "0.01", "AUD", 1, false, nil},
		{"leading zeros", "007", "AUD", 700, false, nil},
		{"trailing zeros are not rounding", "100.500", "AUD", 10050, false, nil},
		{"many trailing zeros", "1.000000000000000000000000", "AUD", 100, false, nil},
		{"too precise", "100.505", "AUD", 0, false, ErrTooPrecise},
		{"too precise below a cent", "0.001", "AUD", 0, false, ErrTooPrecise},
		{"too precise negative", "-0.009", "AUD", 0, false, ErrTooPrecise},

		// Exponents, as JSON numbers may carry them.
		{"exponent", "1e3", "AUD", 100000, false, nil},
		{"negative exponent upper case", "2.5E-1", "AUD", 25, false, nil},
		{"explicit plus exponent", "1E+2", "AUD", 10000, false, nil},
		{"exponent to a cent", "1e-2", "AUD", 1, false, nil},
		{"exponent too precise", "1e-3", "AUD", 0, false, ErrTooPrecise},
		{"exponent with leading zeros", "1e0000000000000000000000000000000000001", "AUD", 1000, false, nil},
		{"zero with largest exponent", "0e30", "AUD", 0, false, nil},
		{"fraction and exponent", "-0.5e3", "AUD", -50000, false, nil},
		{"exponent too large", "1e999", "AUD", 0, false, ErrOutOfRange},
		{"exponent 31", "0e31", "AUD", 0, false, ErrOutOfRange},
		{"exponent -31", "1e-31", "JPY", 0, false, ErrOutOfRange},
		{"exponent very negative", "1e-999", "AUD", 0, false, ErrOutOfRange},
		{"exponent 30 out of range", "1e30", "AUD", 0, false, ErrOutOfRange},

		// Currencies that round half away from zero on input.
		{"JPY rounds half up", "1234.5", "JPY", 1235, true, nil},
		{"JPY rounds negative half away", "-1234.5", "JPY", -1235, true, nil},
		{"JPY rounds down below half", "1234.49", "JPY", 1234, true, nil},
		{"JPY whole with zero fraction", "1234.0", "JPY", 1234, false, nil},
		{"JPY exponent below one", "1e-1", "JPY", 0, true, nil},
		{"JPY exponent -30", "1e-30", "JPY", 0, true, nil},
		{"JPY negative rounds to zero", "-0.4", "JPY", 0, true, nil},
		{"JPY negative half", "-0.5", "JPY", -1, true, nil},
		{"JPY long fraction", "0.000000000000000000000000000000000000005", "JPY", 0, true, nil},
		{"JPY half after many digits", "2.4999999999999999999", "JPY", 2, true, nil},
		{"VND rounds down", "1234.4", "VND", 1234, true, nil},
		{"KRW half", "0.5", "KRW", 1, true, nil},
		{"XAF half", "2.5", "XAF", 3, true, nil},
		{"XOF negative half", "-2.5", "XOF", -3, true, nil},

		// Currencies with other minor units.
		{"USDC micro unit", "0.000001", "USDC", 1, false, nil},
		{"USDC", "1.5", "USDC", 1500000, false, nil},
		{"USDC too precise", "0.0000001", "USDC", 0, false, ErrTooPrecise},
		{"IDR two decimals", "1000.50", "IDR", 100050, false, nil},
		{"IDR too precise", "1000.505", "IDR", 0, false, ErrTooPrecise},
		{"TZS two decimals", "0.01", "TZS", 1, false, nil},
		{"UGX whole", "15000", "UGX", 15000, false, nil},
		{"UGX zero fraction", "1.0", "UGX", 1, false, nil},
		{"UGX does not round", "1.5", "UGX", 0, false, ErrTooPrecise},
		{"KWD three decimals", "1.234", "KWD", 1234, false, nil},
		{"KWD too precise", "1.2345", "KWD", 0, false, ErrTooPrecise},

		// The MaxMinor boundary.
		{"AUD at MaxMinor", "1000000000000000.00", "AUD", MaxMinor, false, nil},
		{"AUD at -MaxMinor", "-1000000000000000", "AUD", -MaxMinor, false, nil},
		{"AUD MaxMinor by exponent", "1e15", "AUD", MaxMinor, false, nil},
		{"AUD above MaxMinor", "1000000000000000.01", "AUD", 0, false, ErrOutOfRange},
		{"AUD below -MaxMinor", "-1000000000000000.01", "AUD", 0, false, ErrOutOfRange},
		{"AUD above MaxMinor with exponent", "1.00000000000000001e15", "AUD", 0, false, ErrOutOfRange},
		{"JPY at MaxMinor", "100000000000000000", "JPY", MaxMinor, false, nil},
		{"JPY rounds down to MaxMinor", "100000000000000000.4", "JPY", MaxMinor, true, nil},
		{"JPY rounds up to MaxMinor", "99999999999999999.5", "JPY", MaxMinor, true, nil},
		{"JPY rounds past MaxMinor", "100000000000000000.5", "JPY", 0, false, ErrOutOfRange},
		{"JPY 10^18", "1000000000000000000", "JPY", 0, false, ErrOutOfRange},
		{"JPY just above int64", "9223372036854775808", "JPY", 0, false, ErrOutOfRange},
		{"JPY far above int64", "-99999999999999999999", "JPY", 0, false, ErrOutOfRange},
		{"USDC at MaxMinor", "100000000000", "USDC", MaxMinor, false, nil},
		{"USDC above MaxMinor", "100000000000.000001", "USDC", 0, false, ErrOutOfRange},
		{"huge with many decimals", "123456789012345678901234567890.12", "AUD", 0, false, ErrOutOfRange},

		// Not decimal numbers.
		{"letters", "abc", "AUD", 0, false, ErrSyntax},
		{"empty", "", "AUD", 0, false, ErrSyntax},
		{"lone point", ".", "AUD", 0, false, ErrSyntax},
		{"trailing point", "1.", "AUD", 0, false, ErrSyntax},
		{"leading point", ".5", "AUD", 0, false, ErrSyntax},
		{"leading plus", "+1", "AUD", 0, false, ErrSyntax},
		{"leading space", " 1", "AUD", 0, false, ErrSyntax},
		{"trailing space", "1 ", "AUD", 0, false, ErrSyntax},
		{"thousands separator", "1,000", "AUD", 0, false, ErrSyntax},
		{"decimal comma", "1,5", "AUD", 0, false, ErrSyntax},
		{"underscore", "1_000", "AUD", 0, false, ErrSyntax},
		{"hex", "0x10", "AUD", 0, false, ErrSyntax},
		{"NaN", "NaN", "AUD", 0, false, ErrSyntax},
		{"Inf", "Inf", "AUD", 0, false, ErrSyntax},
		{"negative Inf", "-Inf", "AUD", 0, false, ErrSyntax},
		{"lone minus", "-", "AUD", 0, false, ErrSyntax},
		{"double minus", "--1", "AUD", 0, false, ErrSyntax},
		{"exponent without digits", "1e", "AUD", 0, false, ErrSyntax},
		{"exponent sign without digits", "1e+", "AUD", 0, false, ErrSyntax},
		{"exponent without mantissa", "e5", "AUD", 0, false, ErrSyntax},
		{"two points", "1.2.3", "AUD", 0, false, ErrSyntax},
		{"fractional exponent", "1e1.5", "AUD", 0, false, ErrSyntax},
		{"non-ASCII digit", "١٢", "AUD", 0, false, ErrSyntax},
		{"currency symbol", "$1", "AUD", 0, false, ErrSyntax},
		{"quoted", `"1"`, "AUD", 0, false, ErrSyntax},
		{"NUL byte", "1\x00", "AUD", 0, false, ErrSyntax},

		// Bounded text length.
		{"64 bytes", "0." + strings.Repeat("0", 61) + "1", "JPY", 0, true, nil},
		{"65 bytes", "0." + strings.Repeat("0", 62) + "1", "JPY", 0, false, ErrOutOfRange},
		{"long digits", strings.Repeat("9", 65), "JPY", 0, false, ErrOutOfRange},
		{"long garbage", strings.Repeat("a", 65), "JPY", 0, false, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotMinor, gotRounded, err := Parse(tt.text, mustLookup(t, tt.code))
			if gotMinor != tt.wantMinor || gotRounded != tt.wantRounded || !errors.Is(err, tt.wantErr) {
				t.Errorf("Parse(%q, %s) = %d, %v, %v; want %d, %v, %v",
					tt.text, tt.code, gotMinor, gotRounded, err, tt.wantMinor, tt.wantRounded, tt.wantErr)
			}
		})
	}
}

func TestParseTooPreciseNamesCurrency(t *testing.T) {
	t.Parallel()
	_, _, err := Parse("1.001", mustLookup(t, "AUD"))
	got := err.Error()
	want := "more decimal places than the currency allows: AUD has 2"
	if got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func TestParseWholeUnits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		text      string
		code      string
		wantMinor int64
		wantErr   error
	}{
		{"AUD", "100", "AUD", 10000, nil},
		{"AUD zero fraction", "100.0", "AUD", 10000, nil},
		{"AUD negative", "-3", "AUD", -300, nil},
		{"AUD exponent", "0.5e1", "AUD", 500, nil},
		{"AUD fraction", "100.5", "AUD", 0, ErrNotWhole},
		{"AUD one cent", "0.01", "AUD", 0, ErrNotWhole},
		{"JPY", "1000", "JPY", 1000, nil},
		{"JPY exponent", "1e2", "JPY", 100, nil},
		{"JPY fraction is not rounded", "100.5", "JPY", 0, ErrNotWhole},
		{"JPY tiny fraction", "1e-30", "JPY", 0, ErrNotWhole},
		{"USDC", "100000", "USDC", 100000000000, nil},
		{"KWD", "7", "KWD", 7000, nil},
		{"AUD at MaxMinor", "1000000000000000", "AUD", MaxMinor, nil},
		{"AUD above MaxMinor", "1000000000000001", "AUD", 0, ErrOutOfRange},
		{"USDC above MaxMinor", "100000000001", "USDC", 0, ErrOutOfRange},
		{"JPY at MaxMinor", "100000000000000000", "JPY", MaxMinor, nil},
		{"JPY above MaxMinor", "100000000000000001", "JPY", 0, ErrOutOfRange},
		{"JPY far above int64", "1e30", "JPY", 0, ErrOutOfRange},
		{"exponent too negative", "1e-31", "JPY", 0, ErrOutOfRange},
		{"syntax", "12 yen", "JPY", 0, ErrSyntax},
		{"empty", "", "JPY", 0, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotMinor, err := ParseWholeUnits(tt.text, mustLookup(t, tt.code))
			if gotMinor != tt.wantMinor || !errors.Is(err, tt.wantErr) {
				t.Errorf("ParseWholeUnits(%q, %s) = %d, %v; want %d, %v",
					tt.text, tt.code, gotMinor, err, tt.wantMinor, tt.wantErr)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		minor    int64
		currency Currency
		want     string
	}{
		{"AUD", 10000, mustLookup(t, "AUD"), "100.00"},
		{"AUD negative", -505, mustLookup(t, "AUD"), "-5.05"},
		{"AUD zero", 0, mustLookup(t, "AUD"), "0.00"},
		{"AUD one cent", 1, mustLookup(t, "AUD"), "0.01"},
		{"AUD minus one cent", -1, mustLookup(t, "AUD"), "-0.01"},
		{"AUD ten cents", 10, mustLookup(t, "AUD"), "0.10"},
		{"AUD MaxMinor", MaxMinor, mustLookup(t, "AUD"), "1000000000000000.00"},
		{"AUD MinInt64", math.MinInt64, mustLookup(t, "AUD"), "-92233720368547758.08"},
		{"JPY", 1000, mustLookup(t, "JPY"), "1000"},
		{"JPY zero", 0, mustLookup(t, "JPY"), "0"},
		{"JPY negative", -1000, mustLookup(t, "JPY"), "-1000"},
		{"JPY MaxInt64", math.MaxInt64, mustLookup(t, "JPY"), "9223372036854775807"},
		{"USDC one micro unit", 1, mustLookup(t, "USDC"), "0.000001"},
		{"USDC", 1500000, mustLookup(t, "USDC"), "1.500000"},
		{"KWD", 1234, mustLookup(t, "KWD"), "1.234"},
		{"IDR", 100050, mustLookup(t, "IDR"), "1000.50"},
		{"negative digits read as none", 12, Currency{Code: "XXX", Digits: -1}, "12"},
		{"digits above 18 read as 18", 1, Currency{Code: "XXX", Digits: 25}, "0.000000000000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Format(tt.minor, tt.currency)
			if got != tt.want {
				t.Errorf("Format(%d, %s) = %q, want %q", tt.minor, tt.currency.Code, got, tt.want)
			}
		})
	}
}

// TestParseFormatRoundTrip checks that every amount within MaxMinor, in every
// currency, comes back from its own formatted text exactly and unrounded.
func TestParseFormatRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		c := mustLookup(t, rapid.SampledFrom(Codes()).Draw(t, "code"))
		m := rapid.Int64Range(-MaxMinor, MaxMinor).Draw(t, "minor")
		text := Format(m, c)
		got, rounded, err := Parse(text, c)
		if got != m || rounded || err != nil {
			t.Fatalf("Parse(%q, %s) = %d, %v, %v; want %d, false, nil", text, c.Code, got, rounded, err, m)
		}
	})
}

// TestParseExponentForms checks that the same amount written with its point
// moved into an exponent ("12345e-2", "1234500e-4") parses to the same value.
func TestParseExponentForms(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		c := mustLookup(t, rapid.SampledFrom(Codes()).Draw(t, "code"))
		m := rapid.Int64Range(-MaxMinor, MaxMinor).Draw(t, "minor")
		zeros := rapid.IntRange(0, maxExponent-c.Digits).Draw(t, "zeros")
		text := fmt.Sprintf("%d%se%d", m, strings.Repeat("0", zeros), -(c.Digits + zeros))
		got, rounded, err := Parse(text, c)
		if got != m || rounded || err != nil {
			t.Fatalf("Parse(%q, %s) = %d, %v, %v; want %d, false, nil", text, c.Code, got, rounded, err, m)
		}
	})
}

// TestParseRefusesExtraDigit checks that a currency that does not round
// refuses an amount with one more nonzero decimal than its minor unit.
func TestParseRefusesExtraDigit(t *testing.T) {
	t.Parallel()
	var strict []string
	for _, code := range Codes() {
		if c := mustLookup(t, code); !c.RoundsOnInput() {
			strict = append(strict, code)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		c := mustLookup(t, rapid.SampledFrom(strict).Draw(t, "code"))
		m := rapid.Int64Range(-MaxMinor+1, MaxMinor-1).Draw(t, "minor")
		d := rapid.IntRange(1, 9).Draw(t, "digit")
		text := withExtraDigit(Format(m, c), c, d)
		got, rounded, err := Parse(text, c)
		if got != 0 || rounded || !errors.Is(err, ErrTooPrecise) {
			t.Fatalf("Parse(%q, %s) = %d, %v, %v; want ErrTooPrecise", text, c.Code, got, rounded, err)
		}
	})
}

// withExtraDigit appends decimal digit d to formatted, which has exactly
// c.Digits decimals.
func withExtraDigit(formatted string, c Currency, d int) string {
	if c.Digits == 0 {
		formatted += "."
	}
	return fmt.Sprintf("%s%d", formatted, d)
}

// TestParseRoundsAgainstModel checks the rounding currencies against an
// integer model: the magnitude a.f (f having k digits) is rounded half away
// from zero to floor((2·v + 10^k) / (2·10^k)) with v = a·10^k + f.
func TestParseRoundsAgainstModel(t *testing.T) {
	t.Parallel()
	rounding := []string{"VND", "JPY", "XAF", "KRW", "XOF"}
	rapid.Check(t, func(t *rapid.T) {
		c := mustLookup(t, rapid.SampledFrom(rounding).Draw(t, "code"))
		a := rapid.Int64Range(0, MaxMinor-1).Draw(t, "whole")
		frac := rapid.StringMatching(`[0-9]{1,8}`).Draw(t, "fraction")
		neg := rapid.Bool().Draw(t, "negative")
		sign := map[bool]string{false: "", true: "-"}[neg]
		text := fmt.Sprintf("%s%d.%s", sign, a, frac)

		scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
		f, _ := new(big.Int).SetString(frac, 10)
		v := new(big.Int).Add(new(big.Int).Mul(big.NewInt(a), scale), f)
		num := new(big.Int).Add(new(big.Int).Lsh(v, 1), scale)
		want := new(big.Int).Quo(num, new(big.Int).Lsh(scale, 1)).Int64()
		if neg {
			want = -want
		}
		wantRounded := f.Sign() != 0

		got, rounded, err := Parse(text, c)
		if got != want || rounded != wantRounded || err != nil {
			t.Fatalf("Parse(%q, %s) = %d, %v, %v; want %d, %v, nil", text, c.Code, got, rounded, err, want, wantRounded)
		}
	})
}

// FuzzParse checks that Parse never panics, keeps every accepted amount within
// MaxMinor, agrees with math/big on the value, and that an unrounded result
// formats to text that parses back to itself.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"100", "100.5", "100.505", "-1234.5", "1e3", "2.5E-1", "1e-3", "1e-1",
		"-0", "007", "1.", ".5", "+1", " 1", "1,000", "0x10", "NaN", "1e999",
		"1000000000000000.00", "100000000000000000.5", "99999999999999999.5",
		"123456789012345678901234567890.12", "0.000001", "1e-30", "0e30",
		"9223372036854775807", "-9223372036854775808",
	}
	for i, s := range seeds {
		f.Add(s, uint8(i))
	}
	codes := Codes()
	f.Fuzz(func(t *testing.T, text string, pick uint8) {
		c := mustLookup(t, codes[int(pick)%len(codes)])
		minor, rounded, err := Parse(text, c)
		if err != nil {
			checkRefusal(t, text, c, err)
			return
		}
		if minor < -MaxMinor || minor > MaxMinor {
			t.Fatalf("Parse(%q, %s) = %d, outside ±MaxMinor", text, c.Code, minor)
		}
		checkAgainstBig(t, text, c, minor, rounded)
		if rounded {
			return
		}
		again, roundedAgain, err := Parse(Format(minor, c), c)
		if again != minor || roundedAgain || err != nil {
			t.Fatalf("Parse(Format(%d, %s)) = %d, %v, %v", minor, c.Code, again, roundedAgain, err)
		}
	})
}

// checkRefusal fails t unless err is one of Parse's errors, and an
// ErrTooPrecise refusal really had digits below the minor unit.
func checkRefusal(t *testing.T, text string, c Currency, err error) {
	t.Helper()
	if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrTooPrecise) && !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("Parse(%q, %s): unexpected error %v", text, c.Code, err)
	}
	if !errors.Is(err, ErrTooPrecise) {
		return
	}
	scaled := scaledRat(t, text, c)
	if scaled.IsInt() || c.RoundsOnInput() {
		t.Fatalf("Parse(%q, %s) = ErrTooPrecise, but the value in minor units is %s", text, c.Code, scaled.RatString())
	}
}

// checkAgainstBig fails t unless minor is text's value in minor units, rounded
// half away from zero when rounded is true.
func checkAgainstBig(t *testing.T, text string, c Currency, minor int64, rounded bool) {
	t.Helper()
	scaled := scaledRat(t, text, c)
	diff := new(big.Rat).Sub(scaled, new(big.Rat).SetInt64(minor))
	half := big.NewRat(1, 2)
	wrongExact := !rounded && diff.Sign() != 0
	wrongRounded := rounded && (diff.Sign() == 0 || new(big.Rat).Abs(diff).Cmp(half) > 0)
	// At exactly one half the result must lie further from zero than the value.
	wrongTie := rounded && new(big.Rat).Abs(diff).Cmp(half) == 0 && diff.Sign() == scaled.Sign()
	if wrongExact || wrongRounded || wrongTie {
		t.Fatalf("Parse(%q, %s) = %d, %v; value in minor units is %s", text, c.Code, minor, rounded, scaled.RatString())
	}
}

// scaledRat returns text's value in minor units of c, computed by math/big.
func scaledRat(t *testing.T, text string, c Currency) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		t.Fatalf("math/big cannot read %q, which Parse accepted", text)
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Digits)), nil)
	return r.Mul(r, new(big.Rat).SetInt(unit))
}
