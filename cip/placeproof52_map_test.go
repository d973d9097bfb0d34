package cip

// Which invariant shape a proof of Matérn 5/2's slope bounds could use,
// measured (docs/robust-cip.md, section 5, "Matérn 5/2: what closes and
// what does not"): a cell map in float64 over cells of the covariance P in
// scale-free coordinates, each with a box of the whitened mean z = L^-1 m
// (P = L L', Cholesky), grown from the start by sampled steps. It is not a
// proof (samples, not enclosures), so what it reaches is a lower estimate
// of what a verified cover of the same cells would.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// m52F is float64 arithmetic for the step (m52Num), used to sample it
// fast: the same formulas as the interval step, accurate at every gap.
type m52F float64

func (a m52F) add(b m52F) m52F         { return a + b }
func (a m52F) sub(b m52F) m52F         { return a - b }
func (a m52F) mul(b m52F) m52F         { return a * b }
func (a m52F) scale(c float64) m52F    { return a * m52F(c) }
func (a m52F) neg() m52F               { return -a }
func (a m52F) sqr() m52F               { return a * a }
func (a m52F) div(b m52F) (m52F, bool) { return a / b, b != 0 }
func (a m52F) clip(lo, hi float64) m52F {
	return m52F(math.Min(hi, math.Max(lo, float64(a))))
}
func (a m52F) floor0() m52F { return m52F(math.Max(0, float64(a))) }

type floatGap float64

func (g floatGap) c(v float64) m52F      { return m52F(v) }
func (g floatGap) x() m52F               { return m52F(g) }
func (g floatGap) expNeg(k float64) m52F { return m52F(math.Exp(-k * float64(g))) }
func (g floatGap) tail(k float64, k0, shift int) m52F {
	y := k * float64(g)
	t := 1.0
	for i := 0; i < k0-shift; i++ {
		t *= y
	}
	for i := 2; i <= k0; i++ {
		t /= float64(i)
	}
	sum := t
	for j := k0 + 1; t > sum*1e-17 || float64(j) < 2*y; j++ {
		t = t * y / float64(j)
		sum += t
	}
	return m52F(sum)
}

// m52StepF is the step in float64 at the gap x, P as (P11, P12, P22).
func m52StepF(m [2]float64, p [3]float64, x float64) ([2]float64, [3]float64) {
	return m52StepFw(m, p, x, 1)
}

// m52StepFw is m52StepF with w scaled by wScale (negative controls).
func m52StepFw(m [2]float64, p [3]float64, x, wScale float64) ([2]float64, [3]float64) {
	c := m52CoefsOn[m52F](floatGap(x), x >= 1, wScale)
	mm, pp, _ := c.step([2]m52F{m52F(m[0]), m52F(m[1])}, [3]m52F{m52F(p[0]), m52F(p[1]), m52F(p[2])})
	return [2]float64{float64(mm[0]), float64(mm[1])}, [3]float64{float64(pp[0]), float64(pp[1]), float64(pp[2])}
}

// m52Cell is a cell of P: log10 P22, log10(P11/P22^3) (the corner's
// scale-free ratio: P11 ~ lambda^3 as P22 ~ lambda) and the correlation,
// each in steps of h (the correlation's of h/2), and a level that tells
// grids of different steps apart.
type m52Cell [4]int

// m52Coords are P's scale-free coordinates; ok is false for a singular P
// (a pinned derivative).
func m52Coords(p [3]float64) ([3]float64, bool) {
	if p[0] <= 0 || p[2] <= 0 || p[1]*p[1] >= p[0]*p[2] {
		return [3]float64{}, false
	}
	return [3]float64{math.Log10(p[2]), math.Log10(p[0] / (p[2] * p[2] * p[2])), p[1] / math.Sqrt(p[0]*p[2])}, true
}

// m52Grid returns the cell function of the uniform grid of step h.
func m52Grid(h float64) func([3]float64) (m52Cell, bool) {
	return func(p [3]float64) (m52Cell, bool) {
		u, ok := m52Coords(p)
		return m52Cell{int(math.Floor(u[0] / h)), int(math.Floor(u[1] / h)), int(math.Floor(u[2] / (h / 2)))}, ok
	}
}

// m52Chol is P's Cholesky factor (l11, l21, l22); l22 is NaN or 0 when P
// is singular.
func m52Chol(p [3]float64) [3]float64 {
	l11 := math.Sqrt(p[0])
	l21 := p[1] / l11
	return [3]float64{l11, l21, math.Sqrt(p[2] - l21*l21)}
}

type m52MapCell struct {
	lo, hi [2]float64   // the z-box
	ps     [][3]float64 // covariances the cell was reached at
	dirty  bool
}

// m52FloatMap grows the map on the cells cellOf makes from the start and
// returns the largest |m_1| l and |m_2| l^2 over its cells (each cell's
// z-box at each of its P samples), the cells where each is reached, the
// number of cells and of steps taken.
func m52FloatMap(cellOf func([3]float64) (m52Cell, bool), samples int) (b1, b2 float64, at [2]m52Cell, cells, steps int) {
	cs := map[m52Cell]*m52MapCell{}
	s5 := math.Sqrt(5)
	whiten := func(m [2]float64, p [3]float64) ([2]float64, [3]float64) {
		l := m52Chol(p)
		return [2]float64{m[0] / l[0], (m[1] - l[1]*m[0]/l[0]) / l[2]}, l
	}
	add := func(m [2]float64, p [3]float64) {
		k, ok := cellOf(p)
		if !ok {
			return
		}
		c := cs[k]
		if c == nil {
			c = &m52MapCell{lo: [2]float64{math.Inf(1), math.Inf(1)}, hi: [2]float64{math.Inf(-1), math.Inf(-1)}}
			cs[k] = c
		}
		if len(c.ps) < samples {
			c.ps = append(c.ps, p)
		}
		z, _ := whiten(m, p)
		for i := range 2 {
			if z[i] < c.lo[i]-1e-9 {
				c.lo[i], c.dirty = z[i], true
			}
			if z[i] > c.hi[i]+1e-9 {
				c.hi[i], c.dirty = z[i], true
			}
		}
	}
	var gaps []float64
	for g := 1e-4; g < 30; g *= 1.15 {
		gaps = append(gaps, g*s5)
	}
	add([2]float64{0, -1.0 / 3}, [3]float64{1.0 / 3, 0, 8.0 / 9})
	for {
		// In the cells' order, so that which covariances a cell keeps, and
		// so the result, do not depend on the map's iteration order.
		var keys []m52Cell
		for k, c := range cs {
			if c.dirty {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			break
		}
		slices.SortFunc(keys, func(a, b m52Cell) int { return slices.Compare(a[:], b[:]) })
		for _, k := range keys {
			c := cs[k]
			c.dirty = false
			for _, p := range c.ps {
				_, l := whiten([2]float64{}, p)
				for _, z := range [4][2]float64{{c.lo[0], c.lo[1]}, {c.lo[0], c.hi[1]}, {c.hi[0], c.lo[1]}, {c.hi[0], c.hi[1]}} {
					m := [2]float64{l[0] * z[0], l[1]*z[0] + l[2]*z[1]}
					for _, x := range gaps {
						m2, p2 := m52StepF(m, p, x)
						steps++
						add(m2, p2)
					}
				}
			}
		}
	}
	for k, c := range cs {
		cells++
		for _, p := range c.ps {
			_, l := whiten([2]float64{}, p)
			for _, z := range [4][2]float64{{c.lo[0], c.lo[1]}, {c.lo[0], c.hi[1]}, {c.hi[0], c.lo[1]}, {c.hi[0], c.hi[1]}} {
				if v := s5 * math.Abs(l[0]*z[0]); v > b1 {
					b1, at[0] = v, k
				}
				if v := 5 * math.Abs(l[1]*z[0]+l[2]*z[1]); v > b2 {
					b2, at[1] = v, k
				}
			}
		}
	}
	return b1, b2, at, cells, steps
}

// TestPlaceSlope52FloatMap checks the tool that measured the whitened-box
// shape (BenchmarkPlaceSlope52FloatMap measures it): the step in float64
// against the interval one, and the whitened step z -> z' against what
// makes the shape workable: it is nonexpansive (spectral norm at most 1,
// measured 0.9996; 6.4 with w 20 % low, the negative control). The full
// suite grows the map on coarse cells of 0.4 (77 cells, 0.3 million steps)
// and checks what holds at every cell size: the map closes and reaches at
// least what samplings of the supremum reach (0.3815, 5/3; measured 0.4863
// and 1.8804). The measurement on cells of 0.2 (0.7 million steps, about
// 3 CPU-s) is the benchmark's since session 44.
func TestPlaceSlope52FloatMap(t *testing.T) {
	t.Parallel()
	// The float step is the interval step's formulas: at gaps from 10^-6
	// to 30 lengthscales it lies in the interval step's enclosure (up to
	// rounding) from a reached state.
	m, p := [2]float64{0, -1.0 / 3}, [3]float64{1.0 / 3, 0, 8.0 / 9}
	for _, g := range []float64{1e-6, 1e-3, 0.05, 0.3, 0.9, 2, 7, 30} {
		x := g * math.Sqrt(5)
		c := m52Coefs(x, x, 1)
		mi, pi, _ := c.step([2]ival{pt(m[0]), pt(m[1])}, [3]ival{pt(p[0]), pt(p[1]), pt(p[2])})
		mf, pf := m52StepF(m, p, x)
		for i := range 2 {
			if !ivalNear(mi[i], mf[i], 1e-12) {
				t.Fatalf("gap %v: float m'[%d] %v, interval %v", g, i, mf[i], mi[i])
			}
		}
		for k := range 3 {
			if !ivalNear(pi[k], pf[k], 1e-12) {
				t.Fatalf("gap %v: float P'[%d] %v, interval %v", g, k, pf[k], pi[k])
			}
		}
		m, p = mf, pf
	}
	// The whitened step is nonexpansive: m' = a + A m with P' = A P A' + N,
	// N >= 0 (the error after the step is A times the error before plus
	// independent noise), so M = L'^-1 A L has spectral norm at most 1 and
	// the z-boxes cannot blow up by the wrapping effect. Checked on chains
	// of random gaps (A by the step's affinity in m).
	if w := m52WhitenedNorm(1); w > 1+1e-6 {
		t.Errorf("the whitened step expands: spectral norm %v", w)
	} else {
		t.Logf("largest spectral norm of the whitened step %.6f", w)
	}
	// Negative control: with w 20 % low (the process noise of f too small)
	// the covariance no longer dominates A P A' and the step expands.
	if w := m52WhitenedNorm(0.8); w <= 1+1e-6 {
		t.Errorf("negative control: w off by 20 %% gives spectral norm %v <= 1", w)
	} else {
		t.Logf("with w off by 20 %%: %.4f", w)
	}
	if testing.Short() {
		t.Skip("the cell map takes about 1.5 CPU-s; the full suite runs it")
	}
	b1, b2, at, n, steps := m52FloatMap(m52Grid(0.4), 2)
	t.Logf("whitened boxes on cells of 0.4: %d cells, %d steps; |m_1| l <= %.4f (cell %v), |m_2| l^2 <= %.4f (cell %v)", n, steps, b1, at[0], b2, at[1])
	if b1 < 0.3815 || b2 < 5.0/3 {
		t.Errorf("the map reaches less than samplings do: %v, %v", b1, b2)
	}
}

// BenchmarkPlaceSlope52FloatMap is the measurement docs/robust-cip.md
// reports (`go test ./cip -run XXX -bench PlaceSlope52FloatMap -benchtime
// 1x`): the float cell map on cells of 0.2 (0.2 in the logarithms, 0.1 in
// the correlation) closes between the supremum samplings reach (0.3815,
// 5/3) and the loosened constants (0.45, 2.0), but above the measured ones
// PlaceSlopeBounds uses (0.40, 1.75): this shape cannot prove 0.40 and
// 1.75 even before enclosures widen it. Measured 0.4286 and 1.8386 (285
// cells, 0.7 million steps; the same with 4 covariances kept per cell
// instead of 2); finer cells come closer. It fails on other findings.
func BenchmarkPlaceSlope52FloatMap(b *testing.B) {
	for range b.N {
		b1, b2, at, n, steps := m52FloatMap(m52Grid(0.2), 2)
		b.Logf("whitened boxes on cells of 0.2: %d cells, %d steps; |m_1| l <= %.4f (cell %v), |m_2| l^2 <= %.4f (cell %v)", n, steps, b1, at[0], b2, at[1])
		if b1 < 0.3815 || b2 < 5.0/3 {
			b.Errorf("the map reaches less than samplings do: %v, %v", b1, b2)
		}
		if b1 >= 0.45 || b2 >= 2 {
			b.Errorf("the map exceeds the loosened constants 0.45, 2.0: %v, %v", b1, b2)
		}
		if b1 <= 0.40 && b2 <= 1.75 {
			b.Errorf("the map closed within PlaceSlopeBounds (%v, %v): this shape may prove them; update docs/robust-cip.md", b1, b2)
		}
	}
}

// m52WhitenedNorm returns the largest spectral norm of the whitened step
// M = L'^-1 A L over chains of random gaps from the start (A by the step's
// affinity in m), w scaled by wScale.
func m52WhitenedNorm(wScale float64) float64 {
	rng := rand.New(rand.NewPCG(52, 29))
	var worst float64
	for range 200 {
		m, p := [2]float64{0, -1.0 / 3}, [3]float64{1.0 / 3, 0, 8.0 / 9}
		for range 1 + rng.IntN(8) {
			x := math.Sqrt(5) * math.Pow(10, -4+5*rng.Float64())
			m2, p2 := m52StepFw(m, p, x, wScale)
			var a [2][2]float64
			for j := range 2 {
				mj := m
				mj[j]++
				mj2, _ := m52StepFw(mj, p, x, wScale)
				a[0][j], a[1][j] = mj2[0]-m2[0], mj2[1]-m2[1]
			}
			l, l2 := m52Chol(p), m52Chol(p2)
			if l[0] > 0 && l2[0] > 0 && l[2] > 0 && l2[2] > 0 {
				// M = L2^-1 A L, L lower triangular (l11, l21, l22).
				al := [2][2]float64{{a[0][0]*l[0] + a[0][1]*l[1], a[0][1] * l[2]}, {a[1][0]*l[0] + a[1][1]*l[1], a[1][1] * l[2]}}
				var mm [2][2]float64
				for j := range 2 {
					mm[0][j] = al[0][j] / l2[0]
					mm[1][j] = (al[1][j] - l2[1]*mm[0][j]) / l2[2]
				}
				// The largest singular value of a 2x2 matrix.
				s2 := mm[0][0]*mm[0][0] + mm[0][1]*mm[0][1] + mm[1][0]*mm[1][0] + mm[1][1]*mm[1][1]
				det := mm[0][0]*mm[1][1] - mm[0][1]*mm[1][0]
				worst = math.Max(worst, math.Sqrt((s2+math.Sqrt(math.Max(0, s2*s2-4*det*det)))/2))
			}
			m, p = m2, p2
		}
	}
	return worst
}
