package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// sampleGP draws m series of N(0, k(ts) + noise I) with a seeded generator
// and an explicit Cholesky factor (tests only).
func sampleGP(t *testing.T, k Kernel, ts []float64, noise float64, m int, seed uint64) []Series {
	t.Helper()
	g := Gram(k, ts)
	n := len(ts)
	for i := range n {
		g.SetSym(i, i, g.At(i, i)+noise)
	}
	f, err := Factorize(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	var l mat.TriDense
	f.Cholesky().LTo(&l)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Series, m)
	for s := range out {
		z := mat.NewVecDense(n, nil)
		for i := range n {
			z.SetVec(i, rng.NormFloat64())
		}
		var y mat.VecDense
		y.MulVec(&l, z)
		out[s] = Series{T: ts, Y: append([]float64(nil), y.RawVector().Data...)}
	}
	return out
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}
