package cip

import (
	"math"

	"github.com/tracepriv/tracepriv/param"
	"gonum.org/v1/gonum/mat"
)

func checkBudget(budget float64) error {
	if !(budget > 0) || math.IsInf(budget, 1) {
		return param.Positive("budget", budget)
	}
	return nil
}

// IndependentUniform returns the Approach C baseline "independent /
// uniform": isotropic noise (budget/n) I, total variance budget.
func IndependentUniform(n int, budget float64) (*mat.SymDense, error) {
	if n < 1 {
		return nil, param.AtLeastInt("n", n, 1)
	}
	if err := checkBudget(budget); err != nil {
		return nil, err
	}
	g := mat.NewSymDense(n, nil)
	for i := range n {
		g.SetSym(i, i, budget/float64(n))
	}
	return g, nil
}

// IndependentConcentrated returns the Approach C baseline "independent /
// concentrated": the whole budget as independent noise on the secret's
// coordinates, split evenly for a compound secret, nothing elsewhere.
func IndependentConcentrated(n int, s Secret, budget float64) (*mat.SymDense, error) {
	if err := s.Validate(n); err != nil {
		return nil, err
	}
	if err := checkBudget(budget); err != nil {
		return nil, err
	}
	g := mat.NewSymDense(n, nil)
	for _, i := range s.Indices {
		g.SetSym(i, i, budget/float64(len(s.Indices)))
	}
	return g, nil
}
