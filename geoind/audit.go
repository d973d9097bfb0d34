package geoind

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/internal/scaletest"
	"github.com/tracepriv/tracepriv/noise"
)

// The mechanisms AuditNoise audits.
const (
	AuditPlanarLaplace = "planar-laplace"
	AuditPredictive    = "predictive"
)

// NoiseAuditOptions configures AuditNoise. Zero fields take the defaults
// given.
type NoiseAuditOptions struct {
	// Mechanism is AuditPlanarLaplace or AuditPredictive.
	Mechanism string
	// Epsilon is the claim, per metre: planar Laplace's ε (default 0.01,
	// noise of 200 m mean radius), or the predictive mechanism's budget
	// per run (default 1; its hard steps are configured for 500 m accuracy
	// at 90 %, ε_N = 0.0078 per metre).
	Epsilon float64
	// Draws is the number of noise draws tested (default 2000): releases
	// of one secret (planar), or hard steps of as many runs as needed
	// (predictive).
	Draws int
	// NoiseFactor in (0, 1) audits the weakened build (noise scaled by
	// the factor: NOT PRIVATE, never built outside this function); 0 or 1
	// is the mechanism as documented.
	NoiseFactor float64
	// Grid is the output grid in metres (default DefaultGrid).
	Grid float64
	// Confidence is the level of EpsilonLower; a mechanism with the noise
	// it states is flagged with probability at most 1 − Confidence
	// (default 0.95).
	Confidence float64
	// Src is the randomness (nil: crypto/rand).
	Src noise.Source
}

// NoiseAuditReport is the outcome of AuditNoise.
type NoiseAuditReport struct {
	Mechanism   string  `json:"mechanism"`
	NoiseFactor float64 `json:"noise_factor"`
	// Epsilon is the claim the noise is tested against (per metre): ε for
	// planar Laplace, the hard steps' ε_N for the predictive mechanism
	// (EpsilonN; the run's budget is BudgetEpsilon).
	Epsilon       float64 `json:"epsilon"`
	BudgetEpsilon float64 `json:"budget_epsilon,omitempty"`
	Grid          float64 `json:"grid"`
	// Runs is the number of predictive runs drawn.
	Runs int `json:"runs,omitempty"`
	// Test is the exact test of the draws (internal/scaletest).
	Test scaletest.Result `json:"test"`
	// EpsilonLower = Test.KappaLower·Epsilon: at Confidence, the noise
	// spends at least this per metre (per hard step for the predictive
	// mechanism).
	EpsilonLower float64 `json:"epsilon_lower"`
	Confidence   float64 `json:"confidence"`
	Violation    bool    `json:"violation"`
}

// AuditNoise tests the noise of planar Laplace (PlanarLaplace.Release) or
// of the predictive mechanism's hard steps (Mechanism.Step) against the
// planar Laplace noise they state, with their exact output distribution: the
// auditor knows the secret, so each release's distance from the secret's
// grid point is the radius of one draw, Gamma(2, 1/ε) under the stated law.
// The radii are tested with internal/scaletest. Two departures from the
// continuous law are both conservative: the noise is drawn at the slightly
// smaller ε_s of SamplingEpsilon (more noise), and the output is rounded to
// the grid, which moves the radius by at most Grid/√2, so the audit tests
// r + Grid/√2, at least the unrounded radius.
//
// For the predictive mechanism the secret jumps 100 km at every query, so
// that every test fails (the prediction is never within reach) and every
// step draws fresh noise at the ε_N its budget manager states (a fixed
// utility manager, Parrot predictor); runs are drawn until Draws hard steps.
// The test's own noise (the Laplace noise on the distance) is not audited.
func AuditNoise(opt NoiseAuditOptions) (*NoiseAuditReport, error) {
	if opt.Draws == 0 {
		opt.Draws = 2000
	}
	if opt.Grid == 0 {
		opt.Grid = DefaultGrid
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	if opt.NoiseFactor == 0 {
		opt.NoiseFactor = 1
	}
	switch {
	case opt.Draws < 1:
		return nil, paramErr("draws", opt.Draws, "a positive number of noise draws")
	case !(opt.NoiseFactor > 0 && opt.NoiseFactor <= 1):
		return nil, paramErr("noise-factor", opt.NoiseFactor, "in (0, 1]: 1 is the mechanism as documented, below 1 the weakened build")
	case !(opt.Confidence > 0 && opt.Confidence < 1):
		return nil, paramErr("confidence", opt.Confidence, "in (0, 1)")
	}
	pl := PlanarLaplace{Grid: opt.Grid, noiseFactor: opt.NoiseFactor}
	if err := pl.Validate(); err != nil {
		return nil, err
	}
	rep := &NoiseAuditReport{Mechanism: opt.Mechanism, NoiseFactor: opt.NoiseFactor, Grid: opt.Grid, Confidence: opt.Confidence}
	slack := opt.Grid / math.Sqrt2
	var obs []scaletest.Obs
	switch opt.Mechanism {
	case AuditPlanarLaplace:
		if opt.Epsilon == 0 {
			opt.Epsilon = 0.01
		}
		if err := CheckNoiseScale("epsilon", opt.Epsilon); err != nil {
			return nil, err
		}
		rep.Epsilon = opt.Epsilon
		x := Vec{1234, -567}
		for range opt.Draws {
			z, err := pl.Release(x, opt.Epsilon, opt.Src)
			if err != nil {
				return nil, err
			}
			obs = append(obs, scaletest.PlanarRadius(Dist(z, x)+slack, opt.Epsilon))
		}
	case AuditPredictive:
		if opt.Epsilon == 0 {
			opt.Epsilon = 1
		}
		if err := checkEpsilon("epsilon", opt.Epsilon); err != nil {
			return nil, err
		}
		rep.BudgetEpsilon = opt.Epsilon
		m := &Mechanism{Manager: FixedUtility{Params: Params{Epsilon: opt.Epsilon}, Accuracy: 500}, Noise: pl}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for len(obs) < opt.Draws {
			var r Run
			for i := 0; len(obs) < opt.Draws; i++ {
				x := Vec{float64(i%2) * 100000, 0}
				st, err := m.Step(r, x, t0.Add(time.Duration(i)*time.Minute), opt.Src)
				if errors.Is(err, ErrExhausted) {
					break
				}
				if err != nil {
					return nil, err
				}
				r = append(r, st)
				if !st.Hard {
					continue
				}
				if rep.Epsilon == 0 {
					rep.Epsilon = st.Decision.EpsN
				} else if rep.Epsilon != st.Decision.EpsN {
					return nil, fmt.Errorf("geoind: audit: the manager changed ε_N from %g to %g per metre", rep.Epsilon, st.Decision.EpsN)
				}
				obs = append(obs, scaletest.PlanarRadius(Dist(st.Z, x)+slack, st.Decision.EpsN))
			}
			rep.Runs++
			if len(r) == 0 {
				return nil, fmt.Errorf("geoind: audit: a budget of %g per metre pays for no step at 500 m accuracy", opt.Epsilon)
			}
		}
	default:
		return nil, paramErr("mechanism", opt.Mechanism, AuditPlanarLaplace+" or "+AuditPredictive)
	}
	var err error
	if rep.Test, err = scaletest.Test(obs, opt.Confidence); err != nil {
		return nil, err
	}
	rep.EpsilonLower = math.Min(rep.Test.KappaLower*rep.Epsilon, math.MaxFloat64)
	rep.Violation = rep.Test.Violation
	return rep, nil
}
