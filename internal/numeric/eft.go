package numeric

import "math"

// TwoSum returns s = fl(a + b) and e with s + e = a + b exactly (Knuth's
// branch-free TwoSum, valid for any finite a and b without overflow). It
// is the building block of double-double arithmetic, which the exact
// samplers and certified transitions use where float64 alone would lose
// the bits a certificate relies on.
func TwoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// TwoProd returns p = fl(a·b) and e = a·b − p by a fused multiply-add. The
// pair is exact when a·b = 0 or |a·b| ≥ 2^-969; below that e itself is
// rounded to a subnormal, an error of at most 2^-1075.
func TwoProd(a, b float64) (p, e float64) {
	p = a * b
	return p, math.FMA(a, b, -p)
}
