package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestHeldOutLogLikelihood checks log p(test | train) against the
// conditional Gaussian computed directly: mean K_*t (K_tt + s I)^-1 y_t,
// covariance K_** + s I - K_*t (K_tt + s I)^-1 K_t*, on a small,
// well-conditioned example (explicit inverse allowed in the check only).
func TestHeldOutLogLikelihood(t *testing.T) {
	k := Matern32{Variance: 2, Lengthscale: 3}
	noise := 0.1
	all := sampleGP(t, k, Indices(12), noise, 1, 3)[0]
	var train, test Series
	for i := range all.T {
		if i%2 == 0 {
			train.T, train.Y = append(train.T, all.T[i]), append(train.Y, all.Y[i])
		} else {
			test.T, test.Y = append(test.T, all.T[i]), append(test.Y, all.Y[i])
		}
	}
	got, jit, err := HeldOutLogLikelihood(k, noise, train, test)
	if err != nil {
		t.Fatal(err)
	}
	nt, ns := len(train.T), len(test.T)
	ktt := mat.NewDense(nt, nt, nil)
	kst := mat.NewDense(ns, nt, nil)
	kss := mat.NewDense(ns, ns, nil)
	for i := range nt {
		for j := range nt {
			ktt.Set(i, j, k.Eval(train.T[i], train.T[j]))
		}
		ktt.Set(i, i, ktt.At(i, i)+noise)
	}
	for i := range ns {
		for j := range nt {
			kst.Set(i, j, k.Eval(test.T[i], train.T[j]))
		}
		for j := range ns {
			kss.Set(i, j, k.Eval(test.T[i], test.T[j]))
		}
		kss.Set(i, i, kss.At(i, i)+noise)
	}
	var inv, a, cov mat.Dense
	if err := inv.Inverse(ktt); err != nil {
		t.Fatal(err)
	}
	a.Mul(kst, &inv)
	var mean mat.VecDense
	mean.MulVec(&a, mat.NewVecDense(nt, train.Y))
	cov.Mul(&a, kst.T())
	cov.Sub(kss, &cov)
	r := mat.NewVecDense(ns, nil)
	for i := range ns {
		r.SetVec(i, test.Y[i]-mean.AtVec(i))
	}
	var cinv mat.Dense
	if err := cinv.Inverse(&cov); err != nil {
		t.Fatal(err)
	}
	want := -0.5*mat.Inner(r, &cinv, r) - 0.5*math.Log(mat.Det(&cov)) - 0.5*float64(ns)*math.Log(2*math.Pi)
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) || jit != 0 {
		t.Errorf("held-out log-likelihood %v, want %v (jitter %v)", got, want, jit)
	}
	if _, _, err := HeldOutLogLikelihood(k, noise, train, Series{}); err == nil {
		t.Error("empty test series accepted")
	}
}

// TestFitNoiseInit: a fitted nugget starts at NoiseInit; a fixed one ignores it.
func TestFitNoiseInit(t *testing.T) {
	data := sampleGP(t, RBF{1, 4}, Indices(30), 0.2, 1, 5)
	a, err := Fit(RBF{1, 4}, data, FitOptions{Noise: Bound{0.01, 1}, NoiseInit: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(RBF{1, 4}, data, FitOptions{Noise: Bound{0.01, 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Both starts reach the same optimum of this well-posed problem.
	if math.Abs(a.LogLikelihood-b.LogLikelihood) > 1e-3 || math.Abs(a.Noise/b.Noise-1) > 0.05 {
		t.Errorf("from 0.2: %v (nugget %v); from the middle: %v (nugget %v)", a.LogLikelihood, a.Noise, b.LogLikelihood, b.Noise)
	}
	c, err := Fit(RBF{1, 4}, data, FitOptions{Noise: Bound{0.3, 0.3}, NoiseInit: 0.2})
	if err != nil || c.Noise != 0.3 {
		t.Errorf("fixed nugget: %v, %v", c, err)
	}
}
