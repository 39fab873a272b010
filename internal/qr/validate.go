package qr

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limits EMVCo MPM puts on the values payd writes, in characters.
const (
	maxMerchantName = 25
	maxMerchantCity = 15
	maxPostalCode   = 10
	// maxAmountChars bounds the transaction amount (ID 54), decimal mark
	// included.
	maxAmountChars = 13
	// maxAdditionalChars bounds each object of the additional data
	// template (ID 62).
	maxAdditionalChars = 25
	// maxGUIDChars bounds the globally unique identifier that opens a
	// merchant account information template.
	maxGUIDChars = 32
)

// ErrInvalidInput is wrapped by every error a builder or Encode returns for
// input the specification does not allow; errors.As with *InputError tells
// which input.
var ErrInvalidInput = errors.New("invalid QR input")

// InputError reports an input that a builder or Encode refused, naming it so
// that an API can point its caller at the field to fix.
type InputError struct {
	// Field names the input: a parameter such as "MerchantName", or for
	// Encode a data object path such as "26.01".
	Field string
	// Reason says what rule the input breaks.
	Reason string
}

// Error returns "invalid Field: Reason".
func (e *InputError) Error() string {
	return "invalid " + e.Field + ": " + e.Reason
}

// Unwrap makes errors.Is(err, ErrInvalidInput) hold for every InputError.
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// firstError returns the first non-nil error of errs, so that a builder
// reports one input at a time, in the order of its parameters.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkDigits requires s to be between minLen and maxLen ASCII digits.
func checkDigits(field, s string, minLen, maxLen int) error {
	switch {
	case s == "":
		return &InputError{Field: field, Reason: "is required"}
	case !isDigits(s) || len(s) < minLen || len(s) > maxLen:
		return &InputError{Field: field, Reason: fmt.Sprintf("%q is not %s digits", s, lengthRange(minLen, maxLen))}
	}
	return nil
}

// checkText requires s to be at most maxLen printable ASCII characters, and
// at least minLen. EMVCo MPM writes names, cities and labels in its "ans"
// character set, printable ASCII; only the alternate-language template may
// carry other scripts.
func checkText(field, s string, minLen, maxLen int) error {
	if s == "" && minLen > 0 {
		return &InputError{Field: field, Reason: "is required"}
	}
	for _, r := range s {
		if r < ' ' || r > '~' {
			return &InputError{Field: field, Reason: fmt.Sprintf("contains %q, which is not printable ASCII", r)}
		}
	}
	switch {
	case len(s) > maxLen:
		return &InputError{Field: field, Reason: fmt.Sprintf("has %d characters, more than %d", len(s), maxLen)}
	case len(s) < minLen:
		return &InputError{Field: field, Reason: fmt.Sprintf("has %d characters, fewer than %d", len(s), minLen)}
	}
	return nil
}

// lengthRange describes a length bound for an error message.
func lengthRange(minLen, maxLen int) string {
	if minLen == maxLen {
		return fmt.Sprint(minLen)
	}
	return fmt.Sprintf("%d to %d", minLen, maxLen)
}

// checkAmount requires amount to be a transaction amount as EMVCo MPM writes
// it (ID 54): digits with "." as the decimal mark, at most 13 characters, here
// also greater than zero, without a leading zero and with at most
// maxDecimals digits after the mark.
func checkAmount(amount string, maxDecimals int) error {
	whole, fraction, hasMark := strings.Cut(amount, ".")
	reason := ""
	switch {
	case amount == "":
		reason = "is required"
	case len(amount) > maxAmountChars:
		reason = fmt.Sprintf("%q has more than %d characters", amount, maxAmountChars)
	case !isDigits(whole) || hasMark && !isDigits(fraction):
		reason = fmt.Sprintf("%q is not a decimal number such as 100 or 100.50", amount)
	case maxDecimals == 0 && hasMark:
		reason = fmt.Sprintf("%q is not a whole number", amount)
	case len(fraction) > maxDecimals:
		reason = fmt.Sprintf("%q has more than %d decimal places", amount, maxDecimals)
	case len(whole) > 1 && whole[0] == '0':
		reason = fmt.Sprintf("%q has a leading zero", amount)
	case strings.Trim(whole+fraction, "0") == "":
		reason = fmt.Sprintf("%q is not greater than zero", amount)
	default:
		return nil
	}
	return &InputError{Field: "Amount", Reason: reason}
}

// twoDecimals checks amount as checkAmount does with two decimals and writes
// it with exactly two, as Thai and Cambodian generators do ("100" becomes
// "100.00").
func twoDecimals(amount string) (string, error) {
	if err := checkAmount(amount, 2); err != nil {
		return "", err
	}
	whole, fraction, _ := strings.Cut(amount, ".")
	fixed := whole + "." + fraction + strings.Repeat("0", 2-len(fraction))
	if len(fixed) > maxAmountChars {
		return "", &InputError{Field: "Amount", Reason: fmt.Sprintf("%q has more than %d characters with two decimals", fixed, maxAmountChars)}
	}
	return fixed, nil
}

// checkMillis requires t to be an instant whose Unix time in milliseconds
// has 13 digits (2001-09-09 to 2286-11-20), the form of KHQR's timestamps.
func checkMillis(field string, t time.Time) error {
	if t.IsZero() {
		return &InputError{Field: field, Reason: "is required"}
	}
	if ms := t.UnixMilli(); ms < 1e12 || ms >= 1e13 {
		return &InputError{Field: field, Reason: fmt.Sprintf("%s is not between 2001 and 2286", t.Format(time.RFC3339))}
	}
	return nil
}

// validate checks the additional data against EMVCo's limits.
func (a AdditionalData) validate() error {
	return firstError(
		checkText("AdditionalData.BillNumber", a.BillNumber, 0, maxAdditionalChars),
		checkText("AdditionalData.ReferenceLabel", a.ReferenceLabel, 0, maxAdditionalChars),
		checkText("AdditionalData.TerminalLabel", a.TerminalLabel, 0, maxAdditionalChars),
		checkText("AdditionalData.Purpose", a.Purpose, 0, maxAdditionalChars),
	)
}

// fields returns the data objects of the additional data template.
func (a AdditionalData) fields() fieldList {
	var l fieldList
	l.add(idBillNumber, a.BillNumber)
	l.add(idReferenceLabel, a.ReferenceLabel)
	l.add(idTerminalLabel, a.TerminalLabel)
	l.add(idPurpose, a.Purpose)
	return l
}

// fieldList collects the data objects of a payload or template, leaving out
// those without a value: EMVCo MPM omits an object rather than send it empty.
type fieldList []Field

func (l *fieldList) add(id, value string) {
	if value != "" {
		*l = append(*l, Field{ID: id, Value: value})
	}
}

func (l *fieldList) addTemplate(id string, sub fieldList) {
	if len(sub) > 0 {
		*l = append(*l, Field{ID: id, Sub: sub})
	}
}

// dynamicHeader starts the payload of a code made for one payment: payload
// format indicator 01 and point of initiation 12.
func dynamicHeader() fieldList {
	return fieldList{
		{ID: idPayloadFormat, Value: payloadFormatV1},
		{ID: idInitiation, Value: string(InitiationDynamic)},
	}
}

// encodeFor encodes the fields a builder assembled, saying which scheme
// failed if Encode refuses them (a template over 99 characters, say).
func encodeFor(scheme string, l fieldList) (string, error) {
	payload, err := Encode(l)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", scheme, err)
	}
	return payload, nil
}
