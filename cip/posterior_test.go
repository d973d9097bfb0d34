package cip

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// TestPosteriorBruteForce compares the adversary's posterior with the
// joint-Gaussian formulas (Sigma^-1 + SigmaG^-1)^-1 and
// mu + Sigma (Sigma + SigmaG)^-1 (z - mu), with explicit inverses on a
// well-conditioned setting.
func TestPosteriorBruteForce(t *testing.T) {
	sigma := gp.Gram(gp.Sum{K1: gp.Matern32{Variance: 1, Lengthscale: 2}, K2: gp.RBF{Variance: 0.5, Lengthscale: 4}}, gp.Indices(12))
	g := randomNoise(newRNG(6), 12, 3)
	p, err := NewPosterior(sigma, g)
	if err != nil {
		t.Fatal(err)
	}
	var si, gi, sum, want mat.Dense
	si.Inverse(sigma)
	gi.Inverse(g)
	sum.Add(&si, &gi)
	if err := want.Inverse(&sum); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(p.Cov, &want, 1e-12) {
		t.Errorf("posterior covariance differs from (Sigma^-1 + SigmaG^-1)^-1")
	}
	mu := make([]float64, 12)
	z := make([]float64, 12)
	for i := range z {
		mu[i] = 0.1 * float64(i)
		z[i] = math.Sin(float64(i))
	}
	got, err := p.Mean(mu, z)
	if err != nil {
		t.Fatal(err)
	}
	var m, minv mat.Dense
	m.Add(sigma, g)
	minv.Inverse(&m)
	d := mat.NewVecDense(12, nil)
	for i := range z {
		d.SetVec(i, z[i]-mu[i])
	}
	var w, x mat.VecDense
	w.MulVec(&minv, d)
	x.MulVec(sigma, &w)
	for i := range z {
		if math.Abs(got[i]-mu[i]-x.AtVec(i)) > 1e-12 {
			t.Errorf("mean[%d] = %v, want %v", i, got[i], mu[i]+x.AtVec(i))
		}
	}
	// The paper's metrics.
	ts, _ := p.TwoSigma(Basic(3))
	if math.Abs(ts-2*math.Sqrt(want.At(3, 3))) > 1e-12 {
		t.Errorf("TwoSigma basic = %v", ts)
	}
	blk := mat.NewSymDense(2, []float64{want.At(3, 3), want.At(3, 7), want.At(7, 3), want.At(7, 7)})
	lo, _, _ := eigExtremes(blk)
	tc, _ := p.TwoSigma(Compound(3, 7))
	if math.Abs(tc-2*math.Sqrt(lo)) > 1e-12 {
		t.Errorf("TwoSigma compound = %v, want %v", tc, 2*math.Sqrt(lo))
	}
	mean := 0.0
	for i := range 12 {
		mean += want.At(i, i) / 12
	}
	if got := p.MeanTwoSigma(nil); math.Abs(got-2*math.Sqrt(mean)) > 1e-12 {
		t.Errorf("MeanTwoSigma = %v, want %v", got, 2*math.Sqrt(mean))
	}
}

// TestPosteriorSingular checks the posterior when Sigma is singular in
// floating point and the noise is rank one, where the textbook inverse
// form cannot be used: it must stay symmetric PSD and below the prior.
func TestPosteriorSingular(t *testing.T) {
	sigma := rbf(10, 50)
	d, err := OptimalBasic(sigma, 24, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPosterior(sigma, d.SigmaG)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		v := p.Cov.At(i, i)
		if v < -1e-12 || v > sigma.At(i, i)+1e-12 {
			t.Errorf("posterior variance %d = %v outside [0, %v]", i, v, sigma.At(i, i))
		}
	}
	// Basic secret: (E1) equals the precision gain 1/p_ii - 1/Sigma_ii.
	gain := 1/p.Cov.At(24, 24) - 1
	if relErr(gain, d.LossFactor) > 1e-6 {
		t.Errorf("precision gain %v, certified loss %v", gain, d.LossFactor)
	}
}

func TestBaselines(t *testing.T) {
	u, err := IndependentUniform(50, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(mat.Trace(u)-1) > 1e-14 || u.At(3, 3) != 0.02 || u.At(3, 4) != 0 {
		t.Errorf("uniform baseline wrong")
	}
	c, err := IndependentConcentrated(50, Compound(24, 25), 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.At(24, 24) != 0.5 || c.At(25, 25) != 0.5 || c.At(0, 0) != 0 || mat.Trace(c) != 1 {
		t.Errorf("concentrated baseline wrong")
	}
	if _, err := IndependentUniform(5, -1); err == nil {
		t.Error("negative budget accepted")
	}
	if _, err := IndependentConcentrated(5, Basic(7), 1); err == nil {
		t.Error("bad secret accepted")
	}
}
