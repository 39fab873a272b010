package idempotency

import (
	"strings"
	"testing"

	"payd/internal/fault"
)

// TestCheckKey: a key of at most MaxKeyLen characters of text is taken; a
// longer one, or one with a control character or broken UTF-8, is a 422
// VALIDATION_FAILED naming Idempotency-Key, like any other refused field.
func TestCheckKey(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		refused bool
	}{
		{"one character", "k", false},
		{"255 characters", strings.Repeat("k", 255), false},
		{"255 two-byte characters", strings.Repeat("é", 255), false},
		{"a uuid", "3f2b8c1e-9d4a-4e6b-8f0c-2a1d5e7b9c3f", false},
		{"256 characters", strings.Repeat("k", 256), true},
		{"256 two-byte characters", strings.Repeat("é", 256), true},
		{"a NUL", "order\x001", true},
		{"a tab", "order\t1", true},
		{"a line feed", "order\n1", true},
		{"an escape", "order\x1b[31m", true},
		{"broken UTF-8", "order-\xff", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKey(tt.key)
			e, _ := fault.As(err)
			got := e != nil && e.Kind == fault.Invalid && e.Code == fault.CodeValidation && e.Fields["Idempotency-Key"] != ""
			if got != tt.refused || (err != nil) != tt.refused {
				t.Errorf("CheckKey = %v; want refused %v (422 VALIDATION_FAILED naming Idempotency-Key)", err, tt.refused)
			}
		})
	}
}
