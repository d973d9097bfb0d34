package bdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/param"
)

// maxExactBlock caps the block size for CovarianceFactor, whose cost grows
// as m·2^{m−1} linear solves.
const maxExactBlock = 16

// CovarianceFactor returns the BDP leakage factor of Gaussian-correlated
// records with covariance sigma, computed exactly: a τ-DP mechanism is
// CovarianceFactor·τ-BDP (use it in Scaled). It is an extension, not a
// result stated in the thesis: it evaluates the per-adversary bound of
// Lemma 6.10 exactly for the given covariance matrix instead of bounding it
// by Theorem 6.11's worst case h(m, ρ). For every block of correlated records (connected components of
// |Σ_ij| > tol·max Σ_ii), target i and known set K of the block with
// unknowns U ≠ ∅, T = K ∪ {i}, it computes ‖Σ_{U;T} Σ_T⁻¹ e_i‖₁ + 1 and
// returns the maximum (1 if no block has two records). Lemma 6.10 holds for
// any positive definite Σ, so the factor needs neither a constant diagonal
// nor ρ(m−2) < 1, and it is never larger than h(m, ρ) where that applies.
// Like Theorem 6.14 it bounds clipped (εℓ₁)-private mechanisms.
func CovarianceFactor(sigma mat.Symmetric, tol float64) (float64, error) {
	n := sigma.SymmetricDim()
	var ch mat.Cholesky
	if n == 0 || !ch.Factorize(sigma) {
		return 0, fmt.Errorf("bdp: covariance matrix is empty or not positive definite")
	}
	scale := 0.0
	for i := range n {
		scale = math.Max(scale, sigma.At(i, i))
	}
	// Blocks by depth-first search over the correlation graph.
	block := make([]int, n)
	for i := range block {
		block[i] = -1
	}
	var blocks [][]int
	for s := range n {
		if block[s] >= 0 {
			continue
		}
		id := len(blocks)
		stack, members := []int{s}, []int{}
		block[s] = id
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			members = append(members, v)
			for u := range n {
				if block[u] < 0 && u != v && math.Abs(sigma.At(v, u)) > tol*scale {
					block[u] = id
					stack = append(stack, u)
				}
			}
		}
		blocks = append(blocks, members)
	}
	h := 1.0
	for _, b := range blocks {
		if len(b) > maxExactBlock {
			return 0, fmt.Errorf("bdp: a block of %d correlated records is too large for the exact factor (max %d)", len(b), maxExactBlock)
		}
		err := eachAdversary(b, func(target int, known, unknown []int) error {
			if len(unknown) == 0 {
				return nil
			}
			v, err := lemma610Norm(sigma, append(known, target), unknown)
			if err != nil {
				return err
			}
			h = math.Max(h, v+1)
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return h, nil
}

// lemma610Norm returns ‖Σ_{U;T} Σ_T⁻¹ e‖₁ with e the last index of t.
func lemma610Norm(sigma mat.Symmetric, t, u []int) (float64, error) {
	st := mat.NewSymDense(len(t), nil)
	for i, a := range t {
		for j := i; j < len(t); j++ {
			st.SetSym(i, j, sigma.At(a, t[j]))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(st) {
		return 0, fmt.Errorf("bdp: Σ_T is not positive definite for T = %v", t)
	}
	e := mat.NewVecDense(len(t), nil)
	e.SetVec(len(t)-1, 1)
	var y mat.VecDense
	if err := ch.SolveVecTo(&y, e); err != nil {
		return 0, fmt.Errorf("bdp: solving Σ_T y = e for T = %v: %w", t, err)
	}
	norm := 0.0
	for _, a := range u {
		s := 0.0
		for j, b := range t {
			s += sigma.At(a, b) * y.AtVec(j)
		}
		norm += math.Abs(s)
	}
	return norm, nil
}

// Scaled is a calibrator with a fixed leakage factor: a τ-DP mechanism is
// H·τ-BDP. Use it for factors computed elsewhere, such as CovarianceFactor.
type Scaled struct {
	Label string
	H     float64
}

// Name implements Calibrator.
func (s Scaled) Name() string { return s.Label }

func (s Scaled) check() error {
	return param.AtLeast("H", s.H, 1)
}

// Tau implements Calibrator: ε/H.
func (s Scaled) Tau(eps float64) (float64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	return eps / s.H, nil
}

// Leakage implements Calibrator: H·τ.
func (s Scaled) Leakage(tau float64) (float64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if err := checkTau(tau); err != nil {
		return 0, err
	}
	return s.H * tau, nil
}
