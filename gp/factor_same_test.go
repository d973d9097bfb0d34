package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// symOnly hides SymDense's raw storage, so Factorize takes its At path.
type symOnly struct{ *mat.SymDense }

// Factor solves with LAPACK directly instead of through mat.Cholesky and
// mat.TriDense (session 44: their condition estimates cost a third of
// attack's likelihood search). The results must be mat's to the last
// bit, for every caller (attack, cip, sanitize, prior): the factor, the
// log-determinant, the solves with one and several right-hand sides and
// the half solve against mat.Cholesky.LTo and mat.Dense.Solve, on sizes
// below and above LAPACK's block size, with and without jitter, from raw
// and from At-only storage. Equality is of the float64 bits, so a solve in
// another order (Trsm with U not transposed, a Lower factor) fails.
func TestFactorSameAsMatCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 32))
	cases := []struct {
		name string
		a    *mat.SymDense
	}{
		{"matern32-1", Gram(Matern32{1, 2}, Indices(1))},
		{"matern32-7", Gram(Matern32{1, 2}, Indices(7))},
		{"matern52-90", Gram(Matern52{3, 4}, Indices(90))},
		// RBF at lengthscale 10 on 50 indices needs a jitter.
		{"rbf-jitter-50", Gram(RBF{1, 10}, Indices(50))},
	}
	// A random well-conditioned matrix above the block size (64).
	n := 150
	b := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	var r mat.SymDense
	r.SymOuterK(1, b)
	for i := range n {
		r.SetSym(i, i, r.At(i, i)+float64(n))
	}
	cases = append(cases, struct {
		name string
		a    *mat.SymDense
	}{"random-150", &r})

	for _, c := range cases {
		for _, raw := range []bool{true, false} {
			var a mat.Symmetric = c.a
			name := c.name + "/raw"
			if !raw {
				a, name = symOnly{c.a}, c.name+"/at"
			}
			t.Run(name, func(t *testing.T) {
				f, err := Factorize(a, 0)
				if err != nil {
					t.Fatal(err)
				}
				n := f.Size()
				// The reference: mat.Cholesky of a + Jitter I built as
				// Factorize built it before session 44.
				ref := a
				if j := f.Jitter(); j > 0 {
					w := mat.NewSymDense(n, nil)
					w.CopySym(a)
					for i := range n {
						w.SetSym(i, i, w.At(i, i)+j)
					}
					ref = w
				}
				var ch mat.Cholesky
				if !ch.Factorize(ref) {
					t.Fatalf("mat.Cholesky fails with jitter %g", f.Jitter())
				}
				var uRef mat.TriDense
				ch.UTo(&uRef)
				u := f.U()
				for i := range n {
					for j := i; j < n; j++ {
						sameBits(t, "U", u.Data[i*u.Stride+j], uRef.At(i, j))
					}
				}
				sameBits(t, "LogDet", f.LogDet(), ch.LogDet())

				rhs := mat.NewDense(n, 3, nil)
				for i := range n {
					for j := range 3 {
						rhs.Set(i, j, rng.NormFloat64())
					}
				}
				var got, want mat.Dense
				if err := f.SolveTo(&got, rhs); err != nil {
					t.Fatal(err)
				}
				_ = ch.SolveTo(&want, rhs)
				sameDense(t, "SolveTo", &got, &want)

				col := mat.NewVecDense(n, mat.Col(nil, 1, rhs))
				var gv, wv mat.VecDense
				if err := f.SolveVecTo(&gv, col); err != nil {
					t.Fatal(err)
				}
				_ = ch.SolveVecTo(&wv, col)
				sameDense(t, "SolveVecTo", &gv, &wv)

				var l mat.TriDense
				ch.LTo(&l)
				var gh, wh mat.Dense
				if err := f.HalfSolveTo(&gh, rhs); err != nil {
					t.Fatal(err)
				}
				_ = wh.Solve(&l, rhs)
				sameDense(t, "HalfSolveTo", &gh, &wh)

				// A non-empty destination is written in place.
				view := mat.NewDense(n, 4, nil)
				sub := view.Slice(0, n, 1, 4).(*mat.Dense)
				if err := f.HalfSolveTo(sub, rhs); err != nil {
					t.Fatal(err)
				}
				sameDense(t, "HalfSolveTo into a view", view.Slice(0, n, 1, 4), &wh)

				q, err := f.Quad(col)
				if err != nil {
					t.Fatal(err)
				}
				var wq mat.Dense
				_ = wq.Solve(&l, col)
				qRef := 0.0
				for i := range n {
					qRef += wq.At(i, 0) * wq.At(i, 0)
				}
				sameBits(t, "Quad", q, qRef)

				// The mat.Cholesky view of the factor is the same factor.
				var uc mat.TriDense
				f.Cholesky().UTo(&uc)
				sameDense(t, "Cholesky().UTo", &uc, &uRef)
			})
		}
	}
}

func sameBits(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("%s: %v, mat's %v (bits differ)", what, got, want)
	}
}

func sameDense(t *testing.T, what string, got, want mat.Matrix) {
	t.Helper()
	r, c := want.Dims()
	if gr, gc := got.Dims(); gr != r || gc != c {
		t.Fatalf("%s: %dx%d, want %dx%d", what, gr, gc, r, c)
	}
	for i := range r {
		for j := range c {
			if math.Float64bits(got.At(i, j)) != math.Float64bits(want.At(i, j)) {
				t.Fatalf("%s[%d,%d]: %v, mat's %v (bits differ)", what, i, j, got.At(i, j), want.At(i, j))
			}
		}
	}
}

// BenchmarkFactorHalfSolve is a likelihood's linear algebra at attack's
// size (n = 300: factorise, whiten two columns, log-determinant), through
// Factor and through mat.Cholesky and mat.TriDense as Factor did before
// session 44 (`go test ./gp -run XXX -bench FactorHalfSolve`).
func BenchmarkFactorHalfSolve(b *testing.B) {
	const n = 300
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = 5 * float64(i)
	}
	a := Gram(Matern52{Variance: 4950, Lengthscale: 30}, ts)
	for i := range n {
		a.SetSym(i, i, a.At(i, i)+50)
	}
	rhs := mat.NewDense(n, 2, nil)
	for i := range n {
		rhs.Set(i, 0, float64(i%7))
		rhs.Set(i, 1, 1)
	}
	b.Run("gp.Factor", func(b *testing.B) {
		for range b.N {
			f, err := Factorize(a, 0)
			if err != nil {
				b.Fatal(err)
			}
			var w mat.Dense
			_ = f.HalfSolveTo(&w, rhs)
			_ = f.LogDet()
		}
	})
	b.Run("mat.Cholesky", func(b *testing.B) {
		for range b.N {
			var ch mat.Cholesky
			if !ch.Factorize(a) {
				b.Fatal("not positive definite")
			}
			var l mat.TriDense
			ch.LTo(&l)
			var w mat.Dense
			_ = w.Solve(&l, rhs)
			_ = ch.LogDet()
		}
	})
}
