package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// Evaluator certifies the exact CIP loss factor (E1) of one Gaussian
// mechanism, Z = X + G with X ~ N(., Sigma) and G ~ N(0, SigmaG), for any
// number of secrets from a single Cholesky factorisation of
// M = Sigma + SigmaG.
//
// For a secret S the loss matrix At^T (Ct + SigmaG)^-1 At of (E1) is the
// Fisher information that Z carries about X_S, which equals the gain in
// precision of a Gaussian adversary: P_SS^-1 - Sigma_SS^-1, where
// P = Sigma M^-1 SigmaG is the posterior covariance of X given Z. This is
// cip-math.md's Woodbury form, (Q^-1 - Sigma_SS)^-1 with
// Q = At^T M^-1 At, rearranged so that nothing nearly equal is subtracted:
//
//	P_SS^-1 - Sigma_SS^-1 = P_SS^-1 (W_S^T W_S) Sigma_SS^-1,
//	W = L^-1 Sigma[:, S],  P_SS = W^T (L^-1 SigmaG[:, S]),  M = L L^T,
//
// so a basic secret costs two triangular solves, O(n^2), and its loss
// factor is ||w||^2 / (Sigma_ii p_ii).
type Evaluator struct {
	sigma, sigmaG mat.Symmetric
	m             *gp.Factor
	n             int
}

// NewEvaluator factorises Sigma + SigmaG. If the factorisation needs
// diagonal jitter (Jitter() > 0), the losses certified are those of the
// mechanism with noise SigmaG + Jitter I, which is reported so that a
// certificate can state it.
func NewEvaluator(sigma, sigmaG mat.Symmetric) (*Evaluator, error) {
	n, f, err := factorSum(sigma, sigmaG)
	if err != nil {
		return nil, err
	}
	return &Evaluator{sigma: sigma, sigmaG: sigmaG, m: f, n: n}, nil
}

// Jitter returns the diagonal jitter added to Sigma + SigmaG.
func (e *Evaluator) Jitter() float64 { return e.m.Jitter() }

// columns returns W = L^-1 Sigma[:, idx] and Wg = L^-1 (SigmaG + jI)[:, idx]
// with two triangular solves against the Cholesky factor M = U^T U.
func (e *Evaluator) columns(idx []int) (w, wg *mat.Dense) {
	all := allIndices(e.n)
	w = gp.Block(e.sigma, all, idx)
	wg = gp.Block(e.sigmaG, all, idx)
	if j := e.Jitter(); j > 0 {
		for c, p := range idx {
			wg.Set(p, c, wg.At(p, c)+j)
		}
	}
	u := e.m.U()
	blas64.Trsm(blas.Left, blas.Trans, 1, u, w.RawMatrix())
	blas64.Trsm(blas.Left, blas.Trans, 1, u, wg.RawMatrix())
	return w, wg
}

// LossFactor returns L = lambda_max(At^T (Ct + SigmaG)^-1 At) for secret s.
// It is +Inf when the noise leaves a direction of X_S unprotected (the
// posterior variance of X_S given Z is zero to working precision).
func (e *Evaluator) LossFactor(s Secret) (float64, error) {
	if err := s.Validate(e.n); err != nil {
		return 0, err
	}
	w, wg := e.columns(s.Indices)
	return e.fromColumns(s.Indices, w, wg, allIndices(len(s.Indices)))
}

// LossFactors returns the loss factors of the secrets, solving once for
// the union of their coordinates.
func (e *Evaluator) LossFactors(secrets []Secret) ([]float64, error) {
	pos := make(map[int]int)
	var union []int
	for _, s := range secrets {
		if err := s.Validate(e.n); err != nil {
			return nil, err
		}
		for _, i := range s.Indices {
			if _, ok := pos[i]; !ok {
				pos[i] = len(union)
				union = append(union, i)
			}
		}
	}
	out := make([]float64, len(secrets))
	if len(union) == 0 {
		return out, nil
	}
	w, wg := e.columns(union)
	for k, s := range secrets {
		cols := make([]int, len(s.Indices))
		for c, i := range s.Indices {
			cols[c] = pos[i]
		}
		var err error
		if out[k], err = e.fromColumns(s.Indices, w, wg, cols); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fromColumns computes the loss factor of the secret idx from the solved
// columns cols of W and Wg.
func (e *Evaluator) fromColumns(idx []int, w, wg *mat.Dense, cols []int) (float64, error) {
	k := len(idx)
	if k == 1 {
		c := cols[0]
		var bb, pv float64
		for r := range e.n {
			x := w.At(r, c)
			bb += x * x
			pv += x * wg.At(r, c)
		}
		// bb = Sigma_ii - P_ii is the variance Z explains; pv = P_ii the
		// posterior variance.
		if !(pv > 0) {
			return math.Inf(1), nil
		}
		return bb / (e.sigma.At(idx[0], idx[0]) * pv), nil
	}
	all := allIndices(e.n)
	ws, wgs := gp.Block(w, all, cols), gp.Block(wg, all, cols)
	var b, p mat.Dense
	b.Mul(ws.T(), ws)  // Sigma_SS - P_SS
	p.Mul(ws.T(), wgs) // P_SS
	pinv, ok := invSmall(symmetrize(&p))
	if !ok {
		return math.Inf(1), nil
	}
	sinv, ok := invSmall(gp.Sub(e.sigma, idx))
	if !ok {
		return 0, fmt.Errorf("secret %v: Sigma_SS: %w", idx, gp.ErrNotPositiveDefinite)
	}
	var t, g mat.Dense
	t.Mul(pinv, symmetrize(&b))
	g.Mul(&t, sinv)
	_, hi, err := eigExtremes(symmetrize(&g))
	if err != nil {
		return 0, err
	}
	return hi, nil
}

// LossFactor returns the exact loss factor (E1) of noise sigmaG for secret
// s under the GP prior covariance sigma. See Evaluator.
func LossFactor(sigma, sigmaG mat.Symmetric, s Secret) (float64, error) {
	e, err := NewEvaluator(sigma, sigmaG)
	if err != nil {
		return 0, err
	}
	return e.LossFactor(s)
}

// LossFactors returns the loss factors of every secret from one
// factorisation of Sigma + SigmaG.
func LossFactors(sigma, sigmaG mat.Symmetric, secrets []Secret) ([]float64, error) {
	e, err := NewEvaluator(sigma, sigmaG)
	if err != nil {
		return nil, err
	}
	return e.LossFactors(secrets)
}

// Epsilon returns the Rényi CIP loss at order lambda of a mechanism with
// the given loss factor, for secrets of kLoc locations each displaced by at
// most r (in the units of the prior): lambda/2 * kLoc * r^2 * L, (E1).
func Epsilon(lossFactor, lambda, r float64, kLoc int) float64 {
	return lambda / 2 * float64(kLoc) * r * r * lossFactor
}

// Epsilons returns each secret's epsilon at order lambda and radius r,
// Epsilon(lossFactors[i], lambda, r, secrets[i].NumLocations()), and the
// worst of them (0 for no secrets): what a report or certificate states per
// secret and overall. It is the inverse of TargetLossFactors, and panics
// unless lossFactors has one entry per secret, as LossFactors returns them.
func Epsilons(secrets []Secret, lossFactors []float64, lambda, r float64) (eps []float64, worst float64) {
	if len(lossFactors) != len(secrets) {
		panic(fmt.Sprintf("cip: Epsilons: %d loss factors for %d secrets", len(lossFactors), len(secrets)))
	}
	eps = make([]float64, len(secrets))
	for i, s := range secrets {
		eps[i] = Epsilon(lossFactors[i], lambda, r, s.NumLocations())
		worst = math.Max(worst, eps[i])
	}
	return eps, worst
}

// TargetLossFactor inverts Epsilon: the largest loss factor that keeps the
// loss at order lambda within epsilon, 2 epsilon / (lambda kLoc r^2).
func TargetLossFactor(epsilon, lambda, r float64, kLoc int) (float64, error) {
	if err := param.First(param.Positive("epsilon", epsilon), param.Greater("lambda", lambda, 1),
		param.Positive("radius", r), param.AtLeastInt("kLoc", kLoc, 1)); err != nil {
		return 0, err
	}
	t := 2 * epsilon / (lambda * float64(kLoc) * r * r)
	if !(t >= math.SmallestNonzeroFloat64*(1<<52)) || math.IsInf(t, 0) {
		// The radius sets the scale: 2 epsilon / (lambda k r^2) must be a
		// normal float64, so r within these ends for this epsilon.
		c := 2 * epsilon / (lambda * float64(kLoc))
		lo, hi := math.Sqrt(c/math.MaxFloat64), math.Sqrt(c/(math.SmallestNonzeroFloat64*(1<<52)))
		return 0, param.Invalid("radius", r, fmt.Sprintf("with epsilon %g and lambda %g the target loss factor 2 epsilon/(lambda r^2) = %g is not a usable number; give a radius between %.3g and %.3g metres (or another epsilon)", epsilon, lambda, t, lo, hi))
	}
	return t, nil
}

// LossFactorDirect evaluates (E1) literally, for reference and tests:
// conditional prior A, C of X_U given X_S, K = Ct + SigmaG in the original
// coordinates, and lambda_max(At^T K^-1 At) through a (jittered) Cholesky
// factorisation of K. It costs a factorisation per secret and is less
// accurate than Evaluator when C is badly conditioned.
func LossFactorDirect(sigma, sigmaG mat.Symmetric, s Secret) (float64, error) {
	n, cond, err := conditionPair(sigma, sigmaG, s)
	if err != nil {
		return 0, err
	}
	k := conditionalRelease(sigmaG, cond)
	at := mat.NewDense(n, len(cond.S), nil)
	for c, p := range cond.S {
		at.Set(p, c, 1)
	}
	for r, p := range cond.U {
		for c := range cond.S {
			at.Set(p, c, cond.A.At(r, c))
		}
	}
	f, err := gp.Factorize(k, 0)
	if err != nil {
		return 0, fmt.Errorf("Ct + SigmaG: %w", err)
	}
	var y mat.Dense
	if err := f.HalfSolveTo(&y, at); err != nil {
		return 0, err
	}
	var q mat.SymDense
	q.SymOuterK(1, y.T())
	_, hi, err := eigExtremes(&q)
	return hi, err
}

func allIndices(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func isCondition(err error) bool {
	_, ok := err.(mat.Condition)
	return ok
}
