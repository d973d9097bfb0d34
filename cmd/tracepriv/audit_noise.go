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
func auditNoiseCmd(env *cli.Env) *cobra.Command {
	var (
		mech, in, priorPath              string
		factor, eps, lambda, radius, con float64
		draws                            int
	)
	c := &cobra.Command{
		Use:   "noise --mechanism planar-laplace|predictive|cip [--noise-factor F]",
		Short: "Test a mechanism's noise against the noise it states (white box, exact)",
		Long: `Draw many releases of a secret the audit knows and test the noise they
carry against the law the mechanism states, exactly (docs/audit.md):

  planar-laplace  geoind's planar Laplace on a 1 m grid; the radius of each
                  release is Gamma(2, 1/epsilon) (--epsilon per metre,
                  default 0.01)
  predictive      the predictive mechanism's hard steps (fixed utility, 500 m
                  at 90 %); the secret jumps so that every step draws fresh
                  noise at its epsilon_N (--epsilon is the run's budget per
                  metre, default 1)
  cip             the CIP sanitize sampler on the bundled sample trace and
                  prior (or --in and --prior, one person): the noise, whitened
                  by the certificate's covariance, is standard normal

The test flags noise smaller than stated with probability at most
1 - --confidence when the noise is as stated (violation), and epsilon_lower
is the epsilon the noise spends at least, at that confidence.

--noise-factor F < 1 audits a deliberately weakened build (the noise times F:
NOT PRIVATE; only the audit builds it, and its output is never written).`,
		Example: `  tracepriv audit noise --mechanism planar-laplace --json
  tracepriv audit noise --mechanism cip --noise-factor 0.7 --seed 1 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := auditNoiseReport{Mechanism: mech, NoiseFactor: factor, NotPrivate: factor < 1}
			src := env.Source()
			switch mech {
			case geoind.AuditPlanarLaplace, geoind.AuditPredictive:
				r, err := geoind.AuditNoise(geoind.NoiseAuditOptions{
					Mechanism: mech, Epsilon: eps, Draws: draws, NoiseFactor: factor, Confidence: con, Src: src,
				})
				if err != nil {
					return fmt.Errorf("audit noise: %w", err)
				}
				rep.Epsilon, rep.Violation, rep.EpsilonLower, rep.Confidence, rep.Test, rep.Detail = r.Epsilon, r.Violation, r.EpsilonLower, r.Confidence, r.Test, r
			case "cip":
				if eps == 0 {
					eps = 1
				}
				traces, prior, err := auditNoiseInput(in, priorPath)
				if err != nil {
					return fmt.Errorf("audit noise: %w", err)
				}
				r, err := sanitize.AuditNoise(traces, sanitize.NoiseAuditOptions{
					Release:     sanitize.Options{Prior: prior, Epsilon: eps, Lambda: lambda, Radius: radius, Source: src, AllowPriorOverlap: true},
					Draws:       draws,
					NoiseFactor: factor,
					Confidence:  con,
				})
				if err != nil {
					return fmt.Errorf("audit noise: %w", err)
				}
				rep.Epsilon, rep.Violation, rep.EpsilonLower, rep.Confidence, rep.Test, rep.Detail = r.Epsilon, r.Violation, r.EpsilonLower, r.Confidence, r.Test, r
			default:
				return fmt.Errorf("audit noise: --mechanism %q: want planar-laplace, predictive or cip", mech)
			}
			return env.Emit(rep, func(w io.Writer) error {
				name := mech
				if rep.NotPrivate {
					name += fmt.Sprintf(" (noise factor %g: NOT PRIVATE)", factor)
				}
				fmt.Fprintf(w, "%s: %d noise draws tested against the stated noise, p = %.3g: %s\n", name, rep.Test.Draws, rep.Test.PValue,
					map[bool]string{true: "VIOLATION: less noise than stated", false: "no violation"}[rep.Violation])
				_, err := fmt.Fprintf(w, "epsilon stated %.4g; the noise spends at least %.4g (at %g confidence)\n", rep.Epsilon, rep.EpsilonLower, rep.Confidence)
				return err
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&mech, "mechanism", "", "planar-laplace, predictive or cip")
	fl.Float64Var(&factor, "noise-factor", 1, "audit the weakened build with this factor times the noise (in (0, 1]; below 1 NOT PRIVATE)")
	fl.Float64Var(&eps, "epsilon", 0, "the claim: per metre for planar-laplace (default 0.01) and predictive (the run's budget, default 1); the CIP target (default 1)")
	fl.Float64Var(&lambda, "lambda", 2, "cip: Renyi order")
	fl.Float64Var(&radius, "radius", 100, "cip: radius in metres")
	fl.StringVar(&in, "in", "", "cip: the trace file of one person to release (default: the bundled sample trace)")
	fl.StringVar(&priorPath, "prior", "", "cip: the prior family (default: the bundled prior)")
	fl.IntVar(&draws, "draws", 0, "noise draws tested (default 2000)")
	fl.Float64Var(&con, "confidence", 0.95, "level of epsilon_lower; the noise as stated is flagged with probability at most 1 - this")
	_ = c.MarkFlagRequired("mechanism")
	return c
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
