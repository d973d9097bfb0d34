package cip

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/tracepriv/tracepriv/gp"
)

// TestPriorPosteriorGapPaper checks the worked example under Theorem 3.1:
// lambda = 5, epsilon = 0.1 gives posterior odds above about 3.5 with
// probability 1% and above about 2 with probability 10%.
func TestPriorPosteriorGapPaper(t *testing.T) {
	for _, c := range []struct{ delta, odds float64 }{{0.01, 3.5}, {0.1, 2.0}} {
		t.Run(fmt.Sprintf("delta=%g", c.delta), func(t *testing.T) {
			g, err := PriorPosteriorGap(0.1, 5, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.1 + math.Log(1/c.delta)/4
			if math.Abs(g-want) > 1e-15 {
				t.Errorf("gap %v, want %v", g, want)
			}
			if got := math.Round(math.Exp(g)*10) / 10; got != c.odds {
				t.Errorf("delta %v: odds bound %v, paper says about %v", c.delta, math.Exp(g), c.odds)
			}
		})
	}
	for _, bad := range [][3]float64{{-1, 5, 0.1}, {0.1, 1, 0.1}, {0.1, 5, 0}, {0.1, 5, 1}} {
		if _, err := PriorPosteriorGap(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestRenyiGaussianMonteCarlo checks the closed form for unequal
// covariances against D = 1/(lambda-1) log E_P[(p/q)^(lambda-1)] estimated
// with a fixed seed, densities from gonum's distmv.
func TestRenyiGaussianMonteCarlo(t *testing.T) {
	t.Parallel()
	rng := newRNG(8)
	s1 := mat.NewSymDense(3, []float64{1, 0.3, 0.1, 0.3, 0.8, 0.2, 0.1, 0.2, 1.2})
	s2 := mat.NewSymDense(3, []float64{1.3, 0.1, 0, 0.1, 1.1, 0.4, 0, 0.4, 1.5})
	m1 := []float64{0.2, -0.1, 0.3}
	m2 := []float64{0, 0.1, 0}
	p, _ := distmv.NewNormal(m1, s1, nil)
	q, _ := distmv.NewNormal(m2, s2, nil)
	r1 := sqrtPSD(s1)
	const samples = 100000
	xs := make([][]float64, samples)
	for i := range xs {
		var x mat.VecDense
		x.MulVec(r1, stdNormals(rng, 3))
		for j := range 3 {
			x.SetVec(j, x.AtVec(j)+m1[j])
		}
		xs[i] = x.RawVector().Data
	}
	for _, lambda := range []float64{0.5, 2, 3} {
		want, err := RenyiGaussian(lambda, m1, s1, m2, s2)
		if err != nil {
			t.Fatal(err)
		}
		logs := make([]float64, samples)
		for i, x := range xs {
			logs[i] = (lambda - 1) * (p.LogProb(x) - q.LogProb(x))
		}
		got, se := logMeanExp(logs)
		got /= lambda - 1
		se = math.Abs(se / (lambda - 1))
		t.Logf("lambda=%v: closed form %.5f, Monte Carlo %.5f ± %.5f", lambda, want, got, se)
		if math.Abs(got-want) > 4*se {
			t.Errorf("lambda=%v: closed form %v, Monte Carlo %v ± %v", lambda, want, got, se)
		}
	}
	// Order 1 is the KL divergence: E_P[log p/q].
	kl, _ := RenyiGaussian(1, m1, s1, m2, s2)
	var s, s2m float64
	for _, x := range xs {
		v := p.LogProb(x) - q.LogProb(x)
		s += v
		s2m += v * v
	}
	mean := s / samples
	se := math.Sqrt((s2m/samples - mean*mean) / samples)
	if math.Abs(mean-kl) > 4*se {
		t.Errorf("KL: closed form %v, Monte Carlo %v ± %v", kl, mean, se)
	}
}

func TestRenyiGaussianKnown(t *testing.T) {
	// Equal covariances: lambda/2 d^T S^-1 d.
	s := mat.NewSymDense(2, []float64{2, 0, 0, 0.5})
	d, err := RenyiGaussian(3, []float64{1, 1}, s, nil, s)
	if err != nil || math.Abs(d-1.5*(0.5+2)) > 1e-14 {
		t.Errorf("equal covariance: %v, %v, want 3.75", d, err)
	}
	// 1-D, zero means, variances 1 and 0.25 at order 2:
	// 2*0.25 - 1 < 0, so the divergence is infinite.
	one := mat.NewSymDense(1, []float64{1})
	quarter := mat.NewSymDense(1, []float64{0.25})
	d, err = RenyiGaussian(2, nil, one, nil, quarter)
	if err != nil || !math.IsInf(d, 1) {
		t.Errorf("non-PD mixture: %v, %v, want +Inf", d, err)
	}
	// The other way round it is finite. By direct integration,
	// D_2(p||q) = log int p^2/q with p = N(0, 1/4), q = N(0, 1):
	// int (2/pi) e^{-4x^2} sqrt(2 pi) e^{x^2/2} dx = 2 sqrt(2/3.5).
	d, _ = RenyiGaussian(2, nil, quarter, nil, one)
	want := math.Log(2 * math.Sqrt(2/3.5))
	if math.Abs(d-want) > 1e-14 {
		t.Errorf("D_2(N(0,1/4)||N(0,1)) = %v, want %v", d, want)
	}
	if _, err := RenyiGaussian(0, nil, one, nil, one); err == nil {
		t.Error("order 0 accepted")
	}
}

func TestMisspecificationBound(t *testing.T) {
	// With a correctly specified prior (Delta = 0) the bound is
	// (2 lambda - 3/2)/(2 lambda - 2) eps(4 lambda - 2), which for a
	// Gaussian mechanism, eps(order) = order * c, is at least eps(lambda).
	const c = 0.05
	eps := func(o float64) float64 { return o * c }
	zero := func(float64) float64 { return 0 }
	b, err := MisspecificationBound(2, zero, eps)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2.5 / 2 * 6 * c; math.Abs(b-want) > 1e-15 {
		t.Errorf("bound %v, want %v", b, want)
	}
	del := func(o float64) float64 { return 0.01 * o }
	b, _ = MisspecificationBound(2, del, eps)
	if want := 1.5*0.04 + 0.05 + 2.5/2*6*c; math.Abs(b-want) > 1e-15 {
		t.Errorf("bound %v, want %v", b, want)
	}
	if _, err := MisspecificationBound(1, zero, eps); err == nil {
		t.Error("lambda = 1 accepted")
	}
}

// TestConditionalDelta checks the Delta of Theorem 3.3 for two RBF priors
// against RenyiGaussian evaluated directly at the extreme secret values
// x_S = +-R (basic secret, so the maximum over |x_S| <= R is at an end).
func TestConditionalDelta(t *testing.T) {
	sp, sq := rbf(3, 12), rbf(4, 12)
	for i := range 12 {
		sp.SetSym(i, i, sp.At(i, i)+0.05)
		sq.SetSym(i, i, sq.At(i, i)+0.05)
	}
	const R, order = 1.5, 2.0
	got, err := ConditionalDelta(sp, sq, Basic(5), order, R)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := gp.Condition(sp, []int{5})
	cq, _ := gp.Condition(sq, []int{5})
	want := 0.0
	for _, x := range []float64{R, -R} {
		mp, _ := cp.Mean(nil, []float64{x})
		mq, _ := cq.Mean(nil, []float64{x})
		a, err := RenyiGaussian(order, mp, cp.C, mq, cq.C)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := RenyiGaussian(order, mq, cq.C, mp, cp.C)
		want = math.Max(want, math.Max(a, b))
	}
	if relErr(got, want) > 1e-9 {
		t.Errorf("Delta %v, direct %v", got, want)
	}
	same, _ := ConditionalDelta(sp, sp, Basic(5), order, R)
	if math.Abs(same) > 1e-12 {
		t.Errorf("Delta of identical priors %v", same)
	}
}
