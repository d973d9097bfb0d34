package gp

import "math/big"

// interval is a closed interval [lo, hi] of reals with big.Float end
// points. Every operation rounds lo down and hi up, so the result contains
// every value the operation can take on its arguments: interval arithmetic
// (Moore), used here to compute the whitened Matérn transitions with a
// rigorous error bound. Its end points have precision prec.
type interval struct {
	lo, hi big.Float
}

// ivPrec is the working precision of the interval computations: the
// matrices computed with it are rounded to float64 at the end, so 128 bits
// leave about 70 bits for the widening of intervals over a few hundred
// operations.
const ivPrec = 128

func (z *interval) init(prec uint) *interval {
	z.lo.SetPrec(prec).SetMode(big.ToNegativeInf)
	z.hi.SetPrec(prec).SetMode(big.ToPositiveInf)
	return z
}

// newIv returns [0, 0] at precision prec.
func newIv(prec uint) *interval { return new(interval).init(prec) }

// ivRat returns an enclosure of the rational r.
func ivRat(r *big.Rat, prec uint) *interval {
	z := newIv(prec)
	z.lo.SetRat(r)
	z.hi.SetRat(r)
	return z
}

// ivFloat returns the point interval of x (exact).
func ivFloat(x float64, prec uint) *interval {
	z := newIv(prec)
	z.lo.SetFloat64(x)
	z.hi.SetFloat64(x)
	return z
}

func (z *interval) set(a *interval) *interval {
	z.lo.Set(&a.lo)
	z.hi.Set(&a.hi)
	return z
}

func (z *interval) add(a, b *interval) *interval {
	var lo, hi big.Float
	lo.SetPrec(z.lo.Prec()).SetMode(big.ToNegativeInf).Add(&a.lo, &b.lo)
	hi.SetPrec(z.hi.Prec()).SetMode(big.ToPositiveInf).Add(&a.hi, &b.hi)
	z.lo.Set(&lo)
	z.hi.Set(&hi)
	return z
}

func (z *interval) sub(a, b *interval) *interval {
	var lo, hi big.Float
	lo.SetPrec(z.lo.Prec()).SetMode(big.ToNegativeInf).Sub(&a.lo, &b.hi)
	hi.SetPrec(z.hi.Prec()).SetMode(big.ToPositiveInf).Sub(&a.hi, &b.lo)
	z.lo.Set(&lo)
	z.hi.Set(&hi)
	return z
}

// mul sets z to an enclosure of {x·y : x in a, y in b}: the extremes are
// among the four products of end points, each rounded both ways.
func (z *interval) mul(a, b *interval) *interval { return z.corners(a, b, (*big.Float).Mul) }

// quo sets z to an enclosure of a/b for b > 0 (b.lo > 0), likewise from
// the four quotients of end points.
func (z *interval) quo(a, b *interval) *interval {
	if b.lo.Sign() <= 0 {
		panic("gp: interval division by an interval that is not positive")
	}
	return z.corners(a, b, (*big.Float).Quo)
}

// corners sets z to [min, max] of op over the end points of a and b, each
// rounded down for the minimum and up for the maximum: an enclosure for an
// op monotone in each argument on the intervals (products; quotients by a
// positive interval).
func (z *interval) corners(a, b *interval, op func(z, x, y *big.Float) *big.Float) *interval {
	prec := z.lo.Prec()
	var lo, hi, p big.Float
	first := true
	for _, x := range []*big.Float{&a.lo, &a.hi} {
		for _, y := range []*big.Float{&b.lo, &b.hi} {
			op(p.SetPrec(prec).SetMode(big.ToNegativeInf), x, y)
			if first || p.Cmp(&lo) < 0 {
				lo.Set(&p)
			}
			op(p.SetPrec(prec).SetMode(big.ToPositiveInf), x, y)
			if first || p.Cmp(&hi) > 0 {
				hi.Set(&p)
			}
			first = false
		}
	}
	z.lo.Set(&lo)
	z.hi.Set(&hi)
	return z
}

// sqrtDir returns s >= sqrt(x) if up and s <= sqrt(x) otherwise, for
// x >= 0, at precision prec. big.Float.Sqrt does not promise a rounding direction, so
// a candidate a few ulps off the computed root is checked by squaring it
// exactly and moved further out until the check passes.
func sqrtDir(x *big.Float, prec uint, up bool) *big.Float {
	if x.Sign() == 0 {
		return new(big.Float).SetPrec(prec)
	}
	var s big.Float
	s.SetPrec(prec + 16).Sqrt(x)
	step := new(big.Float).SetMantExp(big.NewFloat(1), -int(prec)+2) // 2^(2-prec)
	var f big.Float
	if up {
		f.SetPrec(prec+16).Add(big.NewFloat(1), step)
	} else {
		f.SetPrec(prec+16).Sub(big.NewFloat(1), step)
	}
	c := new(big.Float).SetPrec(prec)
	for {
		if up {
			c.SetMode(big.ToPositiveInf)
		} else {
			c.SetMode(big.ToNegativeInf)
		}
		c.Mul(&s, &f)
		var sq big.Float
		sq.SetPrec(2*prec+8).Mul(c, c) // exact: c has prec bits
		if (up && sq.Cmp(x) >= 0) || (!up && sq.Cmp(x) <= 0) {
			return c
		}
		s.Set(c)
	}
}

// sqrt sets z to an enclosure of sqrt(a) for a >= 0 (a.lo >= 0).
func (z *interval) sqrt(a *interval) *interval {
	if a.lo.Sign() < 0 {
		panic("gp: interval square root of a negative interval")
	}
	prec := z.lo.Prec()
	lo, hi := sqrtDir(&a.lo, prec, false), sqrtDir(&a.hi, prec, true)
	z.lo.Set(lo)
	z.hi.Set(hi)
	return z
}

// expBounds returns lo <= e^x <= hi for x >= 0, at precision prec.
//
// With x = r·2^s and 0 <= r <= 1/2, e^r = Σ_k r^k/k! and the tail after
// term N is at most term_N·r/(N+1)·1/(1 - r/(N+2)) <= term_N (r <= 1/2), so
// [S_N, S_N + term_N] contains e^r when every partial sum and term is
// rounded in the direction of its end. Squaring s times gives e^x; each
// squaring doubles the relative width, so the sums carry s + 32 guard bits.
func expBounds(x *big.Float, prec uint) (lo, hi *big.Float) {
	if x.Sign() < 0 {
		panic("gp: expBounds of a negative argument")
	}
	s := 0
	if x.Sign() > 0 {
		s = max(0, x.MantExp(nil)+1)
	}
	wp := prec + uint(s) + 32
	var r big.Float
	r.SetPrec(wp).SetMantExp(x, -s) // exact: a power-of-two scaling
	lo = new(big.Float).SetPrec(wp).SetMode(big.ToNegativeInf).SetInt64(1)
	hi = new(big.Float).SetPrec(wp).SetMode(big.ToPositiveInf).SetInt64(1)
	tlo := new(big.Float).SetPrec(wp).SetMode(big.ToNegativeInf).SetInt64(1)
	thi := new(big.Float).SetPrec(wp).SetMode(big.ToPositiveInf).SetInt64(1)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -int(wp)-4)
	var kk big.Float
	for k := int64(1); ; k++ {
		kk.SetInt64(k)
		tlo.Mul(tlo, &r)
		tlo.Quo(tlo, &kk)
		thi.Mul(thi, &r)
		thi.Quo(thi, &kk)
		lo.Add(lo, tlo)
		hi.Add(hi, thi)
		if thi.Cmp(eps) < 0 {
			hi.Add(hi, thi) // the tail
			break
		}
	}
	for range s {
		lo.Mul(lo, lo)
		hi.Mul(hi, hi)
	}
	return lo, hi
}

// expNeg sets z to an enclosure of e^{-a} for a >= 0.
func (z *interval) expNeg(a *interval) *interval {
	if a.lo.Sign() < 0 {
		panic("gp: expNeg of a negative interval")
	}
	prec := z.lo.Prec()
	elo, _ := expBounds(&a.lo, prec) // e^{-a} <= 1/e^{a.lo}
	_, ehi := expBounds(&a.hi, prec) // e^{-a} >= 1/e^{a.hi}
	var one big.Float
	one.SetInt64(1)
	var lo, hi big.Float
	lo.SetPrec(prec).SetMode(big.ToNegativeInf).Quo(&one, ehi)
	hi.SetPrec(prec).SetMode(big.ToPositiveInf).Quo(&one, elo)
	z.lo.Set(&lo)
	z.hi.Set(&hi)
	return z
}

// absMax returns max(|lo|, |hi|), the largest magnitude in the interval.
func (z *interval) absMax() *big.Float {
	var a, b big.Float
	a.Abs(&z.lo)
	b.Abs(&z.hi)
	if a.Cmp(&b) > 0 {
		return &a
	}
	return &b
}
