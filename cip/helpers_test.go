package cip

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// Test-only sampling: a seeded math/rand/v2 generator and a symmetric
// square root from an eigendecomposition, which works for the singular
// covariances (rank-one noise, near-singular conditional priors) these
// tests need.

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// sqrtPSD returns R with R R^T = a, negative rounding eigenvalues clamped.
func sqrtPSD(a mat.Symmetric) *mat.Dense {
	var e mat.EigenSym
	if !e.Factorize(a, true) {
		panic("eigendecomposition failed")
	}
	vals := e.Values(nil)
	var v mat.Dense
	e.VectorsTo(&v)
	n := len(vals)
	r := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			r.Set(i, j, v.At(i, j)*math.Sqrt(math.Max(vals[j], 0)))
		}
	}
	return r
}

func stdNormals(rng *rand.Rand, n int) *mat.VecDense {
	z := mat.NewVecDense(n, nil)
	for i := range n {
		z.SetVec(i, rng.NormFloat64())
	}
	return z
}

// randomNoise returns a random full-rank correlated noise covariance
// (cross terms everywhere) with trace budget.
func randomNoise(rng *rand.Rand, n int, budget float64) *mat.SymDense {
	b := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	g := mat.NewSymDense(n, nil)
	g.SymOuterK(1, b)
	for i := range n {
		g.SetSym(i, i, g.At(i, i)+0.1*float64(n))
	}
	g.ScaleSym(budget/mat.Trace(g), g)
	return g
}

// randomRankOne returns budget * u u^T / ||u||^2 for a random u.
func randomRankOne(rng *rand.Rand, n int, budget float64) *mat.SymDense {
	u := stdNormals(rng, n)
	g := mat.NewSymDense(n, nil)
	g.SymRankOne(g, budget/mat.Dot(u, u), u)
	return g
}

func rbf(l float64, n int) *mat.SymDense {
	return gp.Gram(gp.RBF{Variance: 1, Lengthscale: l}, gp.Indices(n))
}

func periodic(l float64, n int) *mat.SymDense {
	return gp.Gram(gp.Periodic{Variance: 1, Lengthscale: l, Period: 24}, gp.Indices(n))
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// bruteLossMatrix forms At^T (Ct + SigmaG)^-1 At with an explicit dense
// inverse, for well-conditioned test settings only; it returns the matrix
// and the mean difference map At (n x k, original coordinates).
func bruteLossMatrix(sigma, sigmaG mat.Symmetric, s []int) (*mat.SymDense, *mat.Dense, *mat.SymDense) {
	n := sigma.SymmetricDim()
	u := gp.Complement(s, n)
	var sss mat.Dense
	if err := sss.Inverse(gp.Sub(sigma, s)); err != nil {
		panic(err)
	}
	var a mat.Dense
	a.Mul(gp.Block(sigma, u, s), &sss)
	var asu mat.Dense
	asu.Mul(&a, gp.Block(sigma, s, u))
	k := mat.NewSymDense(n, nil)
	k.CopySym(sigmaG)
	for i, p := range u {
		for j, q := range u {
			if j >= i {
				k.SetSym(p, q, k.At(p, q)+sigma.At(p, q)-asu.At(i, j))
			}
		}
	}
	at := mat.NewDense(n, len(s), nil)
	for c, p := range s {
		at.Set(p, c, 1)
	}
	for r, p := range u {
		for c := range s {
			at.Set(p, c, a.At(r, c))
		}
	}
	var kinv mat.Dense
	if err := kinv.Inverse(k); err != nil {
		panic(err)
	}
	var t1, q mat.Dense
	t1.Mul(at.T(), &kinv)
	q.Mul(&t1, at)
	return symmetrize(&q), at, k
}
