package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sdp"
)

// PaperOptions tunes the paper's mechanisms (PaperSDPA, PaperSDPB,
// PaperMultipleSecrets). The zero value (or nil) is an exact solve.
type PaperOptions struct {
	// Stabilisation is the authors' "stab_factor": SDP_A is solved with
	// budget Stabilisation*budget and the noise it returns is divided by
	// Stabilisation. 0 means 1. It changes nothing for a basic secret or
	// for SDP_B (both are exactly scale-invariant), but SDP_A for a
	// compound secret has many optima and the factor changes which one a
	// solver returns; the published Figure 2b used 1000.
	Stabilisation float64
	// Generic forces the generic interior-point solve of SDP_A for basic
	// secrets too, instead of its closed-form optimum (tests compare the
	// two).
	Generic bool
	// Settings are passed to the SDP solver (nil for its defaults).
	Settings *sdp.Settings
}

func (o *PaperOptions) stab() float64 {
	if o == nil || !(o.Stabilisation > 0) {
		return 1
	}
	return o.Stabilisation
}

func (o *PaperOptions) settings() *sdp.Settings {
	if o == nil {
		return nil
	}
	return o.Settings
}

// PaperDesign is a noise covariance from one of the paper's SDP
// mechanisms, certified by (E1) like every Design.
type PaperDesign struct {
	Design
	// Beta is SDP_A's optimal value as solved (with the stabilised
	// budget): the smallest eigenvalue of the surrogate
	// At^+ (Ct + SigmaG) At^+T, whose inverse the paper takes as the loss
	// factor (Predicted, set when there is no stabilisation). It is zero
	// for SDP_B and Multiple Secrets.
	Beta float64
	// Raw is SDP_A's optimal noise X - Ct (original coordinate order)
	// before the authors' read-back dropped its cross terms; nil for
	// SDP_B and Multiple Secrets.
	Raw *mat.SymDense
	// Iterations counts interior-point iterations over every SDP solved
	// (zero when only closed forms were used).
	Iterations int
}

// PaperSDPA is the paper's SDP_A (appendix 7.3.1), as the authors' code
// (figure_2.py, get_Sigma_z) states and reads it back. With At = [I; A]
// for the secret S and its pseudo-inverse P = (At^T At)^-1 At^T (k x n),
// and Ct the conditional covariance C padded with zeros on S, it solves
//
//	maximise beta  s.t.  beta >= 0,  P X P^T ⪰ beta I,  X ⪰ Ct,
//	                     tr X <= tr Ct + stab*budget,
//
// a surrogate that replaces lambda_max(At^T X^-1 At) by
// 1/lambda_min(P X P^T). The noise is then read back as the authors do:
// SigmaG_UU = (X - Ct)_UU / stab, SigmaG_SS = mean(diag X_SS)/stab * I
// (isotropic on the secret) and no cross terms between S and U; Raw keeps
// X - Ct. LossFactor is the exact (E1) loss of the noise read back.
//
// For a basic secret the optimum is unique and rank one,
// X - Ct = c p p^T / ||p||^2 with p = P^T (the row of the pseudo-inverse),
// and is used directly unless opts.Generic is set.
func PaperSDPA(sigma mat.Symmetric, s Secret, budget float64, opts *PaperOptions) (*PaperDesign, error) {
	if err := checkBudget(budget); err != nil {
		return nil, err
	}
	n := sigma.SymmetricDim()
	if err := s.Validate(n); err != nil {
		return nil, err
	}
	cond, err := gp.Condition(sigma, s.Indices)
	if err != nil {
		return nil, err
	}
	k := len(s.Indices)
	ct := paddedConditional(cond, n)
	p, err := pseudoInverseRows(cond, n)
	if err != nil {
		return nil, err
	}
	stab := opts.stab()
	c := stab * budget
	out := &PaperDesign{}
	var x *mat.SymDense // X - Ct, scaled by stab
	if k == 1 && (opts == nil || !opts.Generic) {
		row := p.RawRowView(0)
		pp := dot(row, row)
		x = mat.NewSymDense(n, nil)
		x.SymRankOne(x, c/pp, mat.NewVecDense(n, row))
		pv := mat.NewVecDense(n, row)
		out.Beta = mat.Inner(pv, ct, pv) + c*pp
	} else {
		m := sdp.NewModel()
		xv := m.SymVar(n)
		beta := m.ScalarVar()
		m.Geq(beta.Expr(), sdp.Const(0))
		m.PSD(xv.Expr().Congruence(p).Minus(sdp.ScalarMat(beta.Expr(), identity(k))))
		m.PSD(xv.Expr().Minus(sdp.ConstMat(ct)))
		m.Leq(xv.Trace(), sdp.Const(mat.Trace(ct)+c))
		m.Maximize(beta.Expr())
		sol, err := solveModel(m, opts, "SDP_A")
		if err != nil {
			return nil, err
		}
		out.Beta = sol.Value(beta)
		out.Iterations = sol.Result.Iterations
		x = sol.SymValue(xv)
		x.AddSym(x, scaledSym(ct, -1))
	}
	raw := scaledSym(x, 1/stab)
	out.Raw = raw
	g := mat.NewSymDense(n, nil)
	for a, i := range cond.U {
		for b := a; b < len(cond.U); b++ {
			g.SetSym(i, cond.U[b], raw.At(i, cond.U[b]))
		}
	}
	// X_SS = (X - Ct)_SS since Ct is zero on S.
	ss := 0.0
	for _, i := range s.Indices {
		ss += raw.At(i, i)
	}
	for _, i := range s.Indices {
		g.SetSym(i, i, ss/float64(k))
	}
	if err := out.certify(sigma, g, []Secret{s}); err != nil {
		return nil, err
	}
	if stab == 1 && out.Beta > 0 {
		out.Predicted = 1 / out.Beta
	}
	return out, nil
}

// PaperSDPB is the paper's SDP_B (appendix 7.3.2): the least-trace
// covariance that dominates every given one,
//
//	minimise tr SigmaG  s.t.  SigmaG ⪰ F_i  for every i,
//
// so that by Corollary 7.2.2 it keeps each F_i's protection of its own
// secret. It returns the covariance and the interior-point iterations.
func PaperSDPB(fs []*mat.SymDense, opts *PaperOptions) (*mat.SymDense, int, error) {
	m, g, err := paperSDPBModel(fs)
	if err != nil {
		return nil, 0, err
	}
	sol, err := solveModel(m, opts, "SDP_B")
	if err != nil {
		return nil, 0, err
	}
	return sol.SymValue(g), sol.Result.Iterations, nil
}

// paperSDPBModel states SDP_B over the covariances fs.
func paperSDPBModel(fs []*mat.SymDense) (*sdp.Model, *sdp.SymVar, error) {
	if len(fs) == 0 {
		return nil, nil, param.Invalid("covariances", 0, "SDP_B needs at least one")
	}
	n := fs[0].SymmetricDim()
	m := sdp.NewModel()
	g := m.SymVar(n)
	for i, f := range fs {
		if f.SymmetricDim() != n {
			return nil, nil, param.Invalid(fmt.Sprintf("covariances[%d]", i), fmt.Sprintf("%dx%d", f.SymmetricDim(), f.SymmetricDim()), fmt.Sprintf("must be %dx%d as the first", n, n))
		}
		m.PSD(g.Expr().Minus(sdp.ConstMat(f)))
	}
	m.Minimize(g.Trace())
	return m, g, nil
}

// PaperMultipleSecrets is the paper's Algorithm 1, Multiple Secrets: one
// SDP_A per secret, each with the same budget, then SDP_B over the m
// covariances. The total noise is not constrained (it is at most m times
// budget); LossFactor is the worst (E1) loss over the secrets and
// PerSecret holds each.
func PaperMultipleSecrets(sigma mat.Symmetric, secrets []Secret, budget float64, opts *PaperOptions) (*PaperDesign, []float64, error) {
	if len(secrets) == 0 {
		return nil, nil, param.Invalid("secrets", "[]", "Multiple Secrets needs at least one secret")
	}
	fs := make([]*mat.SymDense, len(secrets))
	out := &PaperDesign{}
	for i, s := range secrets {
		d, err := PaperSDPA(sigma, s, budget, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("Multiple Secrets, secret %v: %w", s.Indices, err)
		}
		fs[i] = d.SigmaG
		out.Iterations += d.Iterations
	}
	g, it, err := PaperSDPB(fs, opts)
	if err != nil {
		return nil, nil, err
	}
	out.Iterations += it
	per, err := out.certifyAll(sigma, g, secrets)
	if err != nil {
		return nil, nil, err
	}
	return out, per, nil
}

// certify fills the Design fields of d for noise g and the secrets.
func (d *PaperDesign) certify(sigma mat.Symmetric, g *mat.SymDense, secrets []Secret) error {
	_, err := d.certifyAll(sigma, g, secrets)
	return err
}

func (d *PaperDesign) certifyAll(sigma mat.Symmetric, g *mat.SymDense, secrets []Secret) ([]float64, error) {
	e, err := NewEvaluator(sigma, g)
	if err != nil {
		return nil, err
	}
	ls, err := e.LossFactors(secrets)
	if err != nil {
		return nil, err
	}
	worst := 0.0
	for _, l := range ls {
		worst = math.Max(worst, l)
	}
	d.Design = Design{SigmaG: g, Budget: mat.Trace(g), LossFactor: worst, Jitter: e.Jitter()}
	return ls, nil
}

// solveModel solves m and accepts an optimal or near-optimal answer.
func solveModel(m *sdp.Model, opts *PaperOptions, what string) (*sdp.Solution, error) {
	sol, err := m.Solve(opts.settings())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if sol.Status != sdp.Optimal && sol.Status != sdp.NearOptimal {
		return nil, fmt.Errorf("%s: %w (status %v)", what, ErrSolverStatus, sol.Status)
	}
	return sol, nil
}

// paddedConditional returns Ct: C in the U block, zeros on S, in the
// original coordinate order.
func paddedConditional(cond *gp.Conditional, n int) *mat.SymDense {
	ct := mat.NewSymDense(n, nil)
	for a, i := range cond.U {
		for b := a; b < len(cond.U); b++ {
			ct.SetSym(i, cond.U[b], cond.C.At(a, b))
		}
	}
	return ct
}

// pseudoInverseRows returns P = (At^T At)^-1 At^T (k x n, original order)
// for At = [I; A]. At^T At = I + A^T A has all eigenvalues >= 1, so the
// Cholesky solve is well conditioned.
func pseudoInverseRows(cond *gp.Conditional, n int) (*mat.Dense, error) {
	k := len(cond.S)
	at := mat.NewDense(n, k, nil)
	for c, i := range cond.S {
		at.Set(i, c, 1)
	}
	for r, i := range cond.U {
		for c := range k {
			at.Set(i, c, cond.A.At(r, c))
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, at.T())
	var ch mat.Cholesky
	if !ch.Factorize(&g) {
		return nil, fmt.Errorf("At^T At: %w", gp.ErrNotPositiveDefinite)
	}
	var p mat.Dense
	if err := ch.SolveTo(&p, at.T()); err != nil && !isCondition(err) {
		return nil, err
	}
	return &p, nil
}

func identity(n int) *mat.SymDense {
	d := mat.NewSymDense(n, nil)
	for i := range n {
		d.SetSym(i, i, 1)
	}
	return d
}

func scaledSym(a mat.Symmetric, f float64) *mat.SymDense {
	var s mat.SymDense
	s.ScaleSym(f, a)
	return &s
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
