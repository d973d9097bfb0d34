package cip

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// checkPair validates a prior covariance and a noise covariance.
func checkPair(sigma, sigmaG mat.Symmetric) (int, error) {
	if sigma == nil || sigmaG == nil {
		return 0, param.Invalid("sigma", nil, "a prior and a noise covariance are required")
	}
	n := sigma.SymmetricDim()
	if n == 0 {
		return 0, param.Invalid("sigma", "0x0", "the prior covariance is empty")
	}
	if m := sigmaG.SymmetricDim(); m != n {
		return 0, param.Invalid("sigmaG", fmt.Sprintf("%dx%d", m, m), fmt.Sprintf("the noise covariance must be %dx%d as the prior", n, n))
	}
	for i := range n {
		for j := i; j < n; j++ {
			if a, b := sigma.At(i, j), sigmaG.At(i, j); math.IsNaN(a+b) || math.IsInf(a+b, 0) {
				return 0, param.Invalid("sigma", fmt.Sprintf("%v, %v", a, b), fmt.Sprintf("entry (%d,%d) of the prior or the noise is not finite", i, j))
			}
		}
	}
	return n, nil
}

// factorSum validates the pair and factorises Sigma + SigmaG (with the
// jitter ladder of gp.Factorize), the one factorisation the evaluator and
// the posterior rest on.
func factorSum(sigma, sigmaG mat.Symmetric) (int, *gp.Factor, error) {
	n, err := checkPair(sigma, sigmaG)
	if err != nil {
		return 0, nil, err
	}
	f, err := gp.Factorize(addSym(sigma, sigmaG), 0)
	if err != nil {
		return 0, nil, fmt.Errorf("Sigma + SigmaG: %w", err)
	}
	return n, f, nil
}

// conditionPair validates the pair and the secret and conditions the prior
// on the secret's coordinates.
func conditionPair(sigma, sigmaG mat.Symmetric, s Secret) (int, *gp.Conditional, error) {
	n, err := checkPair(sigma, sigmaG)
	if err != nil {
		return 0, nil, err
	}
	if err := s.Validate(n); err != nil {
		return 0, nil, err
	}
	cond, err := gp.Condition(sigma, s.Indices)
	if err != nil {
		return 0, nil, err
	}
	return n, cond, nil
}

// conditionalRelease returns K = Ct + SigmaG, the covariance of the
// release given the secret's values, in the original coordinates: Ct is
// the conditional prior covariance of the other points (zero on the
// secret's).
func conditionalRelease(sigmaG mat.Symmetric, cond *gp.Conditional) *mat.SymDense {
	k := mat.NewSymDense(sigmaG.SymmetricDim(), nil)
	k.CopySym(sigmaG)
	for i, p := range cond.U {
		for j := i; j < len(cond.U); j++ {
			q := cond.U[j]
			k.SetSym(p, q, k.At(p, q)+cond.C.At(i, j))
		}
	}
	return k
}

// addSym returns a + b.
func addSym(a, b mat.Symmetric) *mat.SymDense {
	var s mat.SymDense
	s.AddSym(a, b)
	return &s
}

// symmetrize returns (a + a^T)/2 of a square matrix.
func symmetrize(a mat.Matrix) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}

// eigExtremes returns the smallest and largest eigenvalues of a.
func eigExtremes(a mat.Symmetric) (lo, hi float64, err error) {
	if a.SymmetricDim() == 1 {
		v := a.At(0, 0)
		return v, v, nil
	}
	var e mat.EigenSym
	if !e.Factorize(a, false) {
		return 0, 0, fmt.Errorf("eigendecomposition: %w", ErrNoConvergence)
	}
	v := e.Values(nil)
	return v[0], v[len(v)-1], nil
}

// invSmall inverts a small symmetric positive definite matrix (k x k for
// a secret of k coordinates), or reports that it is not positive definite.
func invSmall(a mat.Symmetric) (*mat.SymDense, bool) {
	var c mat.Cholesky
	if !c.Factorize(a) {
		return nil, false
	}
	var inv mat.SymDense
	if err := c.InverseTo(&inv); err != nil {
		var cond mat.Condition
		if !errors.As(err, &cond) {
			return nil, false
		}
	}
	return &inv, true
}
