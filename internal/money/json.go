package money

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Number is an amount written to JSON as a number with the currency's exact
// digits, such as 100.00 or 1000. The contract says that "where the spec types
// an amount as number (balances, balance history, report summaries) it is a
// JSON number written with the same exact digits" as the decimal strings.
type Number struct {
	Minor  int64
	Digits int
}

// NumberOf returns minor units of currency c as a Number.
func NumberOf(minor int64, c Currency) Number {
	return Number{Minor: minor, Digits: c.Digits}
}

// MarshalJSON writes n as an unquoted JSON number, such as 100.00.
func (n Number) MarshalJSON() ([]byte, error) {
	return appendDecimal(nil, n.Minor, clampDigits(n.Digits)), nil
}

// String is an amount written to JSON as a decimal string with the currency's
// precision, such as "100.00" or "1000": the contract's form for amounts in
// resource objects.
type String struct {
	Minor  int64
	Digits int
}

// StringOf returns minor units of currency c as a String.
func StringOf(minor int64, c Currency) String {
	return String{Minor: minor, Digits: c.Digits}
}

// MarshalJSON writes s as a quoted decimal, such as "100.00".
func (s String) MarshalJSON() ([]byte, error) {
	b := append([]byte{'"'}, appendDecimal(nil, s.Minor, clampDigits(s.Digits))...)
	return append(b, '"'), nil
}

// typeError reports a JSON value that is neither a number nor a decimal
// string. It is a *json.UnmarshalTypeError so that encoding/json adds the
// member's name, and the HTTP layer can answer 400 naming it.
func typeError(value string) error {
	return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeOf(Input(""))}
}

// Input is an amount as a request sent it, kept as text until the currency is
// known and Parse can check it. The contract says requests "accept a JSON
// number or a decimal string; they are never parsed through a float", so a
// JSON number keeps its literal text exactly (12.30 stays "12.30") and a JSON
// string keeps its content. The empty Input means the member was absent or
// null.
type Input string

// UnmarshalJSON stores a JSON number's literal text or a JSON string's
// content. JSON null leaves in empty, as if the member were absent. Any other
// JSON value, and the empty string (which is no decimal), is refused with a
// *json.UnmarshalTypeError.
func (in *Input) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case string(data) == "null":
		*in = ""
		return nil
	case len(data) > 0 && data[0] == '"':
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
		if text == "" {
			return typeError("empty string")
		}
		*in = Input(text)
		return nil
	case len(data) > 0 && (data[0] == '-' || '0' <= data[0] && data[0] <= '9'):
		*in = Input(data)
		return nil
	}
	return typeError(jsonKind(data))
}

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(data []byte) string {
	switch {
	case len(data) == 0:
		return "nothing"
	case data[0] == '{':
		return "object"
	case data[0] == '[':
		return "array"
	case data[0] == 't' || data[0] == 'f':
		return "bool"
	}
	return "value"
}

// IsZero reports whether the amount was absent (or null) in the request.
func (in Input) IsZero() bool {
	return in == ""
}

// String is s as a decimal, such as 100.00 (pages print amounts with it).
func (s String) String() string {
	return string(appendDecimal(nil, s.Minor, clampDigits(s.Digits)))
}

// String is n as a decimal, such as 100.00 (pages print amounts with it).
func (n Number) String() string {
	return string(appendDecimal(nil, n.Minor, clampDigits(n.Digits)))
}
