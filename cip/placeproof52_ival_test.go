package cip

// The interval step of Matérn 5/2's slope recursion: the foundation a
// proof of its PlaceSlopeBounds needs (docs/robust-cip.md, section 5,
// "Matérn 5/2: what closes and what does not"). It is exact in interval
// arithmetic at every gap x > 0, the smallest included, because every
// power of x that makes a ratio 0/0 is divided out by hand and every
// process-noise entry is a series of positive terms (below x = 1; above,
// its closed form, largeGapNoise).
//
// Units as in placeproof52_test.go: lengthscale 1, r = sqrt(5), the state
// (f, g1, g2) = (f, f'/r, f''/r^2), the gap x = r delta. Phi = e^-x (I +
// x N + x^2 N^2/2), N = [[1,1,0],[0,1,1],[-1,-3,-2]]; the process noise is
// Q = (16/3) int_0^x phi phi' ds with phi(s) = e^-s (s^2/2, s - s^2/2,
// 1 - 2s + s^2/2) (the last column of e^(Fs)), so every entry is a
// combination of I_k = int_0^x s^k e^-2s ds = k!/2^(k+1) e^-2x
// sum_{j>k} (2x)^j/j!, positive series enclosed without cancellation.
//
// Given f = 1 at every time so far, the derivatives at the last time are
// N(m, P); one more time at gap x (f = 1 again) gives, with the first row
// of Phi's derivative columns b = x e u, u = (1 + x, x/2), and
// 1 - mu_1 = x e (t3 - u'm), t3 = sum_{k>=3} x^(k-1)/k!:
//
//	D  = u'P u + w,             w = Q00/(x e)^2 (= 4 x^3/15 + ...)
//	v  = B P u + q,             q = Q[1:,0]/(x e), B = Phi[1:,1:]
//	m' = Phi[1:,0] + B m + v (t3 - u'm)/D
//	P' = B R B' + Qd - (B P u q' + q (B P u)' + q q')/D,
//	R  = (det(P) (Ju)(Ju)' + w P)/D   (= P - P u u'P/D exactly; Ju = (-u1, u0))
//
// so the P^2 terms that cancel in P - P u u'P/D never appear.

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// m52Num is the arithmetic the step runs in: ival (enclosures of values)
// or m52Dual (enclosures of values and of their derivatives in the gap,
// for the centred form, placeproof52_centred_test.go).
type m52Num[T any] interface {
	add(T) T
	sub(T) T
	mul(T) T
	scale(float64) T
	neg() T
	sqr() T
	div(T) (T, bool)
	clip(lo, hi float64) T
	floor0() T
}

// m52Gap gives a gap cell's elementary functions in the arithmetic T.
type m52Gap[T any] interface {
	c(v float64) T
	x() T
	expNeg(k float64) T              // e^(-k x), k = 1 or 2
	tail(k float64, k0, shift int) T // sum_{j >= k0} (k x)^(j-shift)/j!
}

// ivalGap is the gap cell [x0, x1] in interval arithmetic.
type ivalGap struct{ x0, x1 float64 }

func (g ivalGap) c(v float64) ival { return pt(v) }
func (g ivalGap) x() ival          { return iv(g.x0, g.x1) }
func (g ivalGap) expNeg(k float64) ival {
	return expNeg(k*g.x0, k*g.x1) // k = 1 or 2: exact products
}
func (g ivalGap) tail(k float64, k0, shift int) ival {
	return expTail(iv(g.x0, g.x1).scale(k), k0, shift)
}

// floor0 raises a lower end below 0 to 0: for a determinant of a
// covariance.
func (a ival) floor0() ival {
	if a.lo < 0 {
		a.lo = 0
	}
	return a
}

// m52Coef holds the gap cell's enclosures.
type m52Coef = m52CoefIn[ival]

type m52CoefIn[T m52Num[T]] struct {
	u    [2]T    // (1 + x, x/2)
	t3   T       // sum_{k>=3} x^(k-1)/k!
	w    T       // Q00/(x e)^2
	q    [2]T    // Q[1:,0]/(x e)
	qd   [3]T    // Q11, Q12, Q22 (derivative block)
	b    [2][2]T // Phi[1:,1:]
	phi0 [2]T    // Phi[1:,0]
}

// m52Coefs encloses the coefficients over gaps [x0, x1]; wScale is 1
// except in the negative controls (w off by a factor), which check that
// the tests of the step can fail.
func m52Coefs(x0, x1, wScale float64) m52Coef {
	return m52CoefsOn[ival](ivalGap{x0, x1}, x0 >= 1, wScale)
}

// m52CoefsOn computes the coefficients on the gap cell g; large selects
// the process noise's closed forms (largeGapNoise), for cells from x = 1.
func m52CoefsOn[T m52Num[T]](g m52Gap[T], large bool, wScale float64) m52CoefIn[T] {
	x := g.x()
	e := g.expNeg(1)
	one := g.c(1)
	var c m52CoefIn[T]
	c.u = [2]T{one.add(x), x.scale(0.5)}
	c.t3 = g.tail(1, 3, 1)
	// w = Q00/(x e)^2 = (16/3)(1/4) I_4/(x^2 e^2) = 4 sum_{j>=5} (2x)^(j-2)/j!.
	c.w = g.tail(2, 5, 2).scale(4).scale(wScale)
	// I_k e^2x = k!/2^(k+1) S_(k+1), S_k = sum_{j>=k} (2x)^j/j!.
	fact := []float64{1, 1, 2, 6, 24}
	ik := func(k int, shift int) T { // I_k e^2x / x^shift (shift <= k+1)
		// (2x)^j / x^shift = 2^shift (2x)^(j-shift)
		return g.tail(2, k+1, shift).scale(fact[k] / math.Pow(2, float64(k+1)) * math.Pow(2, float64(shift)))
	}
	const q = 16.0 / 3
	// Q[1,0] = q (I_3/2 - I_4/4), Q[2,0] = q (I_2/2 - I_3 + I_4/4); over x e:
	// e^-2x / e^-x = e, and one power of x divided out.
	c.q[0] = e.mul(ik(3, 1).scale(0.5).sub(ik(4, 1).scale(0.25))).scale(q)
	c.q[1] = e.mul(ik(2, 1).scale(0.5).sub(ik(3, 1)).add(ik(4, 1).scale(0.25))).scale(q)
	e2 := g.expNeg(2)
	// Q11 = q (I_2 - I_3 + I_4/4), Q12 = q (I_1 - 5/2 I_2 + 3/2 I_3 - I_4/4),
	// Q22 = q (I_0 - 4 I_1 + 5 I_2 - 2 I_3 + I_4/4).
	i0 := g.tail(2, 1, 0).scale(0.5)
	c.qd[0] = e2.mul(ik(2, 0).sub(ik(3, 0)).add(ik(4, 0).scale(0.25))).scale(q)
	c.qd[1] = e2.mul(ik(1, 0).sub(ik(2, 0).scale(2.5)).add(ik(3, 0).scale(1.5)).sub(ik(4, 0).scale(0.25))).scale(q)
	c.qd[2] = e2.mul(i0.sub(ik(1, 0).scale(4)).add(ik(2, 0).scale(5)).sub(ik(3, 0).scale(2)).add(ik(4, 0).scale(0.25))).scale(q)
	if large {
		c.largeGapNoise(g, e, e2, wScale)
	}
	x2 := x.sqr().scale(0.5)
	c.b = [2][2]T{
		{e.mul(one.add(x).sub(x2.scale(2))), e.mul(x.sub(x2))},
		{e.mul(x.scale(-3).add(x2.scale(2))), e.mul(one.sub(x.scale(2)).add(x2))},
	}
	c.phi0 = [2]T{e.mul(x2).neg(), e.mul(x2.sub(x))}
	return c
}

// largeGapNoise replaces, for gaps x >= 1, the process noise's series
// forms (e^-2x times series growing like e^2x, enclosed separately, which
// widens them across a gap cell) by the closed forms I_k = k!/2^(k+1)
// (1 - e^-2x sum_{j<=k} (2x)^j/j!), whose only x-dependent part is small.
func (c *m52CoefIn[T]) largeGapNoise(g m52Gap[T], e, e2 T, wScale float64) {
	x := g.x()
	fact := []float64{1, 1, 2, 6, 24}
	var i [5]T
	for k := range 5 {
		poly, term := g.c(0), g.c(1)
		for j := 0; j <= k; j++ {
			if j > 0 {
				term = term.mul(x.scale(2)).scale(1 / float64(j))
			}
			poly = poly.add(term)
		}
		i[k] = g.c(1).sub(e2.mul(poly)).scale(fact[k] / math.Pow(2, float64(k+1)))
	}
	const q = 16.0 / 3
	q00 := i[4].scale(q / 4)
	q10 := i[3].scale(0.5).sub(i[4].scale(0.25)).scale(q)
	q20 := i[2].scale(0.5).sub(i[3]).add(i[4].scale(0.25)).scale(q)
	xe := x.mul(e)
	var ok1, ok2, ok3 bool
	c.q[0], ok1 = q10.div(xe)
	c.q[1], ok2 = q20.div(xe)
	c.w, ok3 = q00.div(xe.sqr())
	if !ok1 || !ok2 || !ok3 {
		panic("largeGapNoise: x e^-x encloses 0")
	}
	c.w = c.w.scale(wScale)
	c.qd[0] = i[2].sub(i[3]).add(i[4].scale(0.25)).scale(q)
	c.qd[1] = i[1].sub(i[2].scale(2.5)).add(i[3].scale(1.5)).sub(i[4].scale(0.25)).scale(q)
	c.qd[2] = i[0].sub(i[1].scale(4)).add(i[2].scale(5)).sub(i[3].scale(2)).add(i[4].scale(0.25)).scale(q)
}

// step returns enclosures of m' and P' = (P11, P12, P22) for m in the box
// mm and P in the box p (used on one-point boxes by the tests here).
func (c *m52CoefIn[T]) step(mm [2]T, p [3]T) ([2]T, [3]T, bool) {
	u := c.u
	pu := [2]T{p[0].mul(u[0]).add(p[1].mul(u[1])), p[1].mul(u[0]).add(p[2].mul(u[1]))}
	upu := u[0].mul(pu[0]).add(u[1].mul(pu[1]))
	d := upu.add(c.w)
	var bpu, v [2]T
	for i := range 2 {
		bpu[i] = c.b[i][0].mul(pu[0]).add(c.b[i][1].mul(pu[1]))
		v[i] = bpu[i].add(c.q[i])
	}
	res := c.t3.sub(u[0].mul(mm[0]).add(u[1].mul(mm[1])))
	var m2 [2]T
	var p2 [3]T
	for i := range 2 {
		g, ok := v[i].mul(res).div(d)
		if !ok {
			return m2, p2, false
		}
		m2[i] = c.phi0[i].add(c.b[i][0].mul(mm[0])).add(c.b[i][1].mul(mm[1])).add(g)
	}
	det := p[0].mul(p[2]).sub(p[1].sqr()).floor0() // P is a covariance
	ju := [2]T{u[1].neg(), u[0]}
	var r [3]T // R11, R12, R22
	for k, ij := range [3][2]int{{0, 0}, {0, 1}, {1, 1}} {
		num := det.mul(ju[ij[0]]).mul(ju[ij[1]]).add(c.w.mul(p[k]))
		var ok bool
		if r[k], ok = num.div(d); !ok {
			return m2, p2, false
		}
	}
	rm := func(i, j int) T {
		if i > j {
			i, j = j, i
		}
		return r[i+j]
	}
	for k, ij := range [3][2]int{{0, 0}, {0, 1}, {1, 1}} {
		i, j := ij[0], ij[1]
		s := c.qd[k]
		for a := range 2 {
			for bb := range 2 {
				s = s.add(c.b[i][a].mul(rm(a, bb)).mul(c.b[j][bb]))
			}
		}
		cross := bpu[i].mul(c.q[j]).add(c.q[i].mul(bpu[j])).add(c.q[i].mul(c.q[j]))
		cr, ok := cross.div(d)
		if !ok {
			return m2, p2, false
		}
		p2[k] = s.sub(cr)
	}
	// Variances: at least 0, at most those given f at the last time alone.
	p2[0], p2[2] = p2[0].clip(0, 1.0/3), p2[2].clip(0, 8.0/9)
	return m2, p2, true
}

// m52Start is (m, P) after the first time: the derivatives given f = 1.
func m52Start() ([2]ival, [3]ival) {
	return [2]ival{pt(0), pt(-1.0 / 3)}, [3]ival{pt(1.0 / 3), pt(0), pt(8.0 / 9)}
}

// m52ChainIval runs the interval step along scaled gaps xs from the start,
// each on a one-point cell.
func m52ChainIval(t *testing.T, xs []float64, wScale float64) ([2]ival, [3]ival) {
	t.Helper()
	m, p := m52Start()
	for _, x := range xs {
		c := m52Coefs(x, x, wScale)
		var ok bool
		if m, p, ok = c.step(m, p); !ok {
			t.Fatalf("gap %v: a denominator contains 0", x)
		}
	}
	return m, p
}

// dense52 returns denseDerivs' means of (g1, g2) and their covariance
// (P11, P12, P22) in the scaled units.
func dense52(ts []float64) ([2]float64, [3]float64, bool) {
	m, p, ok := denseDerivs(gp.KernelMatern52, ts, 2)
	if !ok {
		return [2]float64{}, [3]float64{}, false
	}
	s5 := math.Sqrt(5)
	return [2]float64{m[0] / s5, m[1] / 5}, [3]float64{p[0] / 5, p[1] / (5 * s5), p[3] / 25}, true
}

func ivalNear(r ival, v, tol float64) bool { return r.lo <= v+tol && r.hi >= v-tol }

// TestPlaceSlopeStep52Ival checks that the interval step is the
// conditioning it claims to be: on random samplings (gaps 0.05 to 20
// lengthscales) the chained enclosures of m and P contain the dense
// conditional means and covariance of the derivatives (up to the dense
// solve's rounding), and are tight; with w off by 0.5 % (negative control)
// they miss.
func TestPlaceSlopeStep52Ival(t *testing.T) {
	t.Parallel()
	run := func(perturbed bool) (misses, trials int) {
		rng := rand.New(rand.NewPCG(52, 11))
		for trial := 0; trial < 300; trial++ {
			n := 2 + rng.IntN(10)
			ts, xs := []float64{0}, []float64(nil)
			sc := math.Pow(10, -1+1.5*rng.Float64())
			for i := 1; i < n; i++ {
				d := math.Min(20, math.Max(0.05, sc*rng.ExpFloat64()))
				ts = append(ts, ts[i-1]+d)
				xs = append(xs, d*math.Sqrt(5))
			}
			dm, dp, ok := dense52(ts)
			if !ok {
				continue
			}
			trials++
			ws := 1.0
			if perturbed {
				ws = 1.005
			}
			c, p := m52ChainIval(t, xs, ws)
			const tol = 1e-7
			in := ivalNear(c[0], dm[0], tol) && ivalNear(c[1], dm[1], tol)
			for k := range 3 {
				in = in && ivalNear(p[k], dp[k], tol)
				// The chain re-encloses P's entries one by one each step
				// (the wrapping effect), so the width grows along it; a
				// relative 1e-5 still tells a step off by 0.5 % (below).
				if !perturbed && p[k].hi-p[k].lo > 1e-5*math.Abs(dp[k])+1e-12 {
					t.Errorf("times %v: P enclosure %v is loose", ts, p)
				}
			}
			if !in {
				if !perturbed {
					t.Fatalf("times %v: dense m %v P %v, interval m %v P %v", ts, dm, dp, c, p)
				}
				misses++
			}
		}
		return misses, trials
	}
	if miss, n := run(false); n < 250 || miss != 0 {
		t.Fatalf("%d of %d samplings compared, %d missed", n, 300, miss)
	}
	if miss, n := run(true); miss < n/2 {
		t.Errorf("negative control: w off by 0.5 %% missed only %d of %d samplings", miss, n)
	}
}

// TestPlaceSlopeStep52Mpmath checks the interval step against dense
// conditioning in 120-digit arithmetic (mpmath) on samplings with gaps
// from 10^-7 to 30 lengthscales, where float64 dense conditioning fails:
// the small-gap formulas are the ones a proof leans on. With w off by
// 0.5 % (negative control) the enclosures miss. 40 samplings (about 2
// CPU-s in python3), 10 with -short. Skipped without python3 and mpmath
// (Debian: python3-mpmath).
func TestPlaceSlopeStep52Mpmath(t *testing.T) {
	trials := 40
	if testing.Short() {
		trials = 10
	}
	runs := tinyGapRuns(rand.New(rand.NewPCG(52, 13)), trials, 7)
	// The kernel is (1 + r s + r^2 s^2/3) e^(-r s), r = sqrt(5); (m, P)
	// are of (f'/r, f''/r^2).
	const setup = `
mp.mp.dps = 120
r = mp.sqrt(5)
k = lambda s: (1 + r*abs(s) + r*r*s*s/3) * mp.exp(-r*abs(s))
ks = [lambda s: -r*r/3*s*(1 + r*s)*mp.exp(-r*s),
      lambda s: -r*r/3*(1 + r*s - r*r*s*s)*mp.exp(-r*s)]`
	const out = `[dot(cs[0], w)/r, dot(cs[1], w)/r**2, (r*r/3 - dot(cs[0], vs[0]))/r**2,
           -dot(cs[0], vs[1])/r**3, (r**4 - dot(cs[1], vs[1]))/r**4]`
	lines := mpmathRun(t, setup, out, runs)
	misses := 0
	for i, want := range lines {
		if len(want) != 5 {
			t.Fatalf("mpmath line %v: want 5 numbers", want)
		}
		xs := make([]float64, len(runs[i]))
		for j, g := range runs[i] {
			xs[j] = g * math.Sqrt(5)
		}
		got := func(ws float64) bool {
			m, p := m52ChainIval(t, xs, ws)
			// The float gaps x = g sqrt(5) differ from the exact ones by
			// an ulp; (m, P) move by far less than this tolerance.
			const tol = 1e-11
			ok := ivalNear(m[0], want[0], tol) && ivalNear(m[1], want[1], tol)
			for k := range 3 {
				ok = ok && ivalNear(p[k], want[2+k], tol)
			}
			return ok
		}
		if !got(1) {
			m, p := m52ChainIval(t, xs, 1)
			t.Errorf("gaps %v: mpmath %v, interval m %v P %v", runs[i], want, m, p)
		}
		if !got(1.005) {
			misses++
		}
	}
	if misses < len(lines)/2 {
		t.Errorf("negative control: w off by 0.5 %% missed only %d of %d samplings", misses, len(lines))
	}
}

// pImage encloses P' over every covariance P in the box p (P11, P12, P22)
// by the step's monotonicity in the Loewner order (the prediction B P B' +
// Q and the Schur complement of an exact observation both preserve it):
// the box lies between Plo = [[P11lo - d k, c], [c, P22lo - d/k]] and
// Phi = [[P11hi + d k, c], [c, P22hi + d/k]], c the middle of P12's range,
// d its half width and k > 0, so P' lies between the steps from Plo and Phi, two point
// evaluations that keep the correlation between det P and D that an
// evaluation over the box loses (at gaps below 0.1 lengthscales a median
// factor of 10 narrower). The
// off-diagonal entry of a matrix X with A <= X <= C is within
// sqrt((C11 - A11)(C22 - A22)) of A12. When Plo is not a covariance the
// step from 0 bounds P' from below instead. inflate is true but in the
// negative control (no inflation by d, which is unsound).
func pImage(c *m52Coef, p [3]ival, inflate bool) ([3]ival, bool) {
	return pImageBy(c.step, p, inflate)
}

// pImageBy is pImage with the step given (for the centred one,
// placeproof52_centred_test.go).
func pImageBy(step func(mm [2]ival, p [3]ival) ([2]ival, [3]ival, bool), p [3]ival, inflate bool) ([3]ival, bool) {
	cm := (p[1].lo + p[1].hi) / 2
	d := up(math.Max(cm-p[1].lo, p[1].hi-cm))
	if !inflate {
		d = 0
	}
	// [[d k, +-d], [+-d, d/k]] >= 0 for every k > 0: k, the ratio of the
	// variances' scales, keeps the inflation relative on both.
	k := 1.0
	if p[0].hi > 0 && p[2].hi > 0 {
		k = math.Sqrt(p[0].hi / p[2].hi)
	}
	d1, d2 := up(d*up(k)), up(d/dn(k))
	zero := [2]ival{pt(0), pt(0)}
	lo := [3]ival{pt(dn(p[0].lo - d1)), pt(cm), pt(dn(p[2].lo - d2))}
	if lo[0].lo < 0 || lo[2].lo < 0 || dn(lo[0].lo*lo[2].lo) < up(cm*cm) {
		lo = [3]ival{pt(0), pt(0), pt(0)}
	}
	hi := [3]ival{pt(up(p[0].hi + d1)), pt(cm), pt(up(p[2].hi + d2))}
	_, a, ok1 := step(zero, lo)
	_, b, ok2 := step(zero, hi)
	if !ok1 || !ok2 {
		return [3]ival{}, false
	}
	s := up(math.Sqrt(up(math.Max(0, up(b[0].hi-a[0].lo)) * math.Max(0, up(b[2].hi-a[2].lo)))))
	off := ival{dn(math.Max(a[1].lo, b[1].lo) - s), up(math.Min(a[1].hi, b[1].hi) + s)}
	return [3]ival{{a[0].lo, b[0].hi}, off, {a[2].lo, b[2].hi}}, true
}

// TestPlaceSlopeStep52Loewner checks pImage: for boxes around covariances
// the recursion reaches (relative widths 0.1 % to 10 %) and gaps from
// 10^-6 to 30 lengthscales, the step from every sampled covariance in the
// box lies in the enclosure, which is tighter than the step evaluated over
// the box at small gaps; without the inflation by d (negative control) some
// step leaves it.
func TestPlaceSlopeStep52Loewner(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(52, 17))
	misses, narrower, small, cases := 0, 0, 0, 0
	var ratios []float64
	for trial := 0; trial < 200; trial++ {
		// A reachable P: a few random gaps from the start.
		m, p := m52Start()
		for range 1 + rng.IntN(4) {
			x := math.Sqrt(5) * math.Pow(10, -3+3*rng.Float64())
			cc := m52Coefs(x, x, 1)
			m, p, _ = cc.step(m, p)
		}
		h := math.Pow(10, -3+2*rng.Float64())
		a, b := p[0].lo, p[2].lo
		r := p[1].lo
		box := [3]ival{iv(a*(1-h), a), iv(r-h*math.Sqrt(a*b)/2, r+h*math.Sqrt(a*b)/2), iv(b*(1-h), b)}
		x := math.Sqrt(5) * math.Pow(10, -6+7.5*rng.Float64())
		c := m52Coefs(x, x, 1)
		enc, ok := pImage(&c, box, true)
		bad, okBad := pImage(&c, box, false)
		if !ok || !okBad {
			t.Fatalf("gap %v box %v: a denominator contains 0", x, box)
		}
		_, naive, ok := c.step([2]ival{pt(0), pt(0)}, box)
		if x < 0.1*math.Sqrt(5) {
			small++
			if ok && enc[0].hi-enc[0].lo < naive[0].hi-naive[0].lo {
				narrower++
				ratios = append(ratios, (naive[0].hi-naive[0].lo)/(enc[0].hi-enc[0].lo))
			}
		}
		missed := false
		for range 50 {
			q := [3]float64{box[0].lo + rng.Float64()*(box[0].hi-box[0].lo), box[1].lo + rng.Float64()*(box[1].hi-box[1].lo), box[2].lo + rng.Float64()*(box[2].hi-box[2].lo)}
			if q[1]*q[1] > q[0]*q[2] {
				continue // not a covariance
			}
			cases++
			_, img, _ := c.step([2]ival{pt(0), pt(0)}, [3]ival{pt(q[0]), pt(q[1]), pt(q[2])})
			for k := range 3 {
				if img[k].lo < enc[k].lo || img[k].hi > enc[k].hi {
					t.Fatalf("gap %v, P %v in box %v: P'[%d] %v outside %v", x, q, box, k, img[k], enc[k])
				}
				if img[k].lo < bad[k].lo || img[k].hi > bad[k].hi {
					missed = true
				}
			}
		}
		if missed {
			misses++
		}
	}
	if cases < 5000 {
		t.Fatalf("only %d covariances sampled", cases)
	}
	if misses == 0 {
		t.Error("negative control: without the inflation no step left the enclosure")
	}
	if narrower < small*9/10 {
		t.Errorf("at gaps below 0.1 lengthscales the enclosure of P'11 is narrower than the box evaluation's in only %d of %d boxes", narrower, small)
	}
	sort.Float64s(ratios)
	t.Logf("%d covariances in 200 boxes; at gaps below 0.1 lengthscales P'11's enclosure narrower than the box evaluation's in %d of %d boxes (median factor %.3g); the uninflated one missed in %d boxes", cases, narrower, small, ratios[len(ratios)/2], misses)
}
