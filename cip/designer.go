package cip

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sdp"
)

// DesignRequest asks DesignNoise for the Gaussian noise of one dimension of
// one trace. The prior is given either as a covariance matrix at the
// trace's points (Sigma: MethodE3 and the paper's mechanisms) or as the
// noise kernel of a prior family with the trace's timestamps (Envelope and
// Times: the kernel designs MethodProportional and MethodEnvelope). The
// mode is budget mode (Budget: the least loss at that total noise) or
// target mode (Targets: the least total noise that meets them).
type DesignRequest struct {
	// Method is a designer or a selector (MethodAuto, MethodPaper); ""
	// means MethodAuto.
	Method Method
	// Sigma is the prior covariance at the trace's points.
	Sigma mat.Symmetric
	// Envelope is the noise kernel of a prior family (NewEnvelope) and
	// Times the trace's timestamps, in the units of its lengthscales.
	Envelope *Envelope
	Times    []float64
	// Secrets are the secrets to protect, indices into the trace's points.
	Secrets []Secret
	// Budget is the total noise variance tr(SigmaG) of budget mode. For
	// MethodPaperMultipleSecrets it is each SDP_A's budget, as in the
	// paper, and the total is what SDP_B returns.
	Budget float64
	// Targets are the loss-factor targets of target mode, one per secret
	// or one for all (TargetLossFactors converts an epsilon). The paper's
	// mechanisms have no target mode.
	Targets []float64
	// KernelOnly leaves NoiseDesign.SigmaG nil for the kernel designs: a
	// sampler that draws the kernel directly (noise.MarkovRelease) needs
	// no dense matrix.
	KernelOnly bool
	// Set tunes the (E3) solver and Paper the paper's mechanisms; nil
	// means their defaults.
	Set   *SetOptions
	Paper *PaperOptions
	// Progress, if set, is told the name of each long stage as it starts.
	Progress func(stage string)
	// Context, if set, is checked inside the long designers: before each
	// Newton step of the (E3) solver (unless Set has its own Context) and
	// once per interior-point iteration of the paper's SDPs (unless
	// Paper.Settings has its own). Once it ends, DesignNoise returns its
	// error (context.Canceled or context.DeadlineExceeded) and no design.
	Context context.Context
}

// NoiseDesign is the noise DesignNoise returns, with its certificate.
type NoiseDesign struct {
	// Method is the designer that ran (never a selector), and Solver how
	// MethodE3 solved its program: "e2" (the closed form for one basic
	// secret), "proportional" (the closed form c Sigma) or "e3-barrier"
	// (SetDesign.Method); empty for the other methods.
	Method Method
	Solver string
	// SigmaG is the noise covariance; nil for a kernel design with
	// KernelOnly (Family.SigmaG forms it).
	SigmaG *mat.SymDense
	// Budget is tr(SigmaG), the summed noise variance over the points.
	Budget float64
	// LossFactors are the certified loss factors of the secrets, in
	// order: exact (E1) values when Exact, proven upper bounds over the
	// prior family otherwise.
	LossFactors []float64
	Exact       bool
	// LowerBound is (E3)'s dual lower bound when the barrier program or
	// its closed form ran (Set non-nil): on the least total noise in
	// target mode, on the least worst KLoc-weighted loss in budget mode.
	// Zero otherwise.
	LowerBound float64
	// Jitter is the diagonal jitter the certifying factorisation needed:
	// the certificate is for SigmaG + Jitter I.
	Jitter float64
	// The designer's own result, for its details: Set for (E3) (nil for
	// (E2)), Family for the kernel designs (Alpha, MinEigen), Paper for
	// the paper's mechanisms.
	Set    *SetDesign
	Family *FamilyDesign
	Paper  *PaperDesign
}

// TargetLossFactors returns, for each secret, the loss-factor target that
// gives epsilon at Rényi order lambda for displacements of each of its
// NumLocations locations by up to r (TargetLossFactor).
func TargetLossFactors(secrets []Secret, epsilon, lambda, r float64) ([]float64, error) {
	out := make([]float64, len(secrets))
	for i, s := range secrets {
		var err error
		if out[i], err = TargetLossFactor(epsilon, lambda, r, s.NumLocations()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DesignNoise designs Gaussian noise for the request's secrets with the
// requested method and certifies it; it is the one entry point behind
// package sanitize and "tracepriv cip design". MethodAuto picks MethodE3
// for a prior covariance and, for a family's envelope, MethodProportional
// when the envelope is the family's single member (MethodEnvelope
// otherwise); MethodPaper picks SDP_A for one secret and Multiple Secrets
// for several. MethodE3 runs OptimalBasic or OptimalBasicTarget for one
// basic secret, OptimalBudget or OptimalTarget otherwise; the kernel
// designs run DesignFamily (in budget mode the multiple alpha of the
// kernel is set by the budget); the paper's methods run PaperSDPA and
// PaperMultipleSecrets. Every loss factor returned is certified: by (E1)
// on the SigmaG returned, or by FamilyMinEigen's bound for the kernel
// designs.
func DesignNoise(req DesignRequest) (*NoiseDesign, error) {
	m, err := req.resolve()
	if err != nil {
		return nil, err
	}
	req.withContext()
	if len(req.Secrets) == 0 {
		return nil, param.Invalid("secrets", "[]", "no secrets to protect")
	}
	target := req.Targets != nil
	switch {
	case target && req.Budget != 0:
		return nil, param.Invalid("budget", req.Budget, "give a budget (least loss at that noise) or targets (least noise for them), not both")
	case target:
		if _, err := expandTargets(req.Targets, len(req.Secrets)); err != nil {
			return nil, err
		}
	default:
		if err := checkBudget(req.Budget); err != nil {
			return nil, fmt.Errorf("%w (or give targets)", err)
		}
	}
	switch m {
	case MethodE3:
		return req.e3()
	case MethodProportional, MethodEnvelope:
		d, err := req.kernel()
		if err != nil {
			return nil, err
		}
		d.Method = m
		return d, nil
	default:
		if target {
			return nil, param.Invalid("targets", req.Targets, "the paper's mechanisms have no target mode; give a budget")
		}
		return req.paper(m)
	}
}

// withContext hands r.Context to the solvers that poll it, in copies of
// r.Set and r.Paper (the caller's options are not changed).
func (r *DesignRequest) withContext() {
	if r.Context == nil {
		return
	}
	var set SetOptions
	if r.Set != nil {
		set = *r.Set
	}
	if set.Context == nil {
		set.Context = r.Context
	}
	var paper PaperOptions
	if r.Paper != nil {
		paper = *r.Paper
	}
	var solver sdp.Settings
	if paper.Settings != nil {
		solver = *paper.Settings
	}
	if solver.Context == nil {
		solver.Context = r.Context
	}
	paper.Settings = &solver
	r.Set, r.Paper = &set, &paper
}

// resolve checks that the request gives the prior its method needs and
// resolves the selectors.
func (r *DesignRequest) resolve() (Method, error) {
	m, err := ParseMethod(string(r.Method))
	if err != nil {
		return "", err
	}
	if r.Sigma != nil && r.Envelope != nil {
		return "", param.Invalid("sigma", "", "give the prior as Sigma or as an Envelope with Times, not both")
	}
	if r.Sigma == nil && r.Envelope == nil {
		return "", param.Invalid("sigma", nil, "no prior: give Sigma (a covariance at the trace's points) or an Envelope with Times")
	}
	switch m {
	case MethodAuto:
		switch {
		case r.Sigma != nil:
			m = MethodE3
		case r.Envelope.Proportional:
			m = MethodProportional
		default:
			m = MethodEnvelope
		}
	case MethodPaper:
		m = MethodPaperMultipleSecrets
		if len(r.Secrets) == 1 {
			m = MethodPaperSDPA
		}
	}
	switch {
	case m.Kernel() && r.Envelope == nil:
		return "", param.Invalid("method", m, "is a kernel design: give a prior family's Envelope and the Times, not a covariance matrix")
	case !m.Kernel() && r.Sigma == nil:
		return "", param.Invalid("method", m, "needs the prior covariance Sigma at the trace's points")
	case m == MethodProportional && !r.Envelope.Family.Single():
		return "", param.Invalid("method", m, fmt.Sprintf("needs a single-lengthscale prior; the prior is the family %v (use envelope)", r.Envelope.Family))
	case m == MethodPaperSDPA && len(r.Secrets) != 1:
		return "", param.Invalid("secrets", len(r.Secrets), fmt.Sprintf("SDP_A protects one secret (use %s)", MethodPaperMultipleSecrets))
	}
	return m, nil
}

func (r *DesignRequest) stage(s string) {
	if r.Progress != nil {
		r.Progress(s)
	}
}

// e3 is MethodE3: (E2) for one basic secret, (E3) otherwise.
func (r *DesignRequest) e3() (*NoiseDesign, error) {
	out := &NoiseDesign{Method: MethodE3, Exact: true}
	if len(r.Secrets) == 1 && len(r.Secrets[0].Indices) == 1 {
		var d *Design
		var err error
		if i := r.Secrets[0].Indices[0]; r.Targets != nil {
			d, err = OptimalBasicTarget(r.Sigma, i, r.Targets[0])
		} else {
			d, err = OptimalBasic(r.Sigma, i, r.Budget)
		}
		if err != nil {
			return nil, err
		}
		out.Solver, out.SigmaG, out.Budget, out.Jitter = "e2", d.SigmaG, d.Budget, d.Jitter
		out.LossFactors = []float64{d.LossFactor}
		return out, nil
	}
	var d *SetDesign
	var err error
	if r.Targets != nil {
		r.stage("(E3) target mode")
		d, err = OptimalTarget(r.Sigma, r.Secrets, r.Targets, r.Set)
	} else {
		r.stage("(E3) budget mode")
		d, err = OptimalBudget(r.Sigma, r.Secrets, r.Budget, r.Set)
	}
	if err != nil {
		return nil, err
	}
	out.Solver, out.SigmaG, out.Budget, out.Jitter = d.Method, d.SigmaG, d.Budget, d.Jitter
	out.LossFactors, out.LowerBound, out.Set = d.PerSecret, d.LowerBound, d
	return out, nil
}

// kernel is the kernel designs: alpha times the envelope's kernel.
func (r *DesignRequest) kernel() (*NoiseDesign, error) {
	n := len(r.Times)
	targets := r.Targets
	if targets == nil {
		// Any targets give the eigenvalue bounds; the budget sets alpha.
		targets = []float64{1}
	}
	ts, err := expandTargets(targets, len(r.Secrets))
	if err != nil {
		return nil, err
	}
	fd, err := DesignFamily(r.Envelope, r.Times, r.Secrets, ts)
	if err != nil {
		return nil, err
	}
	if r.Targets == nil {
		// Every point has variance alpha k_D(0) = alpha Overhead.
		fd.Alpha = r.Budget / (float64(n) * r.Envelope.Overhead)
		for i, mu := range fd.MinEigen {
			fd.Bounds[i] = 1 / (fd.Alpha * mu)
		}
	}
	out := &NoiseDesign{Family: fd, LossFactors: fd.Bounds, Exact: fd.Exact}
	out.Budget = float64(n) * (fd.Alpha * r.Envelope.Overhead)
	if !r.KernelOnly {
		out.SigmaG = fd.SigmaG(r.Times)
	}
	return out, nil
}

// paper is the paper's mechanisms, in budget mode.
func (r *DesignRequest) paper(m Method) (*NoiseDesign, error) {
	out := &NoiseDesign{Method: m, Exact: true}
	var d *PaperDesign
	var err error
	if m == MethodPaperSDPA {
		if d, err = PaperSDPA(r.Sigma, r.Secrets[0], r.Budget, r.Paper); err != nil {
			return nil, err
		}
		out.LossFactors = []float64{d.LossFactor}
	} else {
		r.stage("Multiple Secrets")
		if d, out.LossFactors, err = PaperMultipleSecrets(r.Sigma, r.Secrets, r.Budget, r.Paper); err != nil {
			return nil, err
		}
	}
	out.SigmaG, out.Budget, out.Jitter, out.Paper = d.SigmaG, d.Budget, d.Jitter, d
	return out, nil
}

// CheckCovariance reports whether g is a covariance matrix: finite,
// symmetric and positive semidefinite up to rounding (its smallest
// eigenvalue at least -1e-9 n max|g_ij|).
func CheckCovariance(g mat.Symmetric) error {
	n := g.SymmetricDim()
	scale := 0.0
	for i := range n {
		for j := i; j < n; j++ {
			v := g.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return param.Invalid("covariance", v, fmt.Sprintf("entry (%d,%d) is not finite", i+1, j+1))
			}
			scale = math.Max(scale, math.Abs(v))
		}
	}
	if n == 0 {
		return nil
	}
	var e mat.EigenSym
	if !e.Factorize(g, false) {
		return fmt.Errorf("covariance: eigendecomposition: %w", ErrNoConvergence)
	}
	if lo := e.Values(nil)[0]; lo < -1e-9*math.Max(scale, 1e-300)*float64(n) {
		return param.Invalid("covariance", fmt.Sprintf("smallest eigenvalue %v", lo), "is not positive semidefinite: not a covariance")
	}
	return nil
}
