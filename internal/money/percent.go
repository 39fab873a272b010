package money

import (
	"fmt"
	"math"
	"math/bits"
)

// basisPointsPerWhole is the number of basis points in 100 %.
const basisPointsPerWhole = 10_000

// Percent returns basisPoints hundredths of a percent of minor, rounded half
// away from zero to a whole minor unit: Percent(10050, 1000) is the 10 % GST
// on 100.50 AUD, 1005. The product is computed in 128 bits, so it is exact for
// any inputs whose result fits in an int64.
//
// Percent panics if the result does not fit in an int64. That cannot happen
// for |minor| <= MaxMinor and |basisPoints| <= 922_337 (9223 %); rates come
// from configuration, so a larger one is a programming error.
func Percent(minor int64, basisPoints int64) int64 {
	neg := (minor < 0) != (basisPoints < 0)
	hi, lo := bits.Mul64(magnitude(minor), magnitude(basisPoints))
	if hi >= basisPointsPerWhole {
		panic(fmt.Sprintf("money: %d basis points of %d overflows int64", basisPoints, minor))
	}
	q, r := bits.Div64(hi, lo, basisPointsPerWhole)
	roundUp := r >= basisPointsPerWhole/2
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	if q > limit || roundUp && q == limit {
		panic(fmt.Sprintf("money: %d basis points of %d overflows int64", basisPoints, minor))
	}
	if roundUp {
		q++
	}
	if neg {
		return int64(-q)
	}
	return int64(q)
}

// magnitude returns |v| as a uint64, which holds it even for math.MinInt64.
func magnitude(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}
