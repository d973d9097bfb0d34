package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestConditionBruteForce checks A and C against the precision matrix
// Lambda = Sigma^-1 of the joint Gaussian: C = (Lambda_UU)^-1 and
// A = -(Lambda_UU)^-1 Lambda_US, a different route from Condition's.
func TestConditionBruteForce(t *testing.T) {
	sigma := Gram(Sum{Matern32{1, 2}, RBF{0.5, 1}}, Indices(9))
	var prec mat.Dense
	if err := prec.Inverse(sigma); err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]int{{4}, {0, 8}, {5, 2, 3}} {
		c, err := Condition(sigma, s)
		if err != nil {
			t.Fatal(err)
		}
		u := Complement(s, 9)
		luu := Block(&prec, u, u)
		var cWant mat.Dense
		if err := cWant.Inverse(luu); err != nil {
			t.Fatal(err)
		}
		var aWant mat.Dense
		aWant.Mul(&cWant, Block(&prec, u, s))
		aWant.Scale(-1, &aWant)
		if !mat.EqualApprox(c.C, &cWant, 1e-12) {
			t.Errorf("S=%v: C differs\n%v\n%v", s, mat.Formatted(c.C), mat.Formatted(&cWant))
		}
		if !mat.EqualApprox(c.A, &aWant, 1e-12) {
			t.Errorf("S=%v: A differs", s)
		}
		// Mean with a non-zero prior mean.
		mu := make([]float64, 9)
		for i := range mu {
			mu[i] = float64(i) * 0.3
		}
		xs := make([]float64, len(s))
		for i := range xs {
			xs[i] = 1 - float64(i)
		}
		m, err := c.Mean(mu, xs)
		if err != nil {
			t.Fatal(err)
		}
		for r := range u {
			want := mu[u[r]]
			for j, p := range c.S {
				want += aWant.At(r, j) * (xs[j] - mu[p])
			}
			if math.Abs(m[r]-want) > 1e-12 {
				t.Errorf("S=%v: mean[%d] = %v, want %v", s, r, m[r], want)
			}
		}
	}
}

func TestConditionErrors(t *testing.T) {
	sigma := Gram(RBF{1, 1}, Indices(4))
	for _, s := range [][]int{{}, {4}, {-1}, {1, 1}} {
		if _, err := Condition(sigma, s); err == nil {
			t.Errorf("S=%v accepted", s)
		}
	}
}
