package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// mixCov returns lambda S2 + (1 - lambda) S1.
func mixCov(lambda float64, s1, s2 mat.Symmetric) *mat.SymDense {
	n := s1.SymmetricDim()
	m := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			m.SetSym(i, j, lambda*s2.At(i, j)+(1-lambda)*s1.At(i, j))
		}
	}
	return m
}

// RenyiGaussian returns the Rényi divergence of order lambda > 0,
// D_lambda(N(m1, S1) || N(m2, S2)), in closed form (Gil, Alajaji and
// Linder 2013):
//
//	lambda/2 d^T S_l^-1 d - 1/(2(lambda-1)) log(|S_l| / (|S1|^(1-lambda) |S2|^lambda)),
//
// with d = m1 - m2 and S_l = lambda S2 + (1 - lambda) S1. It is +Inf (with a
// nil error) when S_l is not positive definite: then the divergence is
// infinite. Order 1 is the Kullback-Leibler divergence. S1 and S2 must be
// positive definite; nil means the zero vector for a mean.
func RenyiGaussian(lambda float64, m1 []float64, s1 mat.Symmetric, m2 []float64, s2 mat.Symmetric) (float64, error) {
	if !(lambda > 0) || math.IsInf(lambda, 1) {
		return 0, param.Positive("lambda", lambda)
	}
	n := s1.SymmetricDim()
	if s2.SymmetricDim() != n || (m1 != nil && len(m1) != n) || (m2 != nil && len(m2) != n) {
		return 0, param.Invalid("dimensions", fmt.Sprintf("%d, %d", n, s2.SymmetricDim()), "the covariances and means of the Rényi divergence must have one dimension")
	}
	d := mat.NewVecDense(n, nil)
	for i := range n {
		var a, b float64
		if m1 != nil {
			a = m1[i]
		}
		if m2 != nil {
			b = m2[i]
		}
		d.SetVec(i, a-b)
	}
	var c1, c2 mat.Cholesky
	if !c1.Factorize(s1) {
		return 0, fmt.Errorf("Rényi divergence: first covariance: %w", gp.ErrNotPositiveDefinite)
	}
	if !c2.Factorize(s2) {
		return 0, fmt.Errorf("Rényi divergence: second covariance: %w", gp.ErrNotPositiveDefinite)
	}
	if lambda == 1 {
		// KL: 1/2 (tr(S2^-1 S1) + d^T S2^-1 d - n + log|S2|/|S1|).
		var x mat.Dense
		if err := c2.SolveTo(&x, s1); err != nil && !isCondition(err) {
			return 0, err
		}
		var y mat.VecDense
		if err := c2.SolveVecTo(&y, d); err != nil && !isCondition(err) {
			return 0, err
		}
		return 0.5 * (mat.Trace(&x) + mat.Dot(d, &y) - float64(n) + c2.LogDet() - c1.LogDet()), nil
	}
	var cl mat.Cholesky
	if !cl.Factorize(mixCov(lambda, s1, s2)) {
		return math.Inf(1), nil
	}
	var y mat.VecDense
	if err := cl.SolveVecTo(&y, d); err != nil && !isCondition(err) {
		return 0, err
	}
	quad := mat.Dot(d, &y)
	logTerm := cl.LogDet() - (1-lambda)*c1.LogDet() - lambda*c2.LogDet()
	return lambda/2*quad - logTerm/(2*(lambda-1)), nil
}
