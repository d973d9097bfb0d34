package gp

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestFactorizeJitter(t *testing.T) {
	// A well-conditioned Gram matrix needs no jitter.
	f, err := Factorize(Gram(Matern32{1, 2}, Indices(30)), 0)
	if err != nil || f.Jitter() != 0 {
		t.Fatalf("Matern32: jitter %v, err %v", f.Jitter(), err)
	}
	// An RBF at lengthscale 10 on 50 indices is singular in floating
	// point: the factorisation needs, and reports, a small jitter.
	g := Gram(RBF{1, 10}, Indices(50))
	var plain mat.Cholesky
	if plain.Factorize(g) {
		t.Skip("RBF(10) Gram factorised without jitter on this platform")
	}
	f, err = Factorize(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !(f.Jitter() > 0 && f.Jitter() <= DefaultMaxJitter) {
		t.Errorf("jitter %v not in (0, %v]", f.Jitter(), DefaultMaxJitter)
	}
	// The factor is of g + jitter I.
	var r mat.SymDense
	f.Cholesky().ToSym(&r)
	for i := range 50 {
		if d := r.At(i, i) - g.At(i, i) - f.Jitter(); math.Abs(d) > 1e-12 {
			t.Fatalf("diagonal %d off by %v", i, d)
		}
	}
}

func TestFactorizeIndefinite(t *testing.T) {
	a := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	if _, err := Factorize(a, 0); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("indefinite matrix: err = %v", err)
	}
}

func TestQuadAndPseudoSolve(t *testing.T) {
	a := mat.NewSymDense(3, []float64{4, 1, 0, 1, 3, 1, 0, 1, 2})
	b := mat.NewVecDense(3, []float64{1, -2, 0.5})
	f, err := Factorize(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		t.Fatal(err)
	}
	var x mat.VecDense
	x.MulVec(&inv, b)
	want := mat.Dot(b, &x)
	q, err := f.Quad(b)
	if err != nil || relErr(q, want) > 1e-13 {
		t.Errorf("Quad = %v, want %v (err %v)", q, want, err)
	}
	e, err := FactorizeEigen(a)
	if err != nil {
		t.Fatal(err)
	}
	var y mat.VecDense
	e.PseudoSolveVecTo(&y, b)
	for i := range 3 {
		if math.Abs(y.AtVec(i)-x.AtVec(i)) > 1e-13 {
			t.Errorf("pseudo-solve[%d] = %v, want %v", i, y.AtVec(i), x.AtVec(i))
		}
	}
	// On a singular matrix the pseudo-solve ignores the null space.
	s := mat.NewSymDense(2, []float64{1, 1, 1, 1})
	es, _ := FactorizeEigen(s)
	var z mat.VecDense
	es.PseudoSolveVecTo(&z, mat.NewVecDense(2, []float64{2, 0}))
	if math.Abs(z.AtVec(0)-0.5) > 1e-14 || math.Abs(z.AtVec(1)-0.5) > 1e-14 {
		t.Errorf("pseudo-solve on singular = %v, want [0.5 0.5]", z.RawVector().Data)
	}
}
