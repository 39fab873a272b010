package money

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

func TestPercent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		minor       int64
		basisPoints int64
		want        int64
	}{
		{"GST on 100.00", 10000, 1000, 1000},
		{"GST on 100.50", 10050, 1000, 1005},
		{"GST half rounds up", 5, 1000, 1},
		{"GST below half rounds down", 4, 1000, 0},
		{"negative half rounds away", -5, 1000, -1},
		{"negative rate", 5, -1000, -1},
		{"fee 2.9 %", 12345, 290, 358},
		{"fee 2.9 % tie", 50000, 1, 5},
		{"zero rate", 12345, 0, 0},
		{"zero amount", 0, 1000, 0},
		{"100 %", MaxMinor, 10000, MaxMinor},
		{"product beyond int64", MaxMinor, 9000, 90_000_000_000_000_000},
		{"largest safe rate", MaxMinor, 922_337, 9_223_370_000_000_000_000},
		{"MinInt64 at 100 %", math.MinInt64, 10000, math.MinInt64},
		{"MaxInt64 at 100 %", math.MaxInt64, 10000, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Percent(tt.minor, tt.basisPoints)
			if got != tt.want {
				t.Errorf("Percent(%d, %d) = %d, want %d", tt.minor, tt.basisPoints, got, tt.want)
			}
		})
	}
}

// TestPercentAgainstBig checks Percent against a math/big model over the whole
// int64 range: the exact result when it fits in an int64, a panic otherwise.
func TestPercentAgainstBig(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		minor := rapid.OneOf(rapid.Int64(), rapid.Int64Range(-MaxMinor, MaxMinor)).Draw(t, "minor")
		bps := rapid.OneOf(rapid.Int64(), rapid.Int64Range(-20_000, 20_000)).Draw(t, "basisPoints")
		want, fits := percentModel(minor, bps)
		got, panicked := percentOrPanic(minor, bps)
		if panicked == fits || fits && got != want {
			t.Fatalf("Percent(%d, %d) = %d (panicked %v); model %d (fits %v)", minor, bps, got, panicked, want, fits)
		}
	})
}

func TestPercentPanicsOnOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		minor       int64
		basisPoints int64
	}{
		{"MaxInt64 above 100 %", math.MaxInt64, 10001},
		{"MinInt64 negated", math.MinInt64, -10000},
		{"both extreme", math.MinInt64, math.MinInt64},
		// Both round up from exactly the largest magnitude that fits.
		{"rounding past MaxInt64", 9222449791875588249, 10001},
		{"rounding past MinInt64", -9222449791875588250, 10001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := percentOrPanic(tt.minor, tt.basisPoints)
			if !got {
				t.Errorf("Percent(%d, %d) did not panic", tt.minor, tt.basisPoints)
			}
		})
	}
}

// percentModel computes minor·bps/10000 rounded half away from zero with
// math/big, and reports whether it fits in an int64.
func percentModel(minor, bps int64) (int64, bool) {
	product := new(big.Int).Mul(big.NewInt(minor), big.NewInt(bps))
	abs := new(big.Int).Abs(product)
	q, r := new(big.Int).QuoRem(abs, big.NewInt(10_000), new(big.Int))
	if r.Cmp(big.NewInt(5_000)) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if product.Sign() < 0 {
		q.Neg(q)
	}
	return q.Int64(), q.IsInt64()
}

// percentOrPanic calls Percent and reports whether it panicked.
func percentOrPanic(minor, bps int64) (got int64, panicked bool) {
	defer func() {
		panicked = recover() != nil
	}()
	return Percent(minor, bps), false
}
