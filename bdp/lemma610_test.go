package bdp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/noise"
)

func TestLemma610FactorKnown(t *testing.T) {
	// Equicorrelated m = 3, ρ = 0.275 (thesis_part3 §1.3): 1 + 2ρ = 1.55,
	// attained with K = ∅, against h(3, 0.275) = 1.8534.
	h, err := CovarianceFactor(Equicorrelated(3, 4, 0.275), 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "equicorrelated", h, 1.55, 1e-12)
	// m = 2: exactly 1 + ρ, equal to h(2, ρ).
	h, _ = CovarianceFactor(Equicorrelated(2, 9, 0.45), 1e-12)
	near(t, "pair", h, 1.45, 1e-12)
	// Independent records: 1.
	h, _ = CovarianceFactor(mat.NewSymDense(3, []float64{2, 0, 0, 0, 2, 0, 0, 0, 2}), 1e-12)
	near(t, "independent", h, 1, 0)
}

// The exact factor never exceeds Theorem 6.11's closed form on random
// limited covariance matrices (the notes found no violation in 2,738).
func TestLemma610FactorBelowClosedForm(t *testing.T) {
	src := noise.Seeded(8)
	for trial := 0; trial < 300; trial++ {
		m := 2 + trial%5
		// A random correlation matrix R, shrunk towards I so that
		// ρ(m−2) < 1: C = (1−s)I + sR is positive definite.
		a := mat.NewDense(m, m+1, nil)
		for i := range m {
			for j := range m + 1 {
				a.Set(i, j, stdNormal(src))
			}
		}
		var r mat.SymDense
		r.SymOuterK(1, a)
		d := make([]float64, m)
		for i := range m {
			d[i] = math.Sqrt(r.At(i, i))
		}
		s := 0.95 * uniform01(src)
		if m > 2 {
			s /= float64(m - 2)
		}
		c := mat.NewSymDense(m, nil)
		rho := 0.0
		for i := range m {
			for j := i; j < m; j++ {
				v := s * r.At(i, j) / (d[i] * d[j])
				if i == j {
					v = 1
				} else {
					rho = math.Max(rho, math.Abs(v))
				}
				c.SetSym(i, j, v)
			}
		}
		exact, err := CovarianceFactor(c, 1e-12)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Gaussian{M: m, Rho: rho}.Factor()
		if err != nil {
			t.Fatal(err)
		}
		if exact > h+1e-12 {
			t.Errorf("m=%d ρ=%.4f: exact factor %v above h = %v", m, rho, exact, h)
		}
		if m == 2 {
			near(t, "m=2 exact", exact, h, 1e-12)
		}
	}
}
