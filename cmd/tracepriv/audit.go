package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/risk"
)

// auditReport is the JSON of "audit".
type auditReport struct {
	Mechanism string   `json:"mechanism"`
	Epsilon   float64  `json:"epsilon"`
	Sigma     *float64 `json:"sigma,omitempty"`
	risk.AuditResult
	// ExactRAD is the mechanism's exact RAD (Theorem 5.3) at its claimed
	// parameter: an audit whose interval lies above it refutes the claim.
	ExactRAD float64 `json:"exact_rad"`
	// EpsilonLower is Eq. (5.60) at the measured RAD, and
	// EpsilonLowerConservative at the interval's lower end: any ε-DP
	// mechanism with a smaller ε would have a smaller RAD. Omitted (null)
	// when the RAD is at the bound's supremum.
	EpsilonLower             *float64 `json:"epsilon_lower"`
	EpsilonLowerConservative *float64 `json:"epsilon_lower_conservative"`
	// FamilyEstimate inverts the mechanism family's own exact RAD at the
	// measured RAD (the thesis's audit of a known mechanism): the ε
	// (laplace, grr) or σ (gaussian) a mechanism of that family would need
	// to show this RAD. Null when the RAD is not positive or at the supremum.
	FamilyEstimate *float64 `json:"family_estimate"`
	FamilyParam    string   `json:"family_param"`
	Source         string   `json:"source"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			mech                   string
			eps, delta, conf       float64
			m, trials, train, bins int
			attack                 string
		)
		c := &cobra.Command{
			Use:   "audit --mechanism " + mechanismList(auditable(), "|", "|") + " --epsilon E --m M --trials N",
			Short: "Audit a mechanism's privacy claim by a reconstruction attack",
			Long: `Run a reconstruction attack against tracepriv's own mechanism and report
its empirical reconstruction advantage (RAD) with a Clopper-Pearson interval,
and the epsilon the measurement implies (Eq. 5.60 of Guerra-Balboa's thesis,
valid for any epsilon-DP mechanism under a uniform prior on m values).

The m secrets are query values spread evenly over a unit range (laplace,
gaussian: the worst case of (A.18) and (A.12)) or the m categories (grr). Each
trial draws a secret uniformly, runs the mechanism (noise.Laplace with
sensitivity 1, noise.Gaussian with the analytic-Gaussian sigma for --epsilon
and --delta, or generalised randomised response), and lets the attack guess.
--attack bayes uses the mechanism's likelihood (the optimal attack, Algorithm
1); --attack learned fits a histogram attack on separate training runs and
knows nothing about the mechanism.`,
			Example: `  tracepriv audit --mechanism laplace --epsilon 1 --m 10 --trials 20000
  tracepriv audit --mechanism grr --epsilon 2 --m 4 --trials 20000 --attack learned --seed 1 --json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if m < 2 {
					return fmt.Errorf("--m must be at least 2, got %d", m)
				}
				if !(eps > 0) || math.IsInf(eps, 0) {
					return fmt.Errorf("--epsilon must be positive and finite, got %v", eps)
				}
				if attack != "bayes" && attack != "learned" {
					return fmt.Errorf("unknown --attack %q (want bayes or learned)", attack)
				}
				mc, err := lookupMechanism(mech, auditable())
				if err != nil {
					return err
				}
				src := env.Source()
				rep := auditReport{Mechanism: mech, Epsilon: eps, Source: noise.Describe(src)}
				target, err := mc.Audit(risk.Params{M: m, Epsilon: eps, Delta: delta}, src)
				if err != nil {
					return err
				}
				if target.Sigma != 0 {
					rep.Sigma = &target.Sigma
				}
				rep.ExactRAD = target.ExactRAD
				a := risk.Auditor{M: m, Trials: trials, TrainTrials: train, Bins: bins, Confidence: conf, Src: src}
				total := trials
				if attack == "learned" {
					tt := train
					if tt == 0 {
						tt = max(trials/m, 1000)
					}
					total += tt * m
				}
				bar := env.Progress(total, "auditing")
				a.Progress = func(n int) { _ = bar.Add(n) }
				res, err := a.Audit(target, attack)
				_ = bar.Finish()
				if err != nil {
					return err
				}
				rep.AuditResult = res
				if res.RAD > 0 {
					// The family's own exact RAD, inverted at the measurement.
					rep.FamilyParam = mc.Param
					if v, err := mc.Calibrate(res.RAD, risk.Params{M: m}); err == nil {
						rep.FamilyEstimate = &v
					}
				}
				point, cons, err := res.EpsilonLower()
				if err == nil || errors.Is(err, risk.ErrNotInvertible) {
					if !math.IsInf(point, 0) {
						rep.EpsilonLower = &point
					}
					if !math.IsInf(cons, 0) {
						rep.EpsilonLowerConservative = &cons
					}
				} else {
					return err
				}
				return env.Emit(rep, func(w io.Writer) error {
					fmt.Fprintf(w, "%s attack on %s (ε = %g, m = %d), %d trials, source %s\n", res.Attack, mech, eps, m, res.Trials, rep.Source)
					fmt.Fprintf(w, "empirical RAD %.5f, %g%% Clopper-Pearson interval [%.5f, %.5f]; exact RAD %.5f\n",
						res.RAD, 100*res.Confidence, res.RADLower, res.RADUpper, rep.ExactRAD)
					if rep.FamilyEstimate != nil {
						fmt.Fprintf(w, "a %s mechanism with this RAD has %s %.4f\n", mech, rep.FamilyParam, *rep.FamilyEstimate)
					}
					if rep.EpsilonLower != nil && rep.EpsilonLowerConservative != nil {
						fmt.Fprintf(w, "any ε-DP mechanism with this RAD has ε ≥ %.4f (point), ≥ %.4f (at the interval's lower end)\n", *rep.EpsilonLower, *rep.EpsilonLowerConservative)
					}
					return nil
				})
			},
		}
		fl := c.Flags()
		fl.StringVar(&mech, "mechanism", "", mechanismList(auditable(), ", ", " or "))
		fl.Float64Var(&eps, "epsilon", 0, "claimed epsilon of the mechanism")
		fl.Float64Var(&delta, "delta", 1e-5, "delta for the Gaussian mechanism")
		fl.IntVar(&m, "m", 0, "number of candidate secrets (uniform prior)")
		fl.IntVar(&trials, "trials", 100000, "evaluation trials")
		fl.IntVar(&train, "train", 0, "training runs per secret for --attack learned (default max(trials/m, 1000))")
		fl.IntVar(&bins, "bins", 0, "histogram bins for --attack learned on continuous outputs (default from the training size)")
		fl.Float64Var(&conf, "confidence", 0.95, "two-sided confidence level of the interval")
		fl.StringVar(&attack, "attack", "bayes", "bayes (uses the mechanism's likelihood) or learned (black box)")
		_ = c.MarkFlagRequired("mechanism")
		_ = c.MarkFlagRequired("epsilon")
		_ = c.MarkFlagRequired("m")
		c.AddCommand(auditSupportCmd(env))
		return c
	})
}

// auditable returns the mechanisms that tracepriv implements and so can
// audit.
func auditable() []risk.Mechanism {
	var a []risk.Mechanism
	for _, m := range risk.Mechanisms() {
		if m.Audit != nil {
			a = append(a, m)
		}
	}
	return a
}
