package money

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxMinor is the largest magnitude, in minor units, of an amount payd accepts:
// 10^17. It is far above any real payment (10^15 AUD, 10^11 USDC) and leaves
// enough headroom below math.MaxInt64 (about 9.2×10^18) that adding a fee, a
// tax or a few such amounts together cannot overflow an int64.
const MaxMinor int64 = 100_000_000_000_000_000

const (
	// maxDigits is the most decimal places a currency may have: MaxMinor
	// needs 18 digits, and 10^18 still fits in an int64.
	maxDigits = 18
	// maxTextBytes bounds the text of an amount. The longest amount within
	// MaxMinor with the most precise currency needs about 20 bytes.
	maxTextBytes = 64
	// maxExponent bounds the exponent of a number such as "1e3", so that no
	// input can make the parser shift digits far.
	maxExponent = 30
)

// Errors returned by Parse and ParseWholeUnits, possibly wrapped; test with
// errors.Is. Each has a stable meaning the HTTP layer can map to an API code.
var (
	// ErrSyntax means the text is not a decimal number: not digits with an
	// optional leading '-', fraction and exponent, as in a JSON number.
	ErrSyntax = errors.New("not a decimal number")
	// ErrTooPrecise means the amount has more decimal places than the
	// currency's minor unit, in a currency that does not round on input.
	ErrTooPrecise = errors.New("more decimal places than the currency allows")
	// ErrOutOfRange means the amount's magnitude exceeds MaxMinor minor
	// units, or its text or exponent is too long to be a real amount.
	ErrOutOfRange = errors.New("amount out of range")
	// ErrNotWhole means an amount that must be in whole units of the
	// currency has a fractional part.
	ErrNotWhole = errors.New("not a whole number of currency units")
)

// pow10 holds the powers of ten up to 10^maxDigits.
var pow10 = func() [maxDigits + 1]uint64 {
	var p [maxDigits + 1]uint64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// Parse converts the text of an amount in currency c into minor units. The
// text is a JSON number or a decimal string: an optional '-', one or more
// digits, optionally '.' and one or more digits, optionally 'e' or 'E' with an
// optional sign and digits ("100", "-5.05", "1e3", "2.5E-1"). Forms JSON
// forbids ("+1", "1.", ".5", " 1", "1,000") are refused with ErrSyntax; leading
// zeros are harmless and accepted.
//
// The contract says: "VND, JPY, XAF, KRW and XOF are rounded half away from
// zero to their precision (0 decimals) and the recorded amount is returned;
// any other currency with more decimals than its minor unit is refused". So
// when digits remain below the minor unit, a currency whose RoundsOnInput is
// true rounds half away from zero and Parse reports rounded = true; any other
// currency gets ErrTooPrecise. Trailing zeros are not extra precision:
// "10.500" AUD is 1050 and not rounded. "-0" is 0.
func Parse(text string, c Currency) (minor int64, rounded bool, err error) {
	n, err := lex(text)
	if err != nil {
		return 0, false, err
	}
	s, err := n.scale(c.digits())
	if err != nil {
		return 0, false, err
	}
	if s.inexact && !c.RoundsOnInput() {
		return 0, false, fmt.Errorf("%w: %s has %d", ErrTooPrecise, c.Code, c.digits())
	}
	if s.half {
		s.whole++
	}
	minor, err = s.signed()
	if err != nil {
		return 0, false, err
	}
	return minor, s.inexact, nil
}

// ParseWholeUnits converts the text of an amount given in whole units of
// currency c (the deposit simulation takes "whole units of the currency, whole
// yen for JPY") into minor units, so that callers always hold minor units:
// "100" AUD is 10000. It accepts what Parse accepts as long as the value is
// whole ("100.0" and "1e2" are 100 units) and refuses any fraction with
// ErrNotWhole, whatever the currency.
func ParseWholeUnits(text string, c Currency) (minor int64, err error) {
	n, err := lex(text)
	if err != nil {
		return 0, err
	}
	s, err := n.scale(0)
	if err != nil {
		return 0, err
	}
	if s.inexact {
		return 0, ErrNotWhole
	}
	unit := pow10[c.digits()]
	if s.whole > uint64(MaxMinor)/unit {
		return 0, ErrOutOfRange
	}
	s.whole *= unit
	return s.signed()
}

// Format writes minor units of currency c as a decimal with exactly c.Digits
// decimal places, as the API returns amounts: 10000 AUD is "100.00", 1000 JPY
// is "1000", -505 AUD is "-5.05" and 1 USDC minor unit is "0.000001".
func Format(minor int64, c Currency) string {
	return string(appendDecimal(nil, minor, c.digits()))
}

// appendDecimal appends minor as a decimal with digits decimal places to dst.
func appendDecimal(dst []byte, minor int64, digits int) []byte {
	magnitude := uint64(minor)
	if minor < 0 {
		dst = append(dst, '-')
		magnitude = -magnitude // also right for math.MinInt64
	}
	text := strconv.FormatUint(magnitude, 10)
	if digits == 0 {
		return append(dst, text...)
	}
	if pad := digits + 1 - len(text); pad > 0 {
		text = strings.Repeat("0", pad) + text
	}
	point := len(text) - digits
	dst = append(dst, text[:point]...)
	dst = append(dst, '.')
	return append(dst, text[point:]...)
}

// number is the text of a decimal number split into its parts; the digit
// strings are not empty and hold only ASCII digits.
type number struct {
	neg      bool
	intPart  string
	fracPart string
	exp      int
}

// lex splits text into the parts of a JSON number, refusing anything else.
func lex(text string) (number, error) {
	var n number
	rest := text
	if strings.HasPrefix(rest, "-") {
		n.neg = true
		rest = rest[1:]
	}
	n.intPart, rest = leadingDigits(rest)
	if n.intPart == "" {
		return number{}, ErrSyntax
	}
	if strings.HasPrefix(rest, ".") {
		n.fracPart, rest = leadingDigits(rest[1:])
		if n.fracPart == "" {
			return number{}, ErrSyntax
		}
	}
	expNeg, expDigits := false, ""
	if strings.HasPrefix(rest, "e") || strings.HasPrefix(rest, "E") {
		rest = rest[1:]
		if strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
			expNeg = rest[0] == '-'
			rest = rest[1:]
		}
		expDigits, rest = leadingDigits(rest)
		if expDigits == "" {
			return number{}, ErrSyntax
		}
	}
	if rest != "" {
		return number{}, ErrSyntax
	}
	if len(text) > maxTextBytes {
		return number{}, ErrOutOfRange
	}
	exp, err := parseExponent(expDigits)
	if err != nil {
		return number{}, err
	}
	if expNeg {
		exp = -exp
	}
	n.exp = exp
	return n, nil
}

// parseExponent converts the digits of an exponent, refusing magnitudes above
// maxExponent.
func parseExponent(digits string) (int, error) {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 2 {
		return 0, ErrOutOfRange
	}
	exp := int(parseDigits(digits))
	if exp > maxExponent {
		return 0, ErrOutOfRange
	}
	return exp, nil
}

// leadingDigits splits s after its leading run of ASCII digits.
func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// parseDigits converts at most 19 ASCII digits to an integer.
func parseDigits(digits string) uint64 {
	var v uint64
	for i := 0; i < len(digits); i++ {
		v = v*10 + uint64(digits[i]-'0')
	}
	return v
}

// scaled is a number multiplied by a power of ten and cut to an integer:
// whole is the integer part of its magnitude, inexact says a nonzero fraction
// was cut off, and half says that fraction was at least one half.
type scaled struct {
	neg     bool
	whole   uint64
	inexact bool
	half    bool
}

// scale multiplies n by 10^shift and cuts the result to an integer. It
// refuses with ErrOutOfRange any value of 10^18 or more, so whole always fits.
func (n number) scale(shift int) (scaled, error) {
	digits := n.intPart + n.fracPart
	// point is how many of digits lie before the decimal point after the
	// shift; it may be negative or beyond the end of digits.
	point := len(n.intPart) + n.exp + shift
	significant := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(significant)
	significant = strings.TrimRight(significant, "0")
	if significant == "" {
		return scaled{}, nil
	}
	if point > maxDigits {
		return scaled{}, ErrOutOfRange
	}
	s := scaled{neg: n.neg}
	switch {
	case point < 0:
		s.inexact = true
	case point == 0:
		s.inexact = true
		s.half = significant[0] >= '5'
	case point >= len(significant):
		s.whole = parseDigits(significant) * pow10[point-len(significant)]
	default:
		s.whole = parseDigits(significant[:point])
		s.inexact = true
		s.half = significant[point] >= '5'
	}
	return s, nil
}

// signed returns the value s stands for, refusing magnitudes above MaxMinor.
func (s scaled) signed() (int64, error) {
	if s.whole > uint64(MaxMinor) {
		return 0, ErrOutOfRange
	}
	if s.neg {
		return -int64(s.whole), nil
	}
	return int64(s.whole), nil
}
