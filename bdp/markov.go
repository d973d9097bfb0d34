package bdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// checkStochastic verifies that p is a square row-stochastic matrix, each
// row summing to 1 within tol.
func checkStochastic(p [][]float64, tol float64) error {
	s := len(p)
	if s < 2 {
		return fmt.Errorf("bdp: a transition matrix needs at least 2 states, got %d", s)
	}
	for i, row := range p {
		if len(row) != s {
			return fmt.Errorf("bdp: transition matrix row %d has %d entries, want %d", i, len(row), s)
		}
		sum := 0.0
		for j, v := range row {
			if math.IsNaN(v) || v < 0 || v > 1 {
				return fmt.Errorf("bdp: transition probability P[%d][%d] = %v is not in [0, 1]", i, j, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > tol {
			return fmt.Errorf("bdp: transition matrix row %d sums to %v, not 1 (tolerance %g)", i, sum, tol)
		}
	}
	return nil
}

// NewMarkov checks a transition matrix, P[i][j] = Pr[X_{t+1} = j | X_t = i],
// and returns the Markov model with γ = max P / min P. Rows must sum to 1
// within tol; every entry must be positive (H1), otherwise γ is infinite and
// Theorem 6.20 gives nothing. The chain must also start from its stationary
// distribution (H2), an assumption about the data that P cannot show.
func NewMarkov(p [][]float64, tol float64) (Markov, error) {
	if err := checkStochastic(p, tol); err != nil {
		return Markov{}, err
	}
	lo, hi := math.Inf(1), 0.0
	for i, row := range p {
		for j, v := range row {
			if v == 0 {
				return Markov{}, fmt.Errorf("bdp: P[%d][%d] = 0: the Markov bound needs every transition probability positive (H1)", i, j)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return Markov{Gamma: hi / lo}, nil
}

// Stationary returns the stationary distribution w = wP of a transition
// matrix with all entries positive, by solving (Pᵀ − I)w = 0 with the
// normalisation Σw = 1 replacing one equation.
func Stationary(p [][]float64) ([]float64, error) {
	if err := checkStochastic(p, 1e-9); err != nil {
		return nil, err
	}
	s := len(p)
	a := mat.NewDense(s, s, nil)
	for i := range s {
		for j := range s {
			v := p[j][i]
			if i == j {
				v--
			}
			a.Set(i, j, v)
		}
	}
	b := mat.NewVecDense(s, nil)
	for j := range s {
		a.Set(s-1, j, 1)
	}
	b.SetVec(s-1, 1)
	var w mat.VecDense
	if err := w.SolveVec(a, b); err != nil {
		return nil, fmt.Errorf("bdp: no unique stationary distribution: %w", err)
	}
	out := make([]float64, s)
	for i := range out {
		out[i] = w.AtVec(i)
		if out[i] < -1e-12 {
			return nil, fmt.Errorf("bdp: stationary solve gave a negative mass %v; is the chain irreducible?", out[i])
		}
		out[i] = math.Max(out[i], 0)
	}
	return out, nil
}
