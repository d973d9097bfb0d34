package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/scaletest"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// auditNoiseReport is the JSON of "audit noise": the fields every noise
// audit shares, and the library's own report in detail.
type auditNoiseReport struct {
	Mechanism   string  `json:"mechanism"`
	NoiseFactor float64 `json:"noise_factor"`
	// NotPrivate is set for a weakened build (--noise-factor below 1).
	NotPrivate   bool             `json:"not_private,omitempty"`
	Epsilon      float64          `json:"epsilon"`
	Violation    bool             `json:"violation"`
	EpsilonLower float64          `json:"epsilon_lower"`
	Confidence   float64          `json:"confidence"`
	Test         scaletest.Result `json:"test"`
	Detail       any              `json:"detail"`
}

// auditNoiseCmd is "tracepriv audit noise".
type auditNoiseCmd struct {
	env                              *cli.Env
	mech, in, priorPath              string
	factor, eps, lambda, radius, con float64
	draws                            int
}

func newAuditNoiseCmd(env *cli.Env) *cobra.Command {
	c := &auditNoiseCmd{env: env}
	long, example := help("audit noise")
	cmd := &cobra.Command{
		Use:     "noise --mechanism planar-laplace|predictive|cip [--noise-factor F]",
		Short:   "Test a mechanism's noise against the noise it states (white box, exact)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.mech, "mechanism", "", "planar-laplace, predictive or cip")
	fl.Float64Var(&c.factor, "noise-factor", 1, "audit the weakened build with this factor times the noise (in (0, 1]; below 1 NOT PRIVATE)")
	fl.Float64Var(&c.eps, "epsilon", 0, "the claim: per metre for planar-laplace (default 0.01) and predictive (the run's budget, default 1); the CIP target (default 1)")
	fl.Float64Var(&c.lambda, "lambda", 2, "cip: Renyi order")
	fl.Float64Var(&c.radius, "radius", 100, "cip: radius in metres")
	fl.StringVar(&c.in, "in", "", "cip: the trace file of one person to release (default: the bundled sample trace)")
	fl.StringVar(&c.priorPath, "prior", "", "cip: the prior family (default: the bundled prior)")
	fl.IntVar(&c.draws, "draws", 0, "noise draws tested (default 2000)")
	fl.Float64Var(&c.con, "confidence", 0.95, "level of epsilon_lower; the noise as stated is flagged with probability at most 1 - this")
	_ = cmd.MarkFlagRequired("mechanism")
	return cmd
}

func (c *auditNoiseCmd) run() error {
	rep := auditNoiseReport{Mechanism: c.mech, NoiseFactor: c.factor, NotPrivate: c.factor < 1}
	src := c.env.Source()
	switch c.mech {
	case geoind.AuditPlanarLaplace, geoind.AuditPredictive:
		r, err := geoind.AuditNoise(geoind.NoiseAuditOptions{
			Mechanism: c.mech, Epsilon: c.eps, Draws: c.draws, NoiseFactor: c.factor, Confidence: c.con, Src: src,
		})
		if err != nil {
			return fmt.Errorf("audit noise: %w", err)
		}
		rep.Epsilon, rep.Violation, rep.EpsilonLower, rep.Confidence, rep.Test, rep.Detail = r.Epsilon, r.Violation, r.EpsilonLower, r.Confidence, r.Test, r
	case "cip":
		eps := c.eps
		if eps == 0 {
			eps = 1
		}
		traces, prior, err := auditNoiseInput(c.in, c.priorPath)
		if err != nil {
			return fmt.Errorf("audit noise: %w", err)
		}
		r, err := sanitize.AuditNoise(traces, sanitize.NoiseAuditOptions{
			Release:     sanitize.Options{Prior: prior, Epsilon: eps, Lambda: c.lambda, Radius: c.radius, Source: src, AllowPriorOverlap: true},
			Draws:       c.draws,
			NoiseFactor: c.factor,
			Confidence:  c.con,
		})
		if err != nil {
			return fmt.Errorf("audit noise: %w", err)
		}
		rep.Epsilon, rep.Violation, rep.EpsilonLower, rep.Confidence, rep.Test, rep.Detail = r.Epsilon, r.Violation, r.EpsilonLower, r.Confidence, r.Test, r
	default:
		return fmt.Errorf("audit noise: --mechanism %q: want planar-laplace, predictive or cip", c.mech)
	}
	return c.env.Emit(rep, rep.writeText)
}

func (r *auditNoiseReport) writeText(w io.Writer) error {
	name := r.Mechanism
	if r.NotPrivate {
		name += fmt.Sprintf(" (noise factor %g: NOT PRIVATE)", r.NoiseFactor)
	}
	verdict := "no violation"
	if r.Violation {
		verdict = "VIOLATION: less noise than stated"
	}
	fmt.Fprintf(w, "%s: %d noise draws tested against the stated noise, p = %.3g: %s\n", name, r.Test.Draws, r.Test.PValue, verdict)
	_, err := fmt.Fprintf(w, "epsilon stated %.4g; the noise spends at least %.4g (at %g confidence)\n", r.Epsilon, r.EpsilonLower, r.Confidence)
	return err
}

// auditNoiseInput reads the CIP audit's trace and prior, or the bundled
// ones.
func auditNoiseInput(in, priorPath string) ([]*trace.Trace, *prior.Prior, error) {
	var pr *prior.Prior
	var err error
	if priorPath != "" {
		if pr, err = prior.ReadFile(priorPath); err != nil {
			return nil, nil, fmt.Errorf("--prior: %w", err)
		}
	} else if pr, err = sample.Prior(); err != nil {
		return nil, nil, err
	}
	if in == "" {
		ts, err := sample.Traces()
		if err != nil {
			return nil, nil, err
		}
		return ts[:1], pr, nil
	}
	ts, _, err := trace.ReadFile(in, trace.ReadOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("--in: %w", err)
	}
	return ts, pr, nil
}
