package cip

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// Matérn 5/2's slope bounds are measured, not proved (PlaceSlopeBounds).
// This file searches for samplings that break them, harder than
// TestPlaceSlopeBounds' random draws: an ascent on the gaps.
// placeproof52_ival_test.go holds the interval step a proof would run.
//
// Units: lengthscale 1, r = sqrt(5), the state (f, g1, g2) = (f, f'/r,
// f''/r^2), gap x = r delta. The generator is [[0,1,0],[0,0,1],[-1,-3,-3]],
// so Phi = e^-x (I + x N + x^2 N^2/2) with N = F + I nilpotent, and the
// stationary covariance is [[1,0,-1/3],[0,1/3,0],[-1/3,0,1]].

var m52Pinf = [3][3]float64{{1, 0, -1.0 / 3}, {0, 1.0 / 3, 0}, {-1.0 / 3, 0, 1}}

func m52Phi(x float64) [3][3]float64 {
	e := math.Exp(-x)
	x2 := x * x / 2
	return [3][3]float64{
		{e * (1 + x + x2), e * (x + 2*x2), e * x2},
		{-e * x2, e * (1 + x - 2*x2), e * (x - x2)},
		{e * (-x + x2), e * (-3*x + 2*x2), e * (1 - 2*x + x2)},
	}
}

// m52Step is one Kalman step with the exact observation f = 1, in float64
// (plain formulas; accurate for gaps x above about 0.05).
func m52Step(m [2]float64, p [2][2]float64, x float64) ([2]float64, [2][2]float64) {
	phi := m52Phi(x)
	var q, s [3][3]float64
	for i := range 3 {
		for j := range 3 {
			v := m52Pinf[i][j]
			for a := range 3 {
				for b := range 3 {
					v -= phi[i][a] * m52Pinf[a][b] * phi[j][b]
				}
			}
			q[i][j] = v
			w := v
			for a := range 2 {
				for b := range 2 {
					w += phi[i][a+1] * p[a][b] * phi[j][b+1]
				}
			}
			s[i][j] = w
		}
	}
	var mu [3]float64
	for i := range 3 {
		mu[i] = phi[i][0] + phi[i][1]*m[0] + phi[i][2]*m[1]
	}
	var m2 [2]float64
	var p2 [2][2]float64
	for i := range 2 {
		m2[i] = mu[i+1] + s[i+1][0]/s[0][0]*(1-mu[0])
		for j := range 2 {
			p2[i][j] = s[i+1][j+1] - s[i+1][0]*s[j+1][0]/s[0][0]
		}
	}
	return m2, p2
}

// m52Pin conditions on g1 = 0 (k = 1: the limit of two times ever
// closer, f = 1 at both), or on g1 = g2 = 0 (k = 2: three): the tiny
// gaps the float recursion cannot take.
func m52Pin(m [2]float64, p [2][2]float64, k int) ([2]float64, [2][2]float64) {
	if k == 0 {
		return m, p
	}
	if k == 2 {
		return [2]float64{}, [2][2]float64{}
	}
	if p[0][0] <= 0 { // g1 is known already (it can only be 0 then)
		return m, p
	}
	r := p[1][0] / p[0][0]
	return [2]float64{0, m[1] - r*m[0]}, [2][2]float64{{0, 0}, {0, p[1][1] - r*p[1][0]}}
}

// m52Run returns (m_1 l, m_2 l^2) after the scaled gaps xs; pins, when
// not nil, holds one m52Pin kind per time (len(xs) + 1).
func m52Run(xs []float64, pins []int) (float64, float64) {
	m := [2]float64{0, -1.0 / 3}
	p := [2][2]float64{{1.0 / 3, 0}, {0, 8.0 / 9}}
	if pins != nil {
		m, p = m52Pin(m, p, pins[0])
	}
	for i, x := range xs {
		m, p = m52Step(m, p, x)
		if pins != nil {
			m, p = m52Pin(m, p, pins[i+1])
		}
	}
	return m[0] * math.Sqrt(5), m[1] * 5
}

// TestPlaceSlopeStep52Dense checks m52Step against dense conditioning
// (Cholesky solves of the kernel matrix) on random samplings.
func TestPlaceSlopeStep52Dense(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(52, 1))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(10)
		ts, xs := []float64{0}, []float64(nil)
		for i := 1; i < n; i++ {
			d := math.Pow(10, -1.3+2*rng.Float64())
			ts = append(ts, ts[i-1]+d)
			xs = append(xs, d*math.Sqrt(5))
		}
		dm, _, ok := denseDerivs(gp.KernelMatern52, ts, 2)
		if !ok {
			continue
		}
		dm1, dm2 := dm[0], dm[1]
		m1, m2 := m52Run(xs, nil)
		if math.Abs(m1-dm1) > 1e-6 || math.Abs(m2-dm2) > 1e-6 {
			t.Fatalf("times %v: dense (%v, %v), recursion (%v, %v)", ts, dm1, dm2, m1, m2)
		}
	}
}

// TestPlaceSlopeSearch52 looks for samplings past Matérn 5/2's measured
// bounds: random gap sequences (2 to 24 times, gaps from 0.02 to 10
// lengthscales; at each time, with probability 1/2, a cluster of two or
// three times closer than any gap, in the limit) each improved by a
// coordinate ascent on the log gaps, for |m_1| l and for |m_2| l^2. None may exceed PlaceSlopeBounds; the search
// must find at least the known two-time maximum of |m_1| l (0.3815) and
// the one-time |m_2| l^2 = 5/3 (the full suite runs 10 times as many starts).
func TestPlaceSlopeSearch52(t *testing.T) {
	t.Parallel()
	mu := PlaceSlopeBounds(gp.KernelMatern52)
	starts := 40
	if !testing.Short() {
		starts = 400
	}
	rng := rand.New(rand.NewPCG(52, 2))
	best := [2]float64{}
	var arg [2][]float64
	for j := range 2 {
		var pins []int
		obj := func(ls []float64) float64 {
			xs := make([]float64, len(ls))
			for i, l := range ls {
				xs[i] = math.Sqrt(5) * math.Exp(l)
			}
			m1, m2 := m52Run(xs, pins)
			return []float64{math.Abs(m1), math.Abs(m2)}[j]
		}
		for s := 0; s < starts; s++ {
			ls := make([]float64, 1+rng.IntN(23))
			for i := range ls {
				ls[i] = math.Log(0.02) + rng.Float64()*math.Log(500)
			}
			pins = make([]int, len(ls)+1)
			for i := range pins {
				if rng.IntN(2) == 0 {
					pins[i] = 1 + rng.IntN(2)
				}
			}
			v := obj(ls)
			for step := 1.0; step > 1e-3; step /= 2 {
				for improved := true; improved; {
					improved = false
					for i := range ls {
						for _, d := range []float64{step, -step} {
							old := ls[i]
							ls[i] = math.Min(math.Log(10), math.Max(math.Log(0.02), old+d))
							if w := obj(ls); w > v {
								v, improved = w, true
							} else {
								ls[i] = old
							}
						}
					}
				}
			}
			if v > best[j] {
				best[j] = v
				arg[j] = append([]float64(nil), ls...)
			}
		}
		if best[j] > mu[j] {
			t.Errorf("derivative %d: a sampling reaches %v > bound %v (log gaps %v)", j+1, best[j], mu[j], arg[j])
		}
	}
	if best[0] < 0.38 || best[1] < 5.0/3-1e-5 {
		t.Errorf("the search found only %v: it misses the known maxima", best)
	}
	gaps := func(ls []float64) []float64 {
		g := make([]float64, len(ls))
		for i, l := range ls {
			g[i] = math.Exp(l)
		}
		return g
	}
	t.Logf("largest |m_1| l %.5f (gaps %.3v), |m_2| l^2 %.5f (gaps %.3v); bounds %v", best[0], gaps(arg[0]), best[1], gaps(arg[1]), mu)
}

// TestPlaceSlope52Corner measures what ties m to P near the corner a proof
// of Matérn 5/2's bounds has to compactify (docs/robust-cip.md, section 5,
// "Matérn 5/2: what closes and what does not"): over random samplings
// (1 to 30 times, gaps from 0.03 lengthscales, clusters of vanishing gaps
// at a quarter of the times), the Mahalanobis norm m'P^-1 m of the
// derivatives' mean stays at most 0.18 and |m_1|/sqrt(P_11) at most 0.42
// (scaled units; measured 0.1713 and 0.4082, the same with -short's
// 2,000 samplings), so |m_1| vanishes like sqrt(P_11) as f' becomes
// known. A single time gives m'P^-1 m = 1/8 (the floor checked).
// Measured facts, not a proof: a cover whose m-set shrinks with P_11
// would need them.
func TestPlaceSlope52Corner(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(52, 3))
	var maha, ratio float64
	trials := 2000
	if !testing.Short() {
		trials = 20000
	}
	for range trials {
		m := [2]float64{0, -1.0 / 3}
		p := [2][2]float64{{1.0 / 3, 0}, {0, 8.0 / 9}}
		sc := math.Pow(10, -1.3+2*rng.Float64())
		for range 1 + rng.IntN(30) {
			if rng.IntN(4) == 0 {
				m, p = m52Pin(m, p, 1)
			}
			m, p = m52Step(m, p, math.Sqrt(5)*math.Max(0.03, sc*rng.ExpFloat64()))
			det := p[0][0]*p[1][1] - p[0][1]*p[0][1]
			if p[0][0] <= 0 || det <= 0 {
				continue
			}
			maha = math.Max(maha, (p[1][1]*m[0]*m[0]-2*p[0][1]*m[0]*m[1]+p[0][0]*m[1]*m[1])/det)
			ratio = math.Max(ratio, math.Abs(m[0])/math.Sqrt(p[0][0]))
		}
	}
	if maha < 0.125 || maha > 0.18 || ratio > 0.42 {
		t.Errorf("m'P^-1 m up to %v (want within [1/8, 0.18]), |m_1|/sqrt(P_11) up to %v (want <= 0.42)", maha, ratio)
	}
	t.Logf("largest m'P^-1 m %.6f, |m_1|/sqrt(P_11) %.6f", maha, ratio)
}
