package cip

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// BlockDiagonalLossBound returns an upper bound on the loss factor of
// secret s for noise with no cross-covariance between the secret and the
// rest (SigmaG[S, U] = 0): 1/sigma_s^2 + alpha*, with
// alpha* = lambda_max(A^T (C + SigmaG_UU)^-1 A), the bound of Theorem 3.4
// of Meehan and Chaudhuri. The paper assumes SigmaG_SS = sigma_s^2 I; here
// 1/sigma_s^2 is taken as 1/lambda_min(SigmaG_SS), which is the paper's
// term in that case and keeps the bound valid otherwise. For
// SigmaG_SS = sigma_s^2 I it equals (E1) exactly, for basic and compound
// secrets. Noise with cross terms is an error (ErrCrossTerms wrapped):
// the bound does not apply to it; LossFactor does.
func BlockDiagonalLossBound(sigma, sigmaG mat.Symmetric, s Secret) (float64, error) {
	_, cond, err := conditionPair(sigma, sigmaG, s)
	if err != nil {
		return 0, err
	}
	for _, p := range cond.S {
		for _, q := range cond.U {
			if sigmaG.At(p, q) != 0 {
				return 0, fmt.Errorf("%w: SigmaG[%d,%d] = %v", ErrCrossTerms, p, q, sigmaG.At(p, q))
			}
		}
	}
	lo, _, err := eigExtremes(gp.Sub(sigmaG, cond.S))
	if err != nil {
		return 0, err
	}
	if !(lo > 0) {
		return math.Inf(1), nil
	}
	direct := 1 / lo
	if len(cond.U) == 0 {
		return direct, nil
	}
	k := gp.Sub(sigmaG, cond.U)
	k.AddSym(k, cond.C)
	f, err := gp.Factorize(k, 0)
	if err != nil {
		return 0, fmt.Errorf("C + SigmaG_UU: %w", err)
	}
	var y mat.Dense
	if err := f.HalfSolveTo(&y, cond.A); err != nil {
		return 0, err
	}
	var q mat.SymDense
	q.SymOuterK(1, y.T())
	_, alpha, err := eigExtremes(&q)
	if err != nil {
		return 0, err
	}
	return direct + alpha, nil
}

// ErrCrossTerms is returned by BlockDiagonalLossBound for noise that
// correlates a secret with the rest of the trace.
var ErrCrossTerms = errors.New("the block-diagonal bound (Theorem 3.4) needs noise without cross terms between the secret and the rest")

// PriorPosteriorGap returns epsilon' = epsilon + log(1/delta)/(lambda - 1)
// of Theorem 3.1: an (epsilon, lambda)-CIP mechanism moves the adversary's
// log odds between two hypotheses s_i, s_j on a secret by at most epsilon'
// for any event on the release, with probability at least 1 - delta over
// the release drawn under either hypothesis. The theorem needs the two
// conditional release distributions to have identical support, which holds
// for Gaussian noise with a positive definite Ct + SigmaG (finite loss).
func PriorPosteriorGap(epsilon, lambda, delta float64) (float64, error) {
	if !(epsilon >= 0) || math.IsInf(epsilon, 1) {
		return 0, param.NonNegative("epsilon", epsilon)
	}
	if !(lambda > 1) || math.IsInf(lambda, 1) {
		return 0, param.Greater("lambda", lambda, 1)
	}
	if !(delta > 0 && delta < 1) {
		return 0, param.InOpen("delta", delta, 0, 1)
	}
	return epsilon + math.Log(1/delta)/(lambda-1), nil
}

// MisspecificationBound returns the bound of Theorem 3.3 on the loss at
// order lambda > 1 against a true prior Q outside the class:
//
//	(lambda - 1/2)/(lambda - 1) Delta(2 lambda) + Delta(4 lambda - 3)
//	  + (2 lambda - 3/2)/(2 lambda - 2) eps(4 lambda - 2),
//
// where eps is the mechanism's loss as a function of the order (for a
// Gaussian mechanism, lambda -> Epsilon(L, lambda, r, kLoc)) and Delta the
// divergence between the conditional priors (see ConditionalDelta).
func MisspecificationBound(lambda float64, delta, eps func(order float64) float64) (float64, error) {
	if !(lambda > 1) || math.IsInf(lambda, 1) {
		return 0, param.Greater("lambda", lambda, 1)
	}
	return (lambda-0.5)/(lambda-1)*delta(2*lambda) + delta(4*lambda-3) +
		(2*lambda-1.5)/(2*lambda-2)*eps(4*lambda-2), nil
}

// ConditionalDelta returns an upper bound on Delta(order) of Theorem 3.3
// for a GP class with covariance sigmaP and a zero-mean Gaussian true prior
// with covariance sigmaQ: the larger of the two Rényi divergences between
// the conditionals of X_U given X_S = x_S, maximised over secret values
// with ||x_S|| <= secretRadius, for the member of the class whose mean
// matches Q's (the infimum over the class can only be smaller). The means
// differ by (A_P - A_Q) x_S, so the divergence grows with secretRadius and
// is unbounded over an unbounded secret domain unless A_P = A_Q.
func ConditionalDelta(sigmaP, sigmaQ mat.Symmetric, s Secret, order, secretRadius float64) (float64, error) {
	n, err := checkPair(sigmaP, sigmaQ)
	if err != nil {
		return 0, err
	}
	if err := s.Validate(n); err != nil {
		return 0, err
	}
	if !(secretRadius >= 0) {
		return 0, param.NonNegative("secretRadius", secretRadius)
	}
	cp, err := gp.Condition(sigmaP, s.Indices)
	if err != nil {
		return 0, err
	}
	cq, err := gp.Condition(sigmaQ, s.Indices)
	if err != nil {
		return 0, err
	}
	if len(cp.U) == 0 {
		return 0, nil
	}
	var dA mat.Dense
	dA.Sub(cp.A, cq.A)
	worst := 0.0
	for _, dir := range [2]bool{true, false} {
		s1, s2 := cp.C, cq.C
		if !dir {
			s1, s2 = cq.C, cp.C
		}
		// The covariance part of the divergence, at zero mean difference.
		zero := make([]float64, len(cp.U))
		base, err := RenyiGaussian(order, zero, s1, zero, s2)
		if err != nil {
			return 0, err
		}
		if math.IsInf(base, 1) {
			return base, nil
		}
		// The mean part: order/2 d^T S_order^-1 d, maximised over
		// d = dA x_S with ||x_S|| <= secretRadius.
		mean := 0.0
		if secretRadius > 0 {
			// S_order must be positive definite as it is (no jitter): base
			// was finite, so it is, up to rounding.
			var chol mat.Cholesky
			if !chol.Factorize(mixCov(order, s1, s2)) {
				return math.Inf(1), nil
			}
			var l mat.TriDense
			chol.LTo(&l)
			var y mat.Dense
			if err := y.Solve(&l, &dA); err != nil && !isCondition(err) {
				return 0, err
			}
			var q mat.SymDense
			q.SymOuterK(1, y.T())
			_, hi, err := eigExtremes(&q)
			if err != nil {
				return 0, err
			}
			mean = order / 2 * secretRadius * secretRadius * hi
		}
		worst = math.Max(worst, base+mean)
	}
	return worst, nil
}
