package numeric

import (
	"math"
	"math/big"
)

// The helpers below round in one known direction, for certificates that
// must bound a real quantity from above (the certified transitions of
// package gp and the exact samplers of package noise): a bound that is
// merely close is not a bound.

// SqrtUp returns a float64 ≥ √x for x ≥ 0. math.Sqrt is correctly rounded
// (IEEE 754), so one step up covers its half-ulp.
func SqrtUp(x float64) float64 {
	if x == 0 {
		return 0
	}
	return math.Nextafter(math.Sqrt(x), math.Inf(1))
}

// FloatUp returns the smallest float64 ≥ x, +Inf beyond the float64 range.
func FloatUp(x *big.Float) float64 {
	f, acc := x.Float64()
	if acc == big.Below {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// PowUp returns an upper bound on θ^j for 0 < θ < 1 and a whole j ≥ 1, by
// binary exponentiation with every product passed through up, which must
// round a float product up to a bound on the exact one (each caller
// inflates by what its own error analysis allows). Partial results below
// 2^-900 are raised to 2^-900, so the products stay clear of underflow and
// the result stays an upper bound (θ^j decreases in j), of about 2^-900 at
// least.
func PowUp(theta, j float64, up func(float64) float64) float64 {
	const floor = 0x1p-900
	result, base := 1.0, theta
	for j >= 1 {
		if math.Mod(j, 2) == 1 {
			if result = up(result * base); result < floor {
				return floor
			}
		}
		j = math.Floor(j / 2)
		if base = up(base * base); base < floor {
			base = floor
		}
	}
	return result
}
