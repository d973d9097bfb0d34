package bdp

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/tracepriv/tracepriv/noise"
)

// SyntheticIQ as the thesis describes it: 10,000 independent parent–child
// pairs, mean 100, σ = 15 (the thesis prints σ² = 15; σ = 15 is the IQ
// convention), correlation 0.45.
func syntheticIQ(t *testing.T, pairs int, src noise.Source) []float64 {
	t.Helper()
	x, err := GaussianBlocks(pairs, []float64{100, 100}, Equicorrelated(2, 225, 0.45), src)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestGaussianBlocksMoments(t *testing.T) {
	x := syntheticIQ(t, 10000, noise.Seeded(1))
	a, b := make([]float64, 10000), make([]float64, 10000)
	for i := range a {
		a[i], b[i] = x[2*i], x[2*i+1]
	}
	// Standard errors: correlation ≈ (1−ρ²)/√n = 0.008, sd ≈ 15/√(2n) =
	// 0.11, mean ≈ 0.15; tolerances are about 4 of them.
	near(t, "corr", stat.Correlation(a, b, nil), 0.45, 0.032)
	near(t, "sd", stat.StdDev(a, nil), 15, 0.45)
	near(t, "mean", stat.Mean(b, nil), 100, 0.6)
	// Consecutive pairs are independent.
	near(t, "cross-pair corr", stat.Correlation(b[:9999], a[1:], nil), 0, 0.04)
}

func TestMarkovChainReproducesP(t *testing.T) {
	p := [][]float64{{0.818, 0.182}, {0.371, 0.629}}
	seq, err := MarkovChain(p, 200000, noise.Seeded(2))
	if err != nil {
		t.Fatal(err)
	}
	q, zeros, err := TransitionCounts(seq, 2)
	if err != nil || zeros != 0 {
		t.Fatalf("counts: %v, zeros %d", err, zeros)
	}
	for i := range p {
		for j := range p {
			// SE ≈ √(p(1−p)/(n w_i)) ≤ 0.002.
			near(t, "P̂", q[i][j], p[i][j], 0.01)
		}
	}
	ones := 0
	for _, s := range seq {
		ones += s
	}
	w, _ := Stationary(p)
	near(t, "stationary w1", float64(ones)/float64(len(seq)), w[1], 0.01)
}

func TestExperimentGaussian(t *testing.T) {
	src := noise.Seeded(3)
	e := Experiment{
		Data:     syntheticIQ(t, 10000, src),
		Query:    ClippedSum{Lo: 40, Hi: 160},
		Epsilons: []float64{1, 5},
		Models:   []Calibrator{Groups{M: 2}, Gaussian{M: 2, Rho: 0.45}},
		Reps:     20000,
		Src:      src,
	}
	rows, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	for i, r := range rows {
		// The 0.95-quantile of |Lap(b)| is exactly b·ln 20 (Prop 2.10); the
		// empirical quantile over 20,000 draws has relative SE ≈ 1.5 %.
		near(t, r.Model+" α", r.AlphaEmpirical/r.AlphaTheory, 1, 0.06)
		if r.MAPE == nil {
			t.Errorf("%s: MAPE missing", r.Model)
		}
		if i%3 == 2 {
			dp, grp := rows[i-2], rows[i-1]
			// DP < Gaussian < general, by the factors 1 < 1.45 < 2.
			if !(dp.AlphaTheory < r.AlphaTheory && r.AlphaTheory < grp.AlphaTheory) {
				t.Errorf("ε=%v: order DP %v, Gaussian %v, groups %v", r.Epsilon, dp.AlphaTheory, r.AlphaTheory, grp.AlphaTheory)
			}
			near(t, "Gaussian factor", r.Factor, 1.45, 1e-12)
		}
	}
	// SyntheticIQ, ε = 1, Δ = 120: α = 359.5 (DP), 521.3 (Gaussian), 719.0.
	near(t, "DP α", rows[0].AlphaTheory, 359.5, 0.05)
	near(t, "groups α", rows[1].AlphaTheory, 719.0, 0.05)
	near(t, "Gaussian α", rows[2].AlphaTheory, 521.3, 0.05)
}

func TestExperimentMarkovFloor(t *testing.T) {
	p := [][]float64{{0.818, 0.182}, {0.371, 0.629}}
	src := noise.Seeded(4)
	seq, _ := MarkovChain(p, 731, src)
	data := make([]float64, len(seq))
	for i, s := range seq {
		data[i] = float64(s)
	}
	mk, _ := NewMarkov(p, 1e-9)
	rows, err := Experiment{
		Data: data, Query: ClippedSum{Lo: 0, Hi: 1},
		Epsilons: []float64{5, 10}, Models: []Calibrator{Groups{M: len(data)}, mk},
		Reps: 2000, Src: src,
	}.Run()
	if err != nil {
		t.Fatal(err)
	}
	// ε = 5 is below the floor 4 ln 4.495 = 6.01: skipped with the reason.
	if !strings.Contains(rows[2].Skipped, "floor") {
		t.Errorf("ε=5 Markov row not skipped: %+v", rows[2])
	}
	// ε = 10: DP < Markov ≪ general.
	dp, grp, m := rows[3], rows[4], rows[5]
	if !(dp.AlphaTheory < m.AlphaTheory && m.AlphaTheory*10 < grp.AlphaTheory) {
		t.Errorf("ε=10 order: DP %v Markov %v general %v", dp.AlphaTheory, m.AlphaTheory, grp.AlphaTheory)
	}
	near(t, "Markov α", m.AlphaTheory, math.Log(20)/(10-mk.Floor()), 1e-12)
}
