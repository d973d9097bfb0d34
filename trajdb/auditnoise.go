package trajdb

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tracepriv/tracepriv/internal/scaletest"
	"github.com/tracepriv/tracepriv/noise"
)

// NewWeakened returns the mechanism called name (MechanismPrefix or
// MechanismNGram) with its noise and thresholds calibrated to factor times
// its sensitivity: noise factor·Δ/ε̄ instead of Δ/ε̄, so up to ε/factor
// spent where ε is claimed. factor 1 is the mechanism itself; a factor in
// (0, 1) is NOT DIFFERENTIALLY PRIVATE at the claimed epsilon and exists so
// that the audits can be shown to catch a small calibration bug (issue 34):
// its name says so ("prefix-noise-factor-0.7-NOT-PRIVATE"), NewMechanism
// and so the release command never build it, and it claims the tree's
// support, as a mistaken implementation would.
func NewWeakened(name MechanismName, b Bounds, factor float64) (Mechanism, error) {
	if !(factor > 0 && factor <= 1) {
		return nil, fmt.Errorf("trajdb: noise factor %v: want a factor in (0, 1] (1 is the mechanism as documented)", factor)
	}
	if factor == 1 {
		return NewMechanism(name, b, 0)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("trajdb: %s: %w", name, err)
	}
	h := exploreHooks{sensFactor: factor}
	weak := MechanismName(string(name) + "-noise-factor-" + strconv.FormatFloat(factor, 'g', -1, 64) + "-NOT-PRIVATE")
	switch name {
	case MechanismPrefix:
		return brokenTree{weak, &Prefix{Contribution: b, hooks: h}}, nil
	case MechanismNGram:
		return brokenTree{weak, &NGram{Contribution: b, hooks: h}}, nil
	}
	return nil, fmt.Errorf("trajdb: no weakened build of %q (want %s or %s)", name, MechanismPrefix, MechanismNGram)
}

// ErrNotWhiteBox is returned by AuditNoise for a mechanism whose noisy
// counts it cannot observe (one that is not a prefix or n-gram tree).
var ErrNotWhiteBox = errors.New("trajdb: the noise audit needs a prefix or n-gram tree (white box)")

// NoiseAuditOptions is the budget of AuditNoise. Zero fields take the
// defaults given.
type NoiseAuditOptions struct {
	// Epsilon is the privacy parameter the mechanism runs at and claims.
	Epsilon float64
	// Draws is the number of noisy counts tested (default 2000), taken in
	// the order drawn from as many releases of the database as needed, at
	// most MaxReleases (default Draws).
	Draws       int
	MaxReleases int
	// Confidence is the level of the bound; an Epsilon-DP tree is flagged
	// with probability at most 1 − Confidence (default 0.95).
	Confidence float64
	// Src is the releases' randomness (nil: crypto/rand); the releases come
	// from noise.Derive(Src, "audit/noise"), the test's own uniforms from
	// noise.Derive(Src, "audit/noise/pit").
	Src noise.Source
	// Progress, if set, is called with the number of releases just drawn.
	Progress func(releases int)
}

// NoiseAuditReport is the outcome of AuditNoise.
type NoiseAuditReport struct {
	Mechanism MechanismName `json:"mechanism"`
	Epsilon   float64       `json:"epsilon"`
	// Sensitivity is the per-level L1 sensitivity Δ the stated noise is
	// calibrated to (MaxSeqs for the prefix tree, MaxSeqs·MaxLen for the
	// n-gram tree), recomputed by the audit from the bounds.
	Sensitivity float64 `json:"sensitivity"`
	// Releases is the number of releases drawn to collect the draws.
	Releases int `json:"releases"`
	// Test is the exact test of the draws' noise against the stated
	// discrete Laplace noise of parameter (node budget)/Sensitivity
	// (internal/scaletest): KappaLower is the lower confidence bound on the
	// ratio of the true parameter to the stated one.
	Test scaletest.Result `json:"test"`
	// EpsilonLower = KappaLower·Epsilon: at Confidence, the noise spends at
	// least this much on a person holding MaxSeqs copies of a sequence of
	// MaxLen symbols (the loss is proportional to the noise parameter).
	EpsilonLower float64 `json:"epsilon_lower"`
	Confidence   float64 `json:"confidence"`
	Violation    bool    `json:"violation"`
}

// AuditNoise tests the noise of a prefix or n-gram tree against what it
// states, with the exact output distribution of a white box: the trees
// perturb each count with discrete Laplace noise of parameter ε_v/Δ (ε_v
// the node's budget, Δ the sensitivity of its level). The audit draws
// releases of db (bounded by the mechanism's bounds) and observes, through
// a tap on the one function both trees draw their counts with, each count
// drawn one by one, its true value and its node's budget: each is a fresh
// independent draw given what came before (which nodes are expanded
// depends on earlier noise only), and the zero-count children drawn through
// the threshold shortcut, conditioned on exceeding it, are not used. The
// first opt.Draws noise values are tested with internal/scaletest against
// the parameter the audit computes itself: uniformBudget(ε, h)/MaxSeqs for
// the prefix tree, ε_v/(MaxSeqs·MaxLen) for the n-gram tree.
//
// Many counts per release make it cheap: on the demonstration database a
// tree with 0.7 times its noise is flagged in one audit of a few hundred
// releases (docs/audit.md gives the power curves). It tests the noise
// calibration, not the rest: a support or post-processing flaw is
// AuditSupport's to find, and a budget split that overspends along a path
// is trusted for the n-gram tree (its node budgets are read, not
// recomputed).
func AuditNoise(m Mechanism, db *DB, opt NoiseAuditOptions) (*NoiseAuditReport, error) {
	if m == nil || db == nil {
		return nil, errors.New("trajdb: noise audit: no mechanism or no database")
	}
	if !(opt.Epsilon > 0) || math.IsInf(opt.Epsilon, 1) {
		return nil, fmt.Errorf("trajdb: noise audit: epsilon must be positive and finite, got %v", opt.Epsilon)
	}
	if opt.Draws == 0 {
		opt.Draws = 2000
	}
	if opt.MaxReleases == 0 {
		opt.MaxReleases = opt.Draws
	}
	if opt.Confidence == 0 {
		opt.Confidence = auditDefaultConfidence
	}
	if opt.Draws < 1 || opt.MaxReleases < 1 || !(opt.Confidence > 0 && opt.Confidence < 1) {
		return nil, fmt.Errorf("trajdb: noise audit: Draws and MaxReleases must be positive and Confidence in (0, 1), got %d, %d, %v",
			opt.Draws, opt.MaxReleases, opt.Confidence)
	}
	b := m.Bounds()
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("trajdb: noise audit: %w", err)
	}
	d, err := Bound(db, b)
	if err != nil {
		return nil, err
	}
	pit := noise.Derive(opt.Src, "audit/noise/pit")
	var obs []scaletest.Obs
	var lambda func(budget float64) float64
	tap := func(count, y int64, budget float64) {
		if len(obs) < opt.Draws {
			obs = append(obs, scaletest.DiscreteLaplace(y-count, lambda(budget), noise.Uniform(pit)))
		}
	}
	tm, sens, lam, err := tapped(m, &noiseTap{tap}, opt.Epsilon)
	if err != nil {
		return nil, err
	}
	lambda = lam
	rep := &NoiseAuditReport{Mechanism: m.Name(), Epsilon: opt.Epsilon, Sensitivity: sens, Confidence: opt.Confidence}
	src := noise.Derive(opt.Src, "audit/noise")
	for len(obs) < opt.Draws && rep.Releases < opt.MaxReleases {
		if _, err := tm.Synthesize(d, opt.Epsilon, src); err != nil {
			return nil, fmt.Errorf("trajdb: noise audit: %s: %w", m.Name(), err)
		}
		rep.Releases++
		if opt.Progress != nil {
			opt.Progress(1)
		}
	}
	if len(obs) == 0 {
		return nil, fmt.Errorf("trajdb: noise audit: %d releases of %s drew no count one by one (an empty database?)", rep.Releases, m.Name())
	}
	if rep.Test, err = scaletest.Test(obs, opt.Confidence); err != nil {
		return nil, err
	}
	rep.EpsilonLower = math.Min(rep.Test.KappaLower*opt.Epsilon, math.MaxFloat64)
	rep.Violation = rep.Test.Violation
	return rep, nil
}

// tapped returns a copy of the tree m (possibly a control or weakened
// build) whose draws go to tap, with the sensitivity and the noise
// parameter the audit states for a node of the given budget.
func tapped(m Mechanism, tap *noiseTap, epsilon float64) (Mechanism, float64, func(float64) float64, error) {
	name := m.Name()
	if bt, ok := m.(brokenTree); ok {
		m = bt.tree
	}
	switch t := m.(type) {
	case *Prefix:
		c := *t
		c.hooks.tap = tap
		sens := float64(c.Contribution.MaxSeqs)
		// The uniform split the prefix tree states, recomputed here.
		lam := uniformBudget(epsilon, c.Contribution.MaxLen) / sens
		return renamed(name, &c), sens, func(float64) float64 { return lam }, nil
	case *NGram:
		c := *t
		c.hooks.tap = tap
		sens := float64(c.Contribution.MaxSeqs) * float64(c.Contribution.MaxLen)
		return renamed(name, &c), sens, func(b float64) float64 { return b / sens }, nil
	}
	return nil, 0, nil, fmt.Errorf("%w, not %s", ErrNotWhiteBox, name)
}

// renamed keeps a tapped tree's name (a control's or weakened build's).
func renamed(name MechanismName, m Mechanism) Mechanism {
	if m.Name() == name {
		return m
	}
	return brokenTree{name, m}
}
