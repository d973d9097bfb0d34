package cip

import "math"

// ival is a closed interval [lo, hi] of reals, computed with outward
// rounding: every operation rounds its lower end down and its upper end
// up by one ulp (math.Nextafter) after the correctly rounded IEEE result,
// so the true value of every expression lies inside its ival. Only +, -,
// *, / are used (correctly rounded by IEEE 754): the exponential is its
// series of positive terms (math.Exp states no error bound on amd64).
type ival struct{ lo, hi float64 }

func dn(v float64) float64 { return math.Nextafter(v, math.Inf(-1)) }
func up(v float64) float64 { return math.Nextafter(v, math.Inf(1)) }

func pt(v float64) ival { return ival{v, v} }

// iv is the interval between two floats that are exact (cell ends).
func iv(lo, hi float64) ival { return ival{lo, hi} }

func (a ival) add(b ival) ival { return ival{dn(a.lo + b.lo), up(a.hi + b.hi)} }
func (a ival) sub(b ival) ival { return ival{dn(a.lo - b.hi), up(a.hi - b.lo)} }
func (a ival) neg() ival       { return ival{-a.hi, -a.lo} }

func (a ival) mul(b ival) ival {
	p := [4]float64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
	lo, hi := p[0], p[0]
	for _, v := range p[1:] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return ival{dn(lo), up(hi)}
}

// scale multiplies by an exactly representable constant.
func (a ival) scale(c float64) ival { return a.mul(pt(c)) }

// div divides by an interval that excludes 0; ok is false otherwise.
func (a ival) div(b ival) (ival, bool) {
	if !(b.lo > 0 || b.hi < 0) {
		return ival{math.Inf(-1), math.Inf(1)}, false
	}
	q := [4]float64{a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi}
	lo, hi := q[0], q[0]
	for _, v := range q[1:] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return ival{dn(lo), up(hi)}, true
}

func (a ival) sqr() ival {
	l, h := math.Abs(a.lo), math.Abs(a.hi)
	if a.lo <= 0 && a.hi >= 0 {
		return ival{0, up(math.Max(l, h) * math.Max(l, h))}
	}
	l, h = math.Min(l, h), math.Max(l, h)
	return ival{dn(l * l), up(h * h)}
}

// expNeg encloses e^-a over a in [lo, hi], 0 <= lo <= hi (both exact):
// 1/e^a, with e^a enclosed by its series of positive terms.
func expNeg(lo, hi float64) ival {
	if lo < 0 || hi < lo {
		panic("expNeg: want 0 <= lo <= hi")
	}
	return ival{dn(1 / expTailAt(hi, 0, 0, true)), up(1 / expTailAt(lo, 0, 0, false))}
}

func hull(a, b ival) ival { return ival{math.Min(a.lo, b.lo), math.Max(a.hi, b.hi)} }

func (a ival) contains(b ival) bool { return a.lo <= b.lo && b.hi <= a.hi }

// clip intersects a with [lo, hi], ends known from the mathematics (a
// variance is at least 0); the result is never empty when a encloses a
// true value inside [lo, hi].
func (a ival) clip(lo, hi float64) ival { return ival{math.Max(a.lo, lo), math.Min(a.hi, hi)} }

// expTail returns an enclosure of sum_{k >= k0} y^(k-shift)/k! over
// y in [y.lo, y.hi], y.lo >= 0, shift <= k0: every term is positive and
// increasing in y, so the lower end is a partial sum at y.lo rounded
// down and the upper end a partial sum at y.hi rounded up plus a
// geometric bound on the rest.
func expTail(y ival, k0, shift int) ival {
	return ival{expTailAt(y.lo, k0, shift, false), expTailAt(y.hi, k0, shift, true)}
}

func expTailAt(y float64, k0, shift int, upward bool) float64 {
	r := dn
	if upward {
		r = up
	}
	// The first term y^(k0-shift)/k0!.
	t := 1.0
	for i := 0; i < k0-shift; i++ {
		t = r(t * y)
	}
	for i := 2; i <= k0; i++ {
		t = r(t / float64(i))
	}
	sum := t
	for k := k0 + 1; ; k++ {
		t = r(r(t*y) / float64(k))
		sum = r(sum + t)
		// Beyond k the ratio of successive terms is y/(j+1) <= y/(k+1);
		// once it is at most 1/2 the rest is at most t.
		if float64(k+1) >= 2*y && (t <= sum*1e-18 || t == 0) {
			if upward {
				// rest <= t * q/(1-q) <= t for q <= 1/2.
				sum = r(sum + t)
			}
			return sum
		}
	}
}
