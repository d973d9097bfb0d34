package cip

import (
	"math"
	"sort"
)

// The proof of PlaceSlopeBounds for Matérn 3/2 (docs/robust-cip.md,
// section 5, "The slope bounds, proved").
//
// Units: lengthscale 1, lambda = sqrt(3), the state (f, g) with g = f'/lambda,
// whose stationary covariance is the identity, and the gap in x = lambda*delta.
// The transition is Phi = E [[1+x, x], [-x, 1-x]] (E = e^-x) and the
// process noise Q = I - Phi Phi'. Given f = 1 at every time so far, the state
// at the last time is (1, g) with g ~ N(m, P); the first time gives (0, 1).
// One more time at gap x, where f = 1 again (an exact observation):
//
//	predicted mean  (mu1, mu2) = Phi (1, m)
//	predicted cov   Sigma = P Phi e2 e2' Phi' + Q
//	m' = mu2 + Sigma12/Sigma11 (1 - mu1),   P' = det(Sigma)/Sigma11.
//
// Near x = 0 the ratios are 0/0; dividing the powers of x out exactly (all
// with series of positive terms, no cancellation) gives, with
// s = x/(P + x) in [0, 1],
//
//	rho = E2 ((1-s)(1-x) + 2s) / ((1-s) E2 + s q11)
//	m'  = -x E + E (1-x) m + rho (a - E m)
//	P'  = ((1-s) c1 + s c2) / ((1-s) E2 + s q11)
//
// where E2 = e^-2x, a = (1 - E(1+x))/x = E sum_{k>=2} x^(k-1)/k!,
// Q11 = E2 sum_{k>=3} (2x)^k/k!, q11 = Q11/x^3, Q12 = 2 x^2 E2,
// Q22 = E2 (4x + sum_{k>=3} (2x)^k/k!), c1 = E2 Q22 + x q11 (1-x)^2 E2 -
// 4x(1-x) E2^2 and c2 = q11 Q22 - 4x E2^2 (= det Q/x^3). For a fixed x, rho
// and P' are Möbius functions of s (their denominators stay positive), so
// their ranges over an interval of s are between their values at its ends;
// m' is bilinear in (rho, m), so its range is between its values at the
// corners. Every x-dependent coefficient is enclosed over the x-cell by
// interval arithmetic. Gaps beyond xTail use the plain formulas with
// x^k e^(-jx) at most its value at xTail (it decreases for x > k/j).
//
// The invariant set S is a union of boxes P-cell x M_k. It contains the
// start (P = 1, m = 0), and the verifier checks that the image of every
// box under every gap cell lies in S, so every reachable (m, P) is in S and
// |m| sqrt(3) <= the largest |M_k| sqrt(3), the bound on |m_1| l.

// m32Coef holds the x-cell's enclosures.
type m32Coef struct {
	x, e, e2, a, xe, omx, q11, c1, c2 ival
}

func m32Coefs(x0, x1 float64) m32Coef {
	x := iv(x0, x1)
	e := expIv(x.neg())
	e2 := expIv(x.scale(-2))
	two := x.scale(2)
	tail3 := expTail(two, 3, 0)
	c := m32Coef{x: x, e: e, e2: e2}
	c.a = e.mul(expTail(x, 2, 1))
	c.xe = x.mul(e)
	c.omx = pt(1).sub(x)
	c.q11 = e2.mul(expTail(two, 3, 3)).scale(8)
	q22 := e2.mul(x.scale(4).add(tail3))
	e22 := e2.sqr()
	c.c1 = e2.mul(q22).add(x.mul(c.q11).mul(c.omx.sqr()).mul(e2)).sub(x.scale(4).mul(c.omx).mul(e22))
	c.c2 = c.q11.mul(q22).sub(x.scale(4).mul(e22))
	return c
}

// image returns enclosures of m' and P' over P in [p0, p1], m in mm and
// x in the cell.
func (c *m32Coef) image(p0, p1 float64, mm ival) (ival, ival, bool) {
	x0, x1 := c.x.lo, c.x.hi
	// s = x/(P + x) over the box: least at (x0, p1), largest at (x1, p0).
	sLo, sHi := 0.0, 1.0
	if x0 > 0 {
		sLo = math.Max(0, dn(x0/up(p1+x0)))
	}
	if p0 > 0 {
		sHi = math.Min(1, up(x1/dn(p0+x1)))
	}
	var rho, pp ival
	for i, sv := range []float64{sLo, sHi} {
		s := pt(sv)
		oms := pt(1).sub(s)
		den := oms.mul(c.e2).add(s.mul(c.q11))
		r, ok := c.e2.mul(oms.mul(c.omx).add(s.scale(2))).div(den)
		if !ok {
			return ival{}, ival{}, false
		}
		q, ok := oms.mul(c.c1).add(s.mul(c.c2)).div(den)
		if !ok {
			return ival{}, ival{}, false
		}
		if i == 0 {
			rho, pp = r, q
		} else {
			rho, pp = hull(rho, r), hull(pp, q)
		}
	}
	var mp ival
	first := true
	for _, r := range []ival{pt(rho.lo), pt(rho.hi)} {
		for _, m := range []ival{pt(mm.lo), pt(mm.hi)} {
			v := c.xe.neg().add(c.e.mul(c.omx).mul(m)).add(r.mul(c.a.sub(c.e.mul(m))))
			if first {
				mp, first = v, false
			} else {
				mp = hull(mp, v)
			}
		}
	}
	// P' is a variance and at most Var(g | f at the last time) = 1.
	return mp, pp.clip(0, 1), true
}

// m32Tail returns enclosures of m' and P' over every gap x >= xt
// (xt >= 2), P in [p0, p1] and m in mm, by the plain formulas.
func m32Tail(xt, p0, p1 float64, mm ival) (ival, ival, bool) {
	// x^k e^(-jx) decreases for x > k/j, so on [xt, inf) it lies in
	// [0, its value at xt].
	at := func(k int, j float64) ival {
		v := up(up(math.Pow(xt, float64(k))) * up(up(math.Exp(-j*xt))))
		return iv(0, v)
	}
	e, xe := at(0, 1), at(1, 1)
	e2, xe2, x2e2 := at(0, 2), at(1, 2), at(2, 2)
	p := iv(p0, p1)
	one := pt(1)
	q11 := one.sub(e2).sub(xe2.scale(2)).sub(x2e2.scale(2))
	s11 := p.mul(x2e2).add(q11)
	s12 := p.mul(xe2.sub(x2e2)).add(x2e2.scale(2))
	s22 := p.mul(e2.sub(xe2.scale(2)).add(x2e2)).add(one.sub(e2).add(xe2.scale(2)).sub(x2e2.scale(2)))
	mu1 := e.add(xe).add(xe.mul(mm))
	mu2 := xe.neg().add(e.sub(xe).mul(mm))
	k, ok := s12.div(s11)
	if !ok {
		return ival{}, ival{}, false
	}
	mp := mu2.add(k.mul(one.sub(mu1)))
	pp := s22.sub(k.mul(s12))
	return mp, pp.clip(0, 1), true
}

// slopeCover is a candidate invariant set: P-cells [pb[k], pb[k+1]], each
// with an m-interval (empty when set[k] is false), and the gap cells.
type slopeCover struct {
	pb    []float64
	m     []ival
	set   []bool
	xb    []float64 // gap cells [xb[i], xb[i+1]], then [xb[last], inf)
	coefs []m32Coef
	widen float64 // how much further a growing side moves
}

func newSlopeCover(np int, xb []float64) *slopeCover {
	c := &slopeCover{xb: xb, widen: 1e-6}
	for k := 0; k <= np; k++ {
		c.pb = append(c.pb, float64(k)/float64(np))
	}
	c.m = make([]ival, np)
	c.set = make([]bool, np)
	for i := 0; i+1 < len(xb); i++ {
		c.coefs = append(c.coefs, m32Coefs(xb[i], xb[i+1]))
	}
	return c
}

// cells returns the first and last P-cells that meet [lo, hi] (cells
// are closed: one that only touches an end counts).
func (c *slopeCover) cells(lo, hi float64) (int, int) {
	n := len(c.m)
	a := max(sort.SearchFloat64s(c.pb, lo)-1, 0) // pb[a+1] >= lo
	b := sort.SearchFloat64s(c.pb, hi)           // pb[b] >= hi > pb[b-1]
	if b > n || c.pb[b] > hi {
		b--
	}
	return a, min(b, n-1)
}

// images calls f with every image box of P-cell k's box.
func (c *slopeCover) images(k int, f func(mp, pp ival) bool) bool {
	p0, p1 := c.pb[k], c.pb[k+1]
	for i := range c.coefs {
		mp, pp, ok := c.coefs[i].image(p0, p1, c.m[k])
		if !ok || !f(mp, pp) {
			return false
		}
	}
	mp, pp, ok := m32Tail(c.xb[len(c.xb)-1], p0, p1, c.m[k])
	return ok && f(mp, pp)
}

// grow runs the cell map from the start until it closes or some |m|
// sqrt(3) exceeds mu (false). Growth is widened by a fraction of the
// interval so that the iteration ends.
func (c *slopeCover) grow(mu float64) bool {
	lim := mu / math.Sqrt(3)
	start := len(c.m) - 1
	c.m[start], c.set[start] = pt(0), true
	dirty := map[int]bool{start: true}
	for len(dirty) > 0 {
		var ks []int
		for k := range dirty {
			ks = append(ks, k)
		}
		sort.Ints(ks)
		dirty = map[int]bool{}
		for _, k := range ks {
			ok := c.images(k, func(mp, pp ival) bool {
				a, b := c.cells(pp.lo, pp.hi)
				for j := a; j <= b; j++ {
					if c.set[j] && c.m[j].contains(mp) {
						continue
					}
					// A side that moves moves a little further, so the
					// iteration ends after few passes.
					nm := ival{mp.lo - c.widen, mp.hi + c.widen}
					if c.set[j] {
						nm = c.m[j]
						if mp.lo < nm.lo {
							nm.lo = mp.lo - c.widen
						}
						if mp.hi > nm.hi {
							nm.hi = mp.hi + c.widen
						}
					}
					if math.Max(-nm.lo, nm.hi) > lim {
						return false
					}
					c.m[j], c.set[j] = nm, true
					dirty[j] = true
				}
				return true
			})
			if !ok {
				return false
			}
		}
	}
	return true
}

// verify checks, independently of grow, that the cover is a proof: the
// start (m, P) = (0, 1) is in it, every box's image under every gap lies
// in the union of the boxes of the P-cells it meets (each of which holds
// the whole image's m-range), and it returns the bound sup |m| sqrt(3)
// rounded up.
func (c *slopeCover) verify() (float64, bool) {
	n := len(c.m)
	if !c.set[n-1] || c.pb[n] != 1 || !c.m[n-1].contains(pt(0)) || c.pb[0] != 0 || c.xb[0] != 0 {
		return 0, false
	}
	sup := 0.0
	for k := range n {
		if !c.set[k] {
			continue
		}
		sup = math.Max(sup, math.Max(-c.m[k].lo, c.m[k].hi))
		ok := c.images(k, func(mp, pp ival) bool {
			a, b := c.cells(pp.lo, pp.hi)
			if a > b {
				return false
			}
			for j := a; j <= b; j++ {
				if !c.set[j] || !c.m[j].contains(mp) {
					return false
				}
			}
			return true
		})
		if !ok {
			return 0, false
		}
	}
	return up(sup * up(math.Sqrt(3))), true
}
