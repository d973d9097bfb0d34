package gp

import (
	"math"
	"math/big"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// ddBall is a ball of reals {v : |v - (x + y)| <= r}: a double-double
// midpoint x + y (two float64s, read exactly) and a float64 radius. It is
// the fast rigorous arithmetic of WhitenedTransition: about 30 times
// cheaper than big.Float intervals, with midpoints good to about 2^-104,
// which is all a result rounded to float64 needs.
//
// Every operation computes its midpoint with error-free transformations
// (TwoSum; TwoProd by fused multiply-add, exact unless the product is below
// 2^-969) where they are exact, bounds the few roundings that remain by
// 2^-53 of the rounded magnitudes (IEEE 754, round to nearest), adds the
// propagated radii, and rounds the radius up (bumpUp). An absolute 2^-1060
// per operation covers underflow. So the true result of the operation on
// any reals in the argument balls lies in the result ball.
type ddBall struct{ x, y, r float64 }

// bumpUp inflates a float sum or product of at most 100 non-negative terms
// so that it bounds the exact value: (1 + 2^-53)^100 < 1 + 2^-45.
func bumpUp(x float64) float64 { return x*(1+0x1p-44) + 0x1p-1060 }

const halfULP = 0x1p-53 // u, the unit roundoff

func (a ddBall) add(b ddBall) ddBall {
	s, e := numeric.TwoSum(a.x, b.x)
	w := a.y + b.y
	t := w + e
	x, y := numeric.TwoSum(s, t)
	// |t - (a.y + b.y + e)| <= u(|w| + |t|); the final TwoSum is exact.
	r := bumpUp(a.r + b.r + halfULP*(math.Abs(w)+math.Abs(t)))
	return ddBall{x, y, r}
}

func (a ddBall) neg() ddBall { return ddBall{-a.x, -a.y, a.r} }

func (a ddBall) mul(b ddBall) ddBall {
	p, e := numeric.TwoProd(a.x, b.x)
	c := a.x * b.y
	d := a.y * b.x
	cd := c + d
	t := cd + e
	x, y := numeric.TwoSum(p, t)
	// Midpoint error: the dropped a.y·b.y and the roundings of c, d, c+d
	// and t (TwoProd and the final TwoSum are exact).
	ma, mb := math.Abs(a.x)+math.Abs(a.y), math.Abs(b.x)+math.Abs(b.y)
	round := math.Abs(a.y)*math.Abs(b.y)*(1+0x1p-50) + halfULP*(math.Abs(c)+math.Abs(d)+math.Abs(cd)+math.Abs(t))
	r := bumpUp(ma*b.r + mb*a.r + a.r*b.r + round)
	return ddBall{x, y, r}
}

// scale2 multiplies by 2^k exactly (no underflow for the magnitudes here).
func (a ddBall) scale2(k int) ddBall {
	return ddBall{math.Ldexp(a.x, k), math.Ldexp(a.y, k), math.Ldexp(a.r, k)}
}

// divFloat divides by the float l != 0. The remainder x - q1·l of a
// correctly rounded quotient q1 is a float, computed exactly by a fused
// multiply-add; then two roundings remain, of rem + y and of the second
// quotient.
func (a ddBall) divFloat(l float64) ddBall {
	q1 := a.x / l
	rem := math.FMA(-q1, l, a.x)
	rem2 := rem + a.y
	q2 := rem2 / l
	x, y := numeric.TwoSum(q1, q2)
	round := halfULP*math.Abs(rem2/l)*(1+0x1p-50) + halfULP*math.Abs(q2)
	return ddBall{x, y, bumpUp(a.r/math.Abs(l)*(1+0x1p-50) + round)}
}

// lower returns a float64 <= every value of the ball.
func (a ddBall) lower() float64 {
	return (a.x + a.y - a.r) - 0x1p-50*(math.Abs(a.x)+math.Abs(a.y)+a.r)
}

// upperAbs returns a float64 >= every |v| in the ball.
func (a ddBall) upperAbs() float64 {
	return bumpUp(math.Abs(a.x) + math.Abs(a.y) + a.r)
}

// nearest rounds the ball's midpoint to the nearest float64 f and returns
// it with dev >= max |f - v| over the ball.
func (a ddBall) nearest() (f, dev float64) {
	f = a.x + a.y
	s, e := numeric.TwoSum(a.x, -f) // s + e = x - f exactly
	w := e + a.y
	v := s + w
	// |v - (x - f + y)| <= u(|w| + |v|).
	return f, bumpUp(math.Abs(v) + halfULP*(math.Abs(w)+math.Abs(v)) + a.r)
}

// ballOf converts a big.Float interval to a ball: midpoint near the
// interval's, rounded to a double-double x + y, and radius
// max(hi - (x+y), (x+y) - lo) computed with upward rounding, so the ball
// contains the interval whatever the midpoint's rounding.
func ballOf(z *interval) ddBall {
	prec := z.lo.Prec() + 2
	var mid, rest, t big.Float
	mid.SetPrec(prec).Add(&z.lo, &z.hi)
	mid.SetMantExp(&mid, -1)
	x, _ := mid.Float64()
	rest.SetPrec(prec).Sub(&mid, t.SetFloat64(x))
	y, _ := rest.Float64()
	var d1, d2 big.Float
	d1.SetPrec(prec).SetMode(big.ToPositiveInf).Sub(&z.hi, t.SetFloat64(x))
	d1.Sub(&d1, t.SetFloat64(y))
	d2.SetPrec(prec).SetMode(big.ToPositiveInf).Add(t.SetFloat64(x), new(big.Float).SetFloat64(y))
	d2.Sub(&d2, &z.lo)
	if d1.Cmp(&d2) < 0 {
		d1.Set(&d2)
	}
	if d1.Sign() < 0 { // cannot happen: x + y lies between lo and hi up to rounding
		d1.SetInt64(0)
	}
	return ddBall{x, y, bumpUp(numeric.FloatUp(&d1))}
}

// expNegTerms is the degree of the Taylor polynomial of e^-w for |w| <=
// 1/2 + tiny: the remainder is at most 2|w|^28/28! < 2^-119.
const expNegTerms = 27

// expNegRemainder bounds the Taylor remainder above (Lagrange:
// |w|^(N+1)/(N+1)!·e^|w| <= 2·(0.5001)^28/28!).
const expNegRemainder = 0x1p-119

// invInts[k] encloses 1/k for k = 1..expNegTerms.
var invInts = func() []ddBall {
	out := make([]ddBall, expNegTerms+1)
	for k := 1; k <= expNegTerms; k++ {
		out[k] = ballOf(ivRat(big.NewRat(1, int64(k)), ivPrec))
	}
	return out
}()

// expNeg returns a ball containing e^-v for every v in u, for u within
// [-1/1024, 600]: with u = w·2^s and |w| <= 1/2, the Taylor polynomial of
// e^-w of degree 27 (ball arithmetic encloses its range on the ball of w,
// and the remainder is below 2^-119), raised to the power 2^s by squaring.
func (u ddBall) expNeg() ddBall {
	s := 0
	if m := u.upperAbs(); m > 0.5 {
		_, s = math.Frexp(m) // m < 2^s
		s++                  // so |w| < 1/2
	}
	w := u.scale2(-s).neg() // -u·2^-s
	sum := ddBall{1, 0, 0}
	term := ddBall{1, 0, 0}
	for k := 1; k <= expNegTerms; k++ {
		term = term.mul(w).mul(invInts[k])
		sum = sum.add(term)
	}
	sum.r = bumpUp(sum.r + expNegRemainder)
	for range s {
		sum = sum.mul(sum)
	}
	return sum
}
