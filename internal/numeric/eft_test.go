package numeric

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exact returns x as a big.Float of enough precision that sums and
// products of two float64s (and of those) are exact.
func exact(x float64) *big.Float { return wide().SetFloat64(x) }

// wide returns a zero big.Float whose operations on float64 operands are
// exact: 2200 bits span the whole float64 exponent range.
func wide() *big.Float { return new(big.Float).SetPrec(2200) }

// TwoSum and TwoProd are error-free: s + e and p + e equal the exact sum
// and product, checked in exact big.Float arithmetic on random operands
// over many binades, with cancellation and ties; e is no more than half
// an ulp of the rounded result.
func TestTwoSumTwoProdExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	draw := func() float64 {
		return math.Ldexp(rng.Float64()+0.5, rng.IntN(200)-100) * float64(1-2*rng.IntN(2))
	}
	cases := [][2]float64{
		{1, 0x1p-53},             // a tie: s rounds to 1, e keeps 2^-53
		{1, -1},                  // exact cancellation
		{0x1p52 + 1, -0x1p52},    // exact
		{math.MaxFloat64 / 4, 1}, // e is the whole of b
		{0, 0},
	}
	for range 20000 {
		a := draw()
		b := draw()
		if rng.IntN(4) == 0 {
			b = -a * (1 + math.Ldexp(rng.Float64(), -40)) // near cancellation
		}
		cases = append(cases, [2]float64{a, b})
	}
	for _, c := range cases {
		a, b := c[0], c[1]
		s, e := TwoSum(a, b)
		if s != a+b {
			t.Fatalf("TwoSum(%g, %g): s = %g, want fl(a+b) = %g", a, b, s, a+b)
		}
		want := wide().Add(exact(a), exact(b))
		if got := wide().Add(exact(s), exact(e)); got.Cmp(want) != 0 {
			t.Fatalf("TwoSum(%g, %g) = %g + %g, not exact", a, b, s, e)
		}
		if s != 0 && math.Abs(e) > math.Abs(s)*0x1p-53 {
			t.Fatalf("TwoSum(%g, %g): |e| = %g above half an ulp of %g", a, b, e, s)
		}
		p, e := TwoProd(a, b)
		if p != a*b {
			t.Fatalf("TwoProd(%g, %g): p = %g, want fl(ab) = %g", a, b, p, a*b)
		}
		want = wide().Mul(exact(a), exact(b))
		if got := wide().Add(exact(p), exact(e)); got.Cmp(want) != 0 {
			t.Fatalf("TwoProd(%g, %g) = %g + %g, not exact", a, b, p, e)
		}
	}
}

// Below 2^-969 the error term of TwoProd is rounded (it is subnormal), but
// by at most 2^-1075: the documented limit, and the reason callers add an
// absolute term for underflow.
func TestTwoProdUnderflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2))
	inexact := 0
	limit := new(big.Float).SetMantExp(big.NewFloat(1), -1075)
	for range 20000 {
		a := math.Ldexp(rng.Float64()+0.5, -500-rng.IntN(40))
		b := math.Ldexp(rng.Float64()+0.5, -500-rng.IntN(40))
		p, e := TwoProd(a, b)
		want := wide().Mul(exact(a), exact(b))
		diff := wide().Sub(want, wide().Add(exact(p), exact(e)))
		if diff.Sign() != 0 {
			inexact++
		}
		if diff.Abs(diff).Cmp(limit) > 0 {
			t.Fatalf("TwoProd(%g, %g): error %g above 2^-1075", a, b, diff)
		}
	}
	if inexact == 0 {
		t.Error("no inexact case in the subnormal range: the test does not reach it")
	}
}
