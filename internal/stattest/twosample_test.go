package stattest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// KS2 accepts two samples of one law and rejects a 40% change of scale; D
// of two disjoint samples is 1, of identical ones 0.
func TestKS2(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, b, c := make([]float64, 4000), make([]float64, 3000), make([]float64, 3000)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	for i := range b {
		b[i] = r.NormFloat64()
		c[i] = 1.4 * r.NormFloat64()
	}
	if _, p := KS2(a, b); p < 1e-4 {
		t.Errorf("same law rejected, p = %g", p)
	}
	if d, p := KS2(a, c); p > 1e-6 {
		t.Errorf("scale 1.4 accepted: D = %g, p = %g", d, p)
	}
	if d, _ := KS2([]float64{1, 2}, []float64{3, 4}); d != 1 {
		t.Errorf("disjoint samples: D = %g", d)
	}
	if d, p := KS2([]float64{1, 2, 2}, []float64{1, 2, 2}); d != 0 || p != 1 {
		t.Errorf("identical samples: D = %g, p = %g", d, p)
	}
}

// The covariance standard error matches the spread of sample covariances.
func TestCovarianceSE(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, reps = 200, 3000
	rho := 0.6
	covs := make([]float64, reps)
	for k := range covs {
		s := 0.0
		for range n {
			x := r.NormFloat64()
			y := rho*x + math.Sqrt(1-rho*rho)*r.NormFloat64()
			s += 2 * x * 3 * y
		}
		covs[k] = s / n
	}
	m := SampleMoments(covs)
	se := CovarianceSE(4, 9, 6*rho, n)
	if d := math.Abs(math.Sqrt(m.Variance) - se); d > 0.05*se {
		t.Errorf("spread of sample covariances %.4g, CovarianceSE %.4g", math.Sqrt(m.Variance), se)
	}
}
