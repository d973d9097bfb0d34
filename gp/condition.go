package gp

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Conditional is the law of X_U given X_S for X ~ N(mu, Sigma):
// mean mu_U + A (x_S - mu_S) and covariance C.
type Conditional struct {
	S, U []int         // the conditioning indices (as given) and the rest, ascending
	A    *mat.Dense    // Sigma_US Sigma_SS^-1, |U| x |S|
	C    *mat.SymDense // Sigma_U|S = Sigma_UU - Sigma_US Sigma_SS^-1 Sigma_SU
	// Jitter is the diagonal jitter Factorize needed on Sigma_SS.
	Jitter float64
}

// CheckIndices reports whether idx is a non-empty set of distinct indices
// in [0, n).
func CheckIndices(idx []int, n int) error {
	if len(idx) == 0 {
		return fmt.Errorf("gp: empty index set")
	}
	seen := make(map[int]bool, len(idx))
	for _, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("gp: index %d out of range [0, %d)", i, n)
		}
		if seen[i] {
			return fmt.Errorf("gp: index %d repeated", i)
		}
		seen[i] = true
	}
	return nil
}

// Complement returns the indices of [0, n) not in idx, ascending.
func Complement(idx []int, n int) []int {
	in := make([]bool, n)
	for _, i := range idx {
		in[i] = true
	}
	var u []int
	for i := range n {
		if !in[i] {
			u = append(u, i)
		}
	}
	return u
}

// Condition computes the conditional law of X_U given X_S for
// X ~ N(., sigma). C is formed as Sigma_UU - W^T W with W = L^-1 Sigma_SU
// (Sigma_SS = L L^T), so it is symmetric by construction; no inverse is
// formed.
func Condition(sigma mat.Symmetric, s []int) (*Conditional, error) {
	n := sigma.SymmetricDim()
	if err := CheckIndices(s, n); err != nil {
		return nil, err
	}
	s = slices.Clone(s)
	u := Complement(s, n)
	f, err := Factorize(Sub(sigma, s), 0)
	if err != nil {
		return nil, fmt.Errorf("gp: condition: Sigma_SS: %w", err)
	}
	c := &Conditional{S: s, U: u, Jitter: f.Jitter()}
	if len(u) == 0 {
		c.A = &mat.Dense{}
		c.C = &mat.SymDense{}
		return c, nil
	}
	ssu := Block(sigma, s, u)
	var at mat.Dense // Sigma_SS^-1 Sigma_SU = A^T
	if err := f.SolveTo(&at, ssu); err != nil {
		return nil, err
	}
	c.A = mat.DenseCopyOf(at.T())
	var w mat.Dense
	if err := f.HalfSolveTo(&w, ssu); err != nil {
		return nil, err
	}
	cc := Sub(sigma, u)
	cc.SymRankK(cc, -1, w.T())
	c.C = cc
	return c, nil
}

// Mean returns mu_U + A (xs - mu_S), where mu is the full mean vector
// (nil for zero) and xs the values at S in the order of c.S.
func (c *Conditional) Mean(mu, xs []float64) ([]float64, error) {
	if len(xs) != len(c.S) {
		return nil, fmt.Errorf("gp: %d conditioning values for %d indices", len(xs), len(c.S))
	}
	d := make([]float64, len(xs))
	for i, p := range c.S {
		d[i] = xs[i]
		if mu != nil {
			d[i] -= mu[p]
		}
	}
	m := make([]float64, len(c.U))
	if len(c.U) == 0 {
		return m, nil
	}
	mv := mat.NewVecDense(len(m), m)
	mv.MulVec(c.A, mat.NewVecDense(len(d), d))
	if mu != nil {
		for i, p := range c.U {
			m[i] += mu[p]
		}
	}
	return m, nil
}
