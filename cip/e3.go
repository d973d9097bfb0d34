package cip

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// SetOptions tunes OptimalTarget and OptimalBudget. The zero value (or
// nil) uses the defaults.
type SetOptions struct {
	// RelTol is the relative optimality gap the designer aims for, measured
	// against its own dual lower bound (default 1e-7).
	RelTol float64
	// MaxIter bounds the Newton steps of the iterative solver (default 1000).
	MaxIter int
	// Progress, if set, is called after each Newton step with the steps
	// done and MaxIter.
	Progress func(done, total int)
	// Context, if set, is checked before each Newton step: once it ends,
	// the designer stops and returns its error (context.Canceled or
	// context.DeadlineExceeded) and no design.
	Context context.Context
}

func (o *SetOptions) fill() SetOptions {
	out := SetOptions{RelTol: 1e-7, MaxIter: 1000}
	if o == nil {
		return out
	}
	if o.RelTol > 0 {
		out.RelTol = o.RelTol
	}
	if o.MaxIter > 0 {
		out.MaxIter = o.MaxIter
	}
	out.Progress, out.Context = o.Progress, o.Context
	return out
}

// SetDesign is a noise design for several secrets with its certificate.
type SetDesign struct {
	// Design holds SigmaG, Budget = tr SigmaG, LossFactor = the worst
	// certified (E1) loss factor over the secrets, and the certificate's
	// Jitter. Predicted is the designer's own value of the program it
	// solved (least budget in target mode, the common level in budget
	// mode), before certification.
	Design
	// PerSecret is the (E1) loss factor of each secret, certified by
	// Evaluator on the SigmaG returned.
	PerSecret []float64
	// Targets are the per-secret loss-factor targets the design meets. In
	// budget mode they are Level / KLoc_i.
	Targets []float64
	// Level is max_i KLoc_i * PerSecret[i], the certified common level: the
	// Rényi loss of every secret at order lambda and radius r is at most
	// Epsilon(Level, lambda, r, 1).
	Level float64
	// LowerBound is a lower bound, from a dual feasible point of (E3), on
	// the optimal value of the program solved: in target mode the least
	// total noise that meets the targets, in budget mode the least Level
	// reachable with the budget. Budget (target mode) or Level (budget
	// mode) minus LowerBound bounds how far the design is from optimal.
	// The dual is that of (E3) for the full Sigma (not its truncated
	// spectrum), and the value is lowered by 1e-12 relative to cover
	// rounding in its evaluation.
	LowerBound float64
	// Method names the algorithm that produced SigmaG: "proportional"
	// (SigmaG = c Sigma, closed form; optimal when every coordinate is a
	// basic secret with a common t_i Sigma_ii, otherwise a feasible
	// fallback) or "e3-barrier" (the reduced interior-point solve).
	Method string
	// Iterations counts the Newton steps of the iterative solver.
	Iterations int
}

// OptimalTarget returns the least total noise tr(SigmaG) such that every
// secret i has (E1) loss factor at most targets[i], the program (E3) of
// cip-math.md section 4:
//
//	min tr SigmaG  s.t.  SigmaG ⪰ At_i (Sigma_SS + I/t_i) At_i^T - Sigma,  SigmaG ⪰ 0,
//
// (cip-math's F_i = At_i At_i^T/t_i - Ct_i, with Ct_i = Sigma - At_i Sigma_SS At_i^T).
// targets has one entry per secret, or a single common target; convert an
// epsilon with TargetLossFactor (with the secret's KLoc). Secrets may be
// basic or compound and may overlap.
//
// When every coordinate is a basic secret and t_i Sigma_ii is the same for
// all of them, the optimum is SigmaG = c Sigma with c = 1/(t Sigma_ii):
// every secret then has loss factor exactly 1/(c Sigma_ii), and the
// multipliers mu_i = (1+c)^2 satisfy the KKT conditions, so the design is
// optimal for any prior, regular sampling or not (Method "proportional",
// O(n^2) plus the certificate).
//
// Otherwise (E3) is solved on the explained covariance
// R = Sigma (Sigma + SigmaG)^-1 Sigma = L Q L^T, Sigma = L L^T from the
// eigendecomposition of Sigma truncated at 1e-13 of its largest
// eigenvalue, where every secret's constraint is a k_S x k_S LMI linear in
// Q, the noise is SigmaG = L (Q^-1 - I) L^T and the objective
// tr(Q^-1 Lambda) - tr Lambda (Method "e3-barrier"): a barrier method with
// dense Newton steps on Q, restricted by column generation to the
// directions the secrets need when they reach few of Sigma's directions.
// The Newton system has k(k+1)/2 unknowns for a subspace of dimension k;
// k is capped at 40 (r, the number of kept directions, is about
// 2.5 x span / lengthscale, plus a few, for an RBF prior). Beyond the cap the better of
// the capped solve and the proportional design c Sigma (feasible for any
// secrets) is returned; LowerBound then shows how far from optimal it is.
//
// The returned losses are certified by Evaluator on the SigmaG returned
// and are all at most their targets (SigmaG is scaled up if rounding left
// one above); LowerBound is a lower bound on the optimum from a dual
// feasible point (see SetDesign). As for every Design, the certificate is
// for SigmaG plus the reported Jitter on the diagonal.
func OptimalTarget(sigma mat.Symmetric, secrets []Secret, targets []float64, opts *SetOptions) (*SetDesign, error) {
	n, err := checkSet(sigma, secrets)
	if err != nil {
		return nil, err
	}
	ts, err := expandTargets(targets, len(secrets))
	if err != nil {
		return nil, err
	}
	o := opts.fill()
	if coversAllBasic(secrets, n) {
		d, err := proportionalTarget(sigma, secrets, ts)
		if err != nil {
			return nil, err
		}
		if d.Budget-d.LowerBound <= o.RelTol*d.Budget {
			return d, nil
		}
	}
	return solveE3(sigma, secrets, ts, 0, o)
}

// OptimalBudget returns the noise of total variance budget that minimises
// the worst KLoc-weighted loss factor max_i KLoc_i L_i (the worst epsilon
// when all secrets share lambda and r), i.e. (E3) with the common target
// as a variable:
//
//	min s  s.t.  tr SigmaG <= budget,  L_i(SigmaG) <= s / KLoc_i.
//
// This is convex (the right-hand sides of (E3) are matrix-convex in the
// target) and is solved in one interior-point run rather than by
// bisection; the result is scaled to tr SigmaG = budget exactly, which
// can only lower the losses. With every coordinate a basic secret and
// Sigma_ii / KLoc_i constant, the answer is the closed form
// SigmaG = budget Sigma / tr Sigma. Level is the certified worst
// KLoc_i L_i and LowerBound a lower bound on the least reachable Level.
// See OptimalTarget for the method and its limits.
func OptimalBudget(sigma mat.Symmetric, secrets []Secret, budget float64, opts *SetOptions) (*SetDesign, error) {
	n, err := checkSet(sigma, secrets)
	if err != nil {
		return nil, err
	}
	if err := checkBudget(budget); err != nil {
		return nil, err
	}
	o := opts.fill()
	if coversAllBasic(secrets, n) {
		d, err := proportionalBudget(sigma, secrets, budget)
		if err != nil {
			return nil, err
		}
		if d.Level-d.LowerBound <= o.RelTol*d.Level {
			return d, nil
		}
	}
	return solveE3(sigma, secrets, nil, budget, o)
}

func checkSet(sigma mat.Symmetric, secrets []Secret) (int, error) {
	if sigma == nil {
		return 0, param.Invalid("sigma", nil, "a prior covariance is required")
	}
	n := sigma.SymmetricDim()
	if n == 0 {
		return 0, param.Invalid("sigma", "0x0", "the prior covariance is empty")
	}
	for i := range n {
		for j := i; j < n; j++ {
			if v := sigma.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, param.Invalid("sigma", sigma.At(i, j), fmt.Sprintf("entry (%d,%d) is not finite", i, j))
			}
		}
		if !(sigma.At(i, i) > 0) {
			return 0, param.Invalid("sigma", sigma.At(i, i), fmt.Sprintf("variance %d must be positive", i))
		}
	}
	if len(secrets) == 0 {
		return 0, param.Invalid("secrets", "[]", "no secrets to protect")
	}
	for _, s := range secrets {
		if err := s.Validate(n); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func expandTargets(targets []float64, m int) ([]float64, error) {
	if len(targets) != m && len(targets) != 1 {
		return nil, param.Invalid("targets", targets, fmt.Sprintf("%d targets for %d secrets (give one per secret or one for all)", len(targets), m))
	}
	ts := make([]float64, m)
	for i := range ts {
		t := targets[0]
		if len(targets) == m {
			t = targets[i]
		}
		if !(t > 0) || math.IsInf(t, 1) {
			return nil, param.Positive(fmt.Sprintf("targets[%d]", i), t)
		}
		ts[i] = t
	}
	return ts, nil
}

// coversAllBasic reports whether every coordinate is a basic secret and
// every secret is basic.
func coversAllBasic(secrets []Secret, n int) bool {
	seen := make([]bool, n)
	for _, s := range secrets {
		if len(s.Indices) != 1 {
			return false
		}
		seen[s.Indices[0]] = true
	}
	for _, v := range seen {
		if !v {
			return false
		}
	}
	return true
}

// basicRHS returns b = t Sigma_ii^2 / (1 + t Sigma_ii), the largest
// variance of X_i that a release may explain for loss factor t
// (P_ii >= Sigma_ii / (1 + t Sigma_ii)).
func basicRHS(v, t float64) float64 { return v * v * t / (1 + t*v) }

// uniformBound is the dual bound of (E3) at multipliers mu_i = mu (one per
// coordinate, each at its tightest right-hand side b_i) and Z = 0:
// K = mu Sigma^2 has tr K^1/2 = sqrt(mu) tr Sigma for PSD Sigma, so
// g = 2 sqrt(mu) tr Sigma - mu sum b_i - tr Sigma, maximised at
// sqrt(mu) = tr Sigma / sum b_i. It is exact for the proportional design
// when t_i Sigma_ii is constant and needs no factorisation.
func uniformBound(trSigma, sumB float64) float64 {
	return math.Max(trSigma*trSigma/sumB-trSigma, 0)
}

// tightestRHS returns, per coordinate, the smallest b_i over the basic
// secrets at that coordinate, with the given per-secret targets.
func tightestRHS(sigma mat.Symmetric, secrets []Secret, ts []float64) []float64 {
	n := sigma.SymmetricDim()
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Inf(1)
	}
	for k, s := range secrets {
		i := s.Indices[0]
		b[i] = math.Min(b[i], basicRHS(sigma.At(i, i), ts[k]))
	}
	return b
}

func proportionalTarget(sigma mat.Symmetric, secrets []Secret, ts []float64) (*SetDesign, error) {
	c := 0.0
	for k, s := range secrets {
		i := s.Indices[0]
		c = math.Max(c, 1/(ts[k]*sigma.At(i, i)))
	}
	tr, sumB := 0.0, 0.0
	for i, b := range tightestRHS(sigma, secrets, ts) {
		tr += sigma.At(i, i)
		sumB += b
	}
	d := &SetDesign{Method: "proportional", Targets: ts, LowerBound: uniformBound(tr, sumB)}
	d.Predicted = c * tr
	if err := d.certifyTarget(sigma, secrets, scaledSym(sigma, c)); err != nil {
		return nil, err
	}
	return d, nil
}

func proportionalBudget(sigma mat.Symmetric, secrets []Secret, budget float64) (*SetDesign, error) {
	n := sigma.SymmetricDim()
	tr := 0.0
	for i := range n {
		tr += sigma.At(i, i)
	}
	c := budget / tr
	level := 0.0
	for _, s := range secrets {
		i := s.Indices[0]
		level = math.Max(level, float64(s.NumLocations())/(c*sigma.At(i, i)))
	}
	d := &SetDesign{Method: "proportional", Design: Design{Predicted: level}}
	// The least level s whose uniform dual bound still fits the budget:
	// sum_i b_i(s) = (tr Sigma)^2 / (budget + tr Sigma), b_i increasing
	// in s, so any smaller s needs more than the budget.
	want := tr * tr / (budget + tr)
	sumB := func(s float64) float64 {
		ts := make([]float64, len(secrets))
		for k, sec := range secrets {
			ts[k] = s / float64(sec.NumLocations())
		}
		t := 0.0
		for _, b := range tightestRHS(sigma, secrets, ts) {
			t += b
		}
		return t
	}
	d.LowerBound = bisectIncreasing(sumB, want, level)
	if err := d.certifyBudget(sigma, secrets, scaledSym(sigma, c), budget); err != nil {
		return nil, err
	}
	return d, nil
}

// bisectIncreasing returns the largest s with f(s) <= want for an
// increasing f, searching up from zero with the hint as a first bracket;
// it returns 0 if f(s) > want for every s > 0 probed, and +Inf if f stays
// at most want up to overflow.
func bisectIncreasing(f func(float64) float64, want, hint float64) float64 {
	below := func(s float64) bool { return f(s) <= want }
	lo, hi := numeric.GrowBracket(below, 0, math.Max(hint, 1e-300))
	if math.IsInf(hi, 1) {
		return hi
	}
	// 200 halvings reach adjacent floats from a grown bracket [h/2, h];
	// from [0, hint] they bound the work when the answer is far below
	// the hint.
	lo, _ = numeric.Bisect(below, lo, hi, numeric.Tol{MaxIter: 200})
	return lo
}

// certifyTarget certifies g for the secrets and, if rounding left a
// certified loss above its target, scales g up until none is.
func (d *SetDesign) certifyTarget(sigma mat.Symmetric, secrets []Secret, g *mat.SymDense) error {
	step := 0.0
	for range 60 {
		e, err := NewEvaluator(sigma, g)
		if err != nil {
			return err
		}
		per, err := e.LossFactors(secrets)
		if err != nil {
			return err
		}
		worst := 0.0
		for k, l := range per {
			worst = math.Max(worst, l/d.Targets[k])
		}
		if worst <= 1 {
			d.fill(g, per, secrets, e.Jitter())
			d.settleBound(true)
			return nil
		}
		// Loss factors fall more slowly than 1/scale, so iterate; the
		// extra relative step doubles to guarantee termination.
		step = math.Max(2*step, 1e-13)
		g = scaledSym(g, worst*(1+step))
	}
	return fmt.Errorf("the (E3) design for every target: %w", ErrNotCertified)
}

// certifyBudget scales g to trace budget exactly and certifies it.
func (d *SetDesign) certifyBudget(sigma mat.Symmetric, secrets []Secret, g *mat.SymDense, budget float64) error {
	g = scaledSym(g, budget/mat.Trace(g))
	e, err := NewEvaluator(sigma, g)
	if err != nil {
		return err
	}
	per, err := e.LossFactors(secrets)
	if err != nil {
		return err
	}
	d.fill(g, per, secrets, e.Jitter())
	d.Targets = make([]float64, len(secrets))
	for k, s := range secrets {
		d.Targets[k] = d.Level / float64(s.NumLocations())
	}
	d.settleBound(false)
	return nil
}

// roundingAllowance is the relative amount by which a dual bound is
// lowered to cover rounding in its evaluation (sums, an SVD, square roots),
// so that LowerBound stays a bound in floating point, not only in exact
// arithmetic.
const roundingAllowance = 1e-12

// settleBound finishes LowerBound: the rounding allowance, and no more
// than the certified value (Budget in target mode, Level in budget mode),
// which is itself at least the optimum since the design is feasible.
func (d *SetDesign) settleBound(target bool) {
	lb := math.Max(d.LowerBound*(1-roundingAllowance), 0)
	if target {
		lb = math.Min(lb, d.Budget)
	} else {
		lb = math.Min(lb, d.Level)
	}
	d.LowerBound = lb
}

func (d *SetDesign) fill(g *mat.SymDense, per []float64, secrets []Secret, jitter float64) {
	d.SigmaG = g
	d.Budget = mat.Trace(g)
	d.PerSecret = per
	d.Jitter = jitter
	d.LossFactor, d.Level = 0, 0
	for k, l := range per {
		d.LossFactor = math.Max(d.LossFactor, l)
		d.Level = math.Max(d.Level, l*float64(secrets[k].NumLocations()))
	}
}
