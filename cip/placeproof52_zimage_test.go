package cip

// The verified image of a whitened box (placeproof52_map_test.go) over a
// cell of P and a cell of gaps, enclosed entry by entry: the piece a
// verified cover of that shape repeats. It measures how much wider than
// the sampled image the enclosure is on cells of each size, which sets
// how fine a verified cover's cells must be (docs/robust-cip.md, section
// 5, "Matérn 5/2: what closes and what does not").

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// sqrt encloses the square root (IEEE's is correctly rounded); a lower
// end below 0 is taken as 0 (a variance).
func (a ival) sqrt() ival {
	return ival{dn(math.Sqrt(math.Max(0, a.lo))), up(math.Sqrt(math.Max(0, a.hi)))}
}

// m52ZImage encloses z' = L'^-1 m' over P in the cell {P22 = s^2, P11 =
// r s^6, P12 = rho sqrt(r) s^4} (s, r, rho in their intervals), z in the
// box z and gaps in [x0, x1]: m = L z with L = [[sqrt(r) s^3, 0], [rho s,
// s sqrt(1 - rho^2)]], the centred step (P' also by pImage on the centred
// step), then P'
// factored and z' solved, every entry an interval. pointP, in the
// negative control, replaces the cell by its lower corner (unsound).
func m52ZImage(s, r, rho ival, z [2]ival, x0, x1 float64, pointP bool) ([2]ival, bool) {
	if pointP {
		s, r, rho = pt(s.lo), pt(r.lo), pt(rho.lo)
	}
	s2 := s.sqr()
	s3 := s2.mul(s)
	sr := r.sqrt()
	l11 := sr.mul(s3)
	l21 := rho.mul(s)
	l22 := s.mul(pt(1).sub(rho.sqr()).sqrt())
	m := [2]ival{l11.mul(z[0]), l21.mul(z[0]).add(l22.mul(z[1]))}
	p := [3]ival{l11.sqr(), rho.mul(sr).mul(s2.sqr()), s2}
	m2, p2, ok := m52StepCentred(x0, x1, m, p, true)
	if !ok {
		return m2, false
	}
	centred := func(mm [2]ival, p [3]ival) ([2]ival, [3]ival, bool) {
		return m52StepCentred(x0, x1, mm, p, true)
	}
	if pl, ok := pImageBy(centred, p, true); ok {
		for k := range 3 {
			p2[k] = ival{math.Max(p2[k].lo, pl[k].lo), math.Min(p2[k].hi, pl[k].hi)}
		}
	}
	k11 := p2[0].sqrt()
	k21, ok1 := p2[1].div(k11)
	k22 := p2[2].sub(k21.sqr()).sqrt()
	z1, ok2 := m2[0].div(k11)
	z2, ok3 := m2[1].sub(k21.mul(z1)).div(k22)
	return [2]ival{z1, z2}, ok1 && ok2 && ok3
}

// TestPlaceSlope52ZImage checks m52ZImage on cells around states the
// recursion reaches (cells of 0.2, 0.05 and 0.0125 in log10 P22 and
// log10(P11/P22^3), half that in the correlation; z-boxes of width 0.02;
// gap cells of ratio 1.005 from 0.05 to 10 lengthscales): the image of
// every sampled (P, z, gap) of the cell lies inside, and with the cell
// replaced by its corner (negative control) some does not. It measures the
// enclosure's width over the sampled image's (the loss a verified cover
// pays over the float map, TestPlaceSlope52FloatMap).
func TestPlaceSlope52ZImage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(52, 31))
	cells := m52Size(40, 12)
	for _, h := range []float64{0.2, 0.05, 0.0125} {
		var ratios []float64
		misses, fails := 0, 0
		for range cells {
			// A reached state, and the cell around it.
			m, p := [2]float64{0, -1.0 / 3}, [3]float64{1.0 / 3, 0, 8.0 / 9}
			for range 1 + rng.IntN(4) {
				m, p = m52StepF(m, p, math.Sqrt(5)*math.Pow(10, -1.3+1.6*rng.Float64()))
			}
			u, ok := m52Coords(p)
			if !ok {
				continue
			}
			cell := func(v, w float64) (float64, float64) {
				lo := math.Floor(v/w) * w
				return lo, lo + w
			}
			a0, a1 := cell(u[0], h)
			b0, b1 := cell(u[1], h)
			c0, c1 := cell(u[2], h/2)
			s := iv(math.Pow(10, a0/2), math.Pow(10, a1/2)) // the cell, by its float ends
			r := iv(math.Pow(10, b0), math.Pow(10, b1))
			rho := iv(math.Max(-1, c0), math.Min(1, c1))
			l := m52Chol(p)
			zc := [2]float64{m[0] / l[0], (m[1] - l[1]*m[0]/l[0]) / l[2]}
			z := [2]ival{iv(zc[0]-0.01, zc[0]+0.01), iv(zc[1]-0.01, zc[1]+0.01)}
			x0 := math.Sqrt(5) * math.Pow(10, -1.3+2.3*rng.Float64())
			x1 := x0 * 1.005
			enc, ok := m52ZImage(s, r, rho, z, x0, x1, false)
			bad, okBad := m52ZImage(s, r, rho, z, x0, x1, true)
			if !ok {
				fails++
				continue
			}
			lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{math.Inf(-1), math.Inf(-1)}
			missed := false
			for range 200 {
				ss := s.lo + rng.Float64()*(s.hi-s.lo)
				rr := r.lo + rng.Float64()*(r.hi-r.lo)
				ro := rho.lo + rng.Float64()*(rho.hi-rho.lo)
				q := [3]float64{rr * math.Pow(ss, 6), ro * math.Sqrt(rr) * math.Pow(ss, 4), ss * ss}
				lq := m52Chol(q)
				zz := [2]float64{z[0].lo + rng.Float64()*(z[0].hi-z[0].lo), z[1].lo + rng.Float64()*(z[1].hi-z[1].lo)}
				mq := [2]float64{lq[0] * zz[0], lq[1]*zz[0] + lq[2]*zz[1]}
				x := x0 + rng.Float64()*(x1-x0)
				m2, p2 := m52StepF(mq, q, x)
				l2 := m52Chol(p2)
				z2 := [2]float64{m2[0] / l2[0], (m2[1] - l2[1]*m2[0]/l2[0]) / l2[2]}
				for i := range 2 {
					if !ivalNear(enc[i], z2[i], 1e-9*(1+math.Abs(z2[i]))) {
						t.Fatalf("cell of %v around P %v, gaps [%v, %v]: z'[%d] = %v outside %v", h, p, x0, x1, i, z2[i], enc[i])
					}
					if okBad && !ivalNear(bad[i], z2[i], 1e-9*(1+math.Abs(z2[i]))) {
						missed = true
					}
					lo[i], hi[i] = math.Min(lo[i], z2[i]), math.Max(hi[i], z2[i])
				}
			}
			if missed {
				misses++
			}
			ratios = append(ratios, math.Max((enc[0].hi-enc[0].lo)/(hi[0]-lo[0]), (enc[1].hi-enc[1].lo)/(hi[1]-lo[1])))
		}
		if len(ratios) < cells/2 {
			t.Fatalf("cells of %v: only %d of %d cells enclosed (%d denominators contained 0)", h, len(ratios), cells, fails)
		}
		if misses == 0 {
			t.Errorf("cells of %v: negative control: with the cell's corner for the cell no image left the enclosure", h)
		}
		sort.Float64s(ratios)
		t.Logf("cells of %v: %d enclosed (%d with a denominator containing 0); width over the sampled image's: median %.3g, largest %.3g; the corner for the cell missed in %d", h, len(ratios), fails, ratios[len(ratios)/2], ratios[len(ratios)-1], misses)
	}
}
