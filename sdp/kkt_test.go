package sdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The structured Schur-complement assembly (entry formulas for sparse
// columns, V F V products for dense ones) against tr(F_i V F_j V) computed
// with dense matrices.
func TestAssembleBlockMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, m = 7, 9
	var terms []Term
	for j := 0; j < m; j++ {
		f := NewSparse(n)
		nnz := 1 + j*j/3 // from elementary to dense
		for k := 0; k < nnz; k++ {
			f.Set(rng.IntN(n), rng.IntN(n), rng.NormFloat64())
		}
		terms = append(terms, Term{Var: j, F: f})
	}
	cp := compile(&Problem{C: make([]float64, m), LMIs: []LMI{{Size: n, Terms: terms}}})
	var dense, sparse int
	for _, c := range cp.blocks[0].cols {
		if c.dense {
			dense++
		} else {
			sparse++
		}
	}
	if dense == 0 || sparse == 0 {
		t.Fatalf("want both kinds of columns, got %d dense %d sparse", dense, sparse)
	}
	v := randomPD(rng, n, false)
	h := make([]float64, m*m)
	assembleBlock(cp.blocks[0], v, h, m)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			var a, b, ab mat.Dense
			a.Mul(terms[i].F.Dense(), v)
			b.Mul(terms[j].F.Dense(), v)
			ab.Mul(&a, &b)
			want := mat.Trace(&ab)
			if math.Abs(h[i*m+j]-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("H[%d,%d] = %.15g, want %.15g", i, j, h[i*m+j], want)
			}
		}
	}
}
