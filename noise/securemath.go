package noise

import "math"

// ceilPowerOfTwo returns the smallest power of two >= x for finite x > 0.
// Frexp writes x = f·2^e with f in [0.5, 1); x is a power of two exactly when
// f == 0.5. Working on the exponent keeps the result exact, which the lattice
// samplers rely on.
func ceilPowerOfTwo(x float64) float64 {
	f, e := math.Frexp(x)
	if f == 0.5 {
		return x
	}
	return math.Ldexp(1, e)
}

// roundToMultipleOfPowerOfTwo rounds x to the nearest multiple of g, a power
// of two. x/g and the product are exact (only the exponent changes), so the
// only rounding is the explicit one; ties go away from zero.
func roundToMultipleOfPowerOfTwo(x, g float64) float64 {
	return math.Round(x/g) * g
}

// isPowerOfTwo reports whether x is an exact (possibly negative-exponent)
// power of two.
func isPowerOfTwo(x float64) bool {
	f, _ := math.Frexp(x)
	return f == 0.5
}
