package sdp

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// randomFeasibleSDPA returns an SDPA problem with strictly feasible primal
// and dual, hence a finite optimum: a_i = tr(A_i X0) and C = sum y0_i A_i - Z0
// with X0, Z0 positive definite. Blocks may include a diagonal (LP) block.
func randomFeasibleSDPA(rng *rand.Rand, m int, blocks []int) *SDPA {
	p := &SDPA{M: m, Blocks: blocks, A: make([]float64, m)}
	y0 := make([]float64, m)
	for i := range y0 {
		y0[i] = rng.NormFloat64()
	}
	for b, size := range blocks {
		n := size
		diag := size < 0
		if diag {
			n = -size
		}
		x0 := randomPD(rng, n, diag)
		z0 := randomPD(rng, n, diag)
		c := mat.NewSymDense(n, nil)
		c.ScaleSym(-1, z0)
		for i := 0; i < m; i++ {
			ai := mat.NewSymDense(n, nil)
			// Sparse-ish random constraint matrices with a few entries.
			for k := 0; k < 1+n/2; k++ {
				r, s := rng.IntN(n), rng.IntN(n)
				if diag {
					s = r
				}
				ai.SetSym(r, s, ai.At(r, s)+rng.NormFloat64())
			}
			p.A[i] += symDot(ai, x0)
			for r := 0; r < n; r++ {
				for s := r; s < n; s++ {
					if v := ai.At(r, s); v != 0 {
						p.Entries = append(p.Entries, SDPAEntry{Mat: i + 1, Block: b, I: r, J: s, V: v})
					}
				}
			}
			c.AddSym(c, scaledSym(y0[i], ai))
		}
		for r := 0; r < n; r++ {
			for s := r; s < n; s++ {
				if diag && s != r {
					continue
				}
				if v := c.At(r, s); v != 0 {
					p.Entries = append(p.Entries, SDPAEntry{Mat: 0, Block: b, I: r, J: s, V: v})
				}
			}
		}
	}
	return p
}

func scaledSym(a float64, m *mat.SymDense) *mat.SymDense {
	out := mat.NewSymDense(m.SymmetricDim(), nil)
	out.ScaleSym(a, m)
	return out
}

func randomPD(rng *rand.Rand, n int, diag bool) *mat.SymDense {
	out := mat.NewSymDense(n, nil)
	if diag {
		for i := 0; i < n; i++ {
			out.SetSym(i, i, 0.1+rng.Float64())
		}
		return out
	}
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	out.SymOuterK(1/float64(n), g)
	for i := 0; i < n; i++ {
		out.SetSym(i, i, out.At(i, i)+0.1)
	}
	return out
}
