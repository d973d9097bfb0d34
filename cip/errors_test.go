package cip

import (
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// TestNumericalErrorsAreValues: a numerical failure is reachable by
// errors.Is (gp.ErrNotPositiveDefinite, ErrSolverStatus, …), never by its
// text, and is no *param.Error: the input was well formed. Bad input is a
// *param.Error naming the parameter. No error starts with the package's
// name; the caller adds its context once.
func TestNumericalErrorsAreValues(t *testing.T) {
	// Two points at one place: the compound secret's prior block is
	// singular.
	singular := mat.NewSymDense(3, []float64{1, 1, 0, 1, 1, 0, 0, 0, 1})
	noise := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	_, lossErr := OptimalBudget(singular, []Secret{Compound(0, 1)}, 1, nil)
	notPD := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	_, renyiErr := RenyiGaussian(2, nil, notPD, nil, noise.SliceSym(0, 2))
	for _, c := range []struct {
		name   string
		err    error
		target error
	}{
		{"singular Sigma_SS", lossErr, gp.ErrNotPositiveDefinite},
		{"Rényi of a non-covariance", renyiErr, gp.ErrNotPositiveDefinite},
	} {
		if !errors.Is(c.err, c.target) {
			t.Errorf("%s: %v is not %v", c.name, c.err, c.target)
		}
		if errors.Is(c.err, param.ErrInvalid) || (c.err != nil && strings.HasPrefix(c.err.Error(), "cip: ")) {
			t.Errorf("%s: %v: a numerical failure as a parameter error, or with the package's name", c.name, c.err)
		}
	}

	sigma := rbf(3, 6)
	_, composeErr := ComposeLoss(gp.RBF{Variance: 1, Lengthscale: 3}, [][]float64{{0, 1}}, nil, Basic(0))
	_, meanErr := (&Posterior{Cov: sigma}).Mean(nil, []float64{1})
	_, checkErr := DesignNoise(DesignRequest{Sigma: sigma, Secrets: []Secret{Basic(1)}, Budget: 1, Targets: []float64{1}})
	for _, c := range []struct {
		name string
		err  error
	}{
		{"noises", composeErr},
		{"z", meanErr},
		{"budget", checkErr},
		{"covariance", CheckCovariance(notPD)},
		{"secret", Secret{Indices: []int{7}}.Validate(6)},
	} {
		var pe *param.Error
		if !errors.As(c.err, &pe) || pe.Name != c.name {
			t.Errorf("%v: want a *param.Error named %q", c.err, c.name)
		}
		if c.err != nil && strings.HasPrefix(c.err.Error(), "cip: ") {
			t.Errorf("%v starts with the package's name", c.err)
		}
	}
}
