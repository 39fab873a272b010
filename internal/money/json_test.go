package money

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestMarshalNumberAndString(t *testing.T) {
	t.Parallel()
	type record struct {
		Balance Number `json:"balance"`
		Amount  String `json:"amount"`
	}
	tests := []struct {
		name  string
		minor int64
		code  string
		want  string
	}{
		{"AUD", 10000, "AUD", `{"balance":100.00,"amount":"100.00"}`},
		{"AUD negative", -505, "AUD", `{"balance":-5.05,"amount":"-5.05"}`},
		{"AUD zero", 0, "AUD", `{"balance":0.00,"amount":"0.00"}`},
		{"JPY", 1000, "JPY", `{"balance":1000,"amount":"1000"}`},
		{"USDC", 1, "USDC", `{"balance":0.000001,"amount":"0.000001"}`},
		{"KWD", 1234, "KWD", `{"balance":1.234,"amount":"1.234"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLookup(t, tt.code)
			b, err := json.Marshal(record{Balance: NumberOf(tt.minor, c), Amount: StringOf(tt.minor, c)})
			got := string(b)
			if got != tt.want || err != nil {
				t.Errorf("json.Marshal = %s, %v; want %s, nil", got, err, tt.want)
			}
		})
	}
}

func TestMarshalNumberIsJSONNumber(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(NumberOf(10050, mustLookup(t, "AUD")))
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", b, err)
	}
	if _, ok := got.(float64); !ok {
		t.Errorf("%s decodes to %T, want a JSON number", b, got)
	}
}

func TestInputUnmarshal(t *testing.T) {
	t.Parallel()
	type request struct {
		Amount Input `json:"amount"`
	}
	tests := []struct {
		name     string
		body     string
		want     Input
		wantZero bool
	}{
		{"number keeps its text", `{"amount": 12.30}`, "12.30", false},
		{"integer", `{"amount": 100}`, "100", false},
		{"negative number with exponent", `{"amount": -0.5e3}`, "-0.5e3", false},
		{"huge number keeps every digit", `{"amount": 123456789012345678901234567890.12}`, "123456789012345678901234567890.12", false},
		{"string", `{"amount": "12.30"}`, "12.30", false},
		{"string with escape", `{"amount": "1\u0030"}`, "10", false},
		{"string is checked later", `{"amount": "abc"}`, "abc", false},
		{"null", `{"amount": null}`, "", true},
		{"absent", `{}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got request
			err := json.Unmarshal([]byte(tt.body), &got)
			if got.Amount != tt.want || got.Amount.IsZero() != tt.wantZero || err != nil {
				t.Errorf("json.Unmarshal(%s) = %q (zero %v), %v; want %q (zero %v), nil",
					tt.body, got.Amount, got.Amount.IsZero(), err, tt.want, tt.wantZero)
			}
		})
	}
}

func TestInputUnmarshalRefuses(t *testing.T) {
	t.Parallel()
	type request struct {
		Amount Input `json:"amount"`
	}
	tests := []struct {
		name string
		body string
	}{
		{"true", `{"amount": true}`},
		{"false", `{"amount": false}`},
		{"object", `{"amount": {}}`},
		{"array", `{"amount": [1]}`},
		{"empty string", `{"amount": ""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got request
			err := json.Unmarshal([]byte(tt.body), &got)
			var typeErr *json.UnmarshalTypeError
			if !errors.As(err, &typeErr) || typeErr.Field != "amount" || !got.Amount.IsZero() {
				t.Errorf("json.Unmarshal(%s) = %q, %v; want a type error naming amount", tt.body, got.Amount, err)
			}
		})
	}
}

// TestInputHugeNumberOutOfRange checks that a number no float could hold is
// kept as text and then refused by Parse as out of range, never rounded.
func TestInputHugeNumberOutOfRange(t *testing.T) {
	t.Parallel()
	var req struct {
		Amount Input `json:"amount"`
	}
	if err := json.Unmarshal([]byte(`{"amount":123456789012345678901234567890.12}`), &req); err != nil {
		t.Fatal(err)
	}
	_, _, err := Parse(string(req.Amount), mustLookup(t, "AUD"))
	if !errors.Is(err, ErrOutOfRange) {
		t.Errorf("Parse(%q) error = %v, want ErrOutOfRange", req.Amount, err)
	}
}

// TestInputNumberNotThroughFloat checks that a number whose float64 value
// differs from its text is parsed from the text.
func TestInputNumberNotThroughFloat(t *testing.T) {
	t.Parallel()
	var req struct {
		Amount Input `json:"amount"`
	}
	// 0.1 + 0.2 style: 9007199254740993 has no float64 representation.
	if err := json.Unmarshal([]byte(`{"amount":90071992547409.93}`), &req); err != nil {
		t.Fatal(err)
	}
	got, rounded, err := Parse(string(req.Amount), mustLookup(t, "AUD"))
	if got != 9007199254740993 || rounded || err != nil {
		t.Errorf("Parse(%q) = %d, %v, %v; want 9007199254740993, false, nil", req.Amount, got, rounded, err)
	}
}
