package web_test

import (
	"testing"

	"payd/internal/money"
	"payd/internal/web"
)

// TestLineTotal: an order line's total is quantity × price in minor
// units, rounded half away from zero; what does not read as a quantity or
// a price has none.
func TestLineTotal(t *testing.T) {
	t.Parallel()
	aud := money.MustLookup("AUD")
	for _, tt := range []struct {
		quantity, price string
		want            int64
		ok              bool
	}{
		{"2", "12.50", 2500, true},
		{"1.5", "0.99", 149, true},   // 1.485 → 1.49
		{"0.3333", "1.00", 33, true}, // 0.3333
		{"0.0001", "0.01", 0, true},
		{"3", "0", 0, true},
		{"0", "5.00", 0, false},
		{"two", "5.00", 0, false},
		{"1", "5.001", 0, false},
		{"1.00001", "5.00", 0, false},
	} {
		got, ok := web.LineTotal(tt.quantity, tt.price, aud)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s × %s = %d, %v; want %d, %v", tt.quantity, tt.price, got, ok, tt.want, tt.ok)
		}
	}
}
