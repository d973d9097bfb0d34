package noise_test

import (
	"testing"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
)

// TestGaussianDPFalsifier: the secure Gaussian calibrated by
// accountant.GaussianSigma(1, 1e-5, 1) passes the per-bin (ε, δ) histogram check on
// inputs 0 and 1, and the same check rejects σ/4 (true δ at ε = 1 is
// 0.153 by accountant.GaussianDelta and mpmath), so it can fail.
func TestGaussianDPFalsifier(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("statistical falsifier")
	}
	const (
		eps   = 1.0
		delta = 1e-5
		n     = 50000
	)
	sigma, err := accountant.GaussianSigma(eps, delta, 1)
	if err != nil {
		t.Fatal(err)
	}
	bins := stattest.Bins{Lo: -8, Hi: 9, N: 34}
	hist := func(s, x float64, seed uint64) []int {
		g := noise.Gaussian{Sigma: s, Src: noise.Seeded(seed)}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = g.Add(x)
		}
		return bins.Histogram(xs)
	}
	check := func(s float64, seed uint64) stattest.DPResult {
		r, err := stattest.DPCheck{Epsilon: eps, Delta: delta}.Check(hist(s, 0, seed), hist(s, 1, seed+1))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var last stattest.DPResult
	if !stattest.Vote(3, func(i int) bool { last = check(sigma, uint64(600+10*i)); return last.OK }) {
		t.Errorf("Gaussian sigma=%g rejected: %+v", sigma, last.Worst)
	}
	if d, err := accountant.GaussianDelta(sigma/4, eps, 1); err != nil || d < 0.1 {
		t.Fatalf("negative control too weak: delta(sigma/4) = %g", d)
	}
	if stattest.Vote(3, func(i int) bool { last = check(sigma/4, uint64(700+10*i)); return last.OK }) {
		t.Errorf("falsifier accepted Gaussian at sigma/4: %+v", last.Worst)
	}
}
