package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// Design is a Gaussian noise covariance together with its certificate.
type Design struct {
	// SigmaG is the noise covariance to sample from.
	SigmaG *mat.SymDense
	// Budget is tr(SigmaG), the total mean squared error.
	Budget float64
	// LossFactor is the loss factor of SigmaG certified by (E1)
	// (Evaluator), not the designer's prediction.
	LossFactor float64
	// Predicted is the designer's closed-form value of the loss factor.
	Predicted float64
	// Jitter is the diagonal jitter the certifying factorisation needed.
	Jitter float64
}

// basicModel holds, for a basic secret i, the conditional prior of the
// other points and, for target mode, the eigendecomposition
// C = V diag(d) V^T with b = V^T A, so that
// a^T (Ct + cI)^-1 a = 1/c + sum_j b_j^2 / (d_j + c) costs O(n) for any c.
type basicModel struct {
	n, i int
	cond *gp.Conditional
	d, b []float64
	v    *mat.Dense
}

func newBasicModel(sigma mat.Symmetric, i int) (*basicModel, error) {
	n := sigma.SymmetricDim()
	if err := Basic(i).Validate(n); err != nil {
		return nil, err
	}
	cond, err := gp.Condition(sigma, []int{i})
	if err != nil {
		return nil, err
	}
	return &basicModel{n: n, i: i, cond: cond}, nil
}

// eigen computes the eigendecomposition of C that target mode needs.
func (m *basicModel) eigen() error {
	if m.n == 1 || m.v != nil {
		return nil
	}
	var e mat.EigenSym
	if !e.Factorize(m.cond.C, true) {
		return fmt.Errorf("eigendecomposition of the conditional covariance: %w", ErrNoConvergence)
	}
	m.d = e.Values(nil)
	for j := range m.d {
		// Rounding leaves eigenvalues of a PSD C slightly negative; clamping
		// them to zero can only raise the predicted loss.
		m.d[j] = math.Max(m.d[j], 0)
	}
	m.v = &mat.Dense{}
	e.VectorsTo(m.v)
	var b mat.VecDense
	b.MulVec(m.v.T(), m.cond.A.ColView(0))
	m.b = b.RawVector().Data
	return nil
}

// value returns a^T (Ct + cI)^-1 a from the eigendecomposition.
func (m *basicModel) value(c float64) float64 {
	f := 1 / c
	for j, bj := range m.b {
		f += bj * bj / (m.d[j] + c)
	}
	return f
}

// noise returns c v v^T / ||v||^2 with v = (Ct + cI)^-1 a, in the original
// coordinates, and the closed-form loss a^T v. The U part of v solves
// (C + cI) x = A by Cholesky: C + cI is well conditioned for c not tiny
// against the prior variance.
func (m *basicModel) noise(c float64) (*mat.SymDense, float64, error) {
	v := mat.NewVecDense(m.n, nil)
	v.SetVec(m.i, 1/c)
	pred := 1 / c
	if m.n > 1 {
		cc := mat.NewSymDense(m.n-1, nil)
		cc.CopySym(m.cond.C)
		for j := range m.n - 1 {
			cc.SetSym(j, j, cc.At(j, j)+c)
		}
		f, err := gp.Factorize(cc, 0)
		if err != nil {
			return nil, 0, fmt.Errorf("C + cI: %w", err)
		}
		var x mat.VecDense
		a := m.cond.A.ColView(0)
		if err := f.SolveVecTo(&x, a); err != nil {
			return nil, 0, err
		}
		pred += mat.Dot(a, &x)
		for r, p := range m.cond.U {
			v.SetVec(p, x.AtVec(r))
		}
	}
	nv := mat.Dot(v, v)
	g := mat.NewSymDense(m.n, nil)
	g.SymRankOne(g, c/nv, v)
	return g, pred, nil
}

// OptimalBasic returns the noise of total variance budget that minimises
// the exact loss factor of basic secret i, (E2) of cip-math.md:
// v = (Ct + cI)^-1 a, SigmaG = c v v^T / ||v||^2, with loss factor
// a^T (Ct + cI)^-1 a. It is rank one: a single Gaussian scalar times the
// profile v, which moves the secret point and its correlated neighbours
// together. The returned LossFactor is certified by (E1).
func OptimalBasic(sigma mat.Symmetric, i int, budget float64) (*Design, error) {
	if err := checkBudget(budget); err != nil {
		return nil, err
	}
	m, err := newBasicModel(sigma, i)
	if err != nil {
		return nil, err
	}
	return m.design(sigma, budget)
}

func (m *basicModel) design(sigma mat.Symmetric, c float64) (*Design, error) {
	g, pred, err := m.noise(c)
	if err != nil {
		return nil, err
	}
	e, err := NewEvaluator(sigma, g)
	if err != nil {
		return nil, err
	}
	l, err := e.LossFactor(Basic(m.i))
	if err != nil {
		return nil, err
	}
	return &Design{SigmaG: g, Budget: mat.Trace(g), LossFactor: l, Predicted: pred, Jitter: e.Jitter()}, nil
}

// OptimalBasicTarget returns the least-budget noise whose loss factor for
// basic secret i is at most target (use TargetLossFactor to convert an
// epsilon at (lambda, r)). The budget is found by bisection on the
// decreasing function c -> a^T (Ct + cI)^-1 a, O(n) per step after one
// eigendecomposition, to a relative precision of 1e-12; the design is then
// certified by (E1) and the budget nudged up if rounding left the
// certified loss above target.
func OptimalBasicTarget(sigma mat.Symmetric, i int, target float64) (*Design, error) {
	if !(target > 0) || math.IsInf(target, 1) {
		return nil, param.Positive("target", target)
	}
	m, err := newBasicModel(sigma, i)
	if err != nil {
		return nil, err
	}
	if err := m.eigen(); err != nil {
		return nil, err
	}
	// 1/c <= value(c) <= (1 + ||b||^2)/c (as d_j >= 0) brackets the root:
	// value(lo) >= target at lo = 1/target, value(hi) <= target at
	// hi = (1 + ||b||^2)/target.
	lo := 1 / target
	bb := 0.0
	for _, bj := range m.b {
		bb += bj * bj
	}
	// value is decreasing: below the root it exceeds the target (NaN
	// counts as above, so it moves lo).
	_, hi := numeric.Bisect(func(c float64) bool { return !(m.value(c) <= target) },
		lo, (1+bb)/target, numeric.Tol{Rel: 1e-12})
	// The certificate, not the model, decides; raise the budget in
	// doubling relative steps until it passes.
	step := 1e-12
	for range 60 {
		d, err := m.design(sigma, hi)
		if err != nil {
			return nil, err
		}
		if d.LossFactor <= target {
			return d, nil
		}
		hi *= 1 + step
		step *= 2
	}
	return nil, fmt.Errorf("loss factor %v for secret %d: %w", target, i, ErrNotCertified)
}
