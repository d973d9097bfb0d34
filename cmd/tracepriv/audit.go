package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/repro"
	"github.com/tracepriv/tracepriv/risk"
	"github.com/tracepriv/tracepriv/trajdb"
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
					return usageErrorf("--m must be at least 2, got %d", m)
				}
				if !(eps > 0) || math.IsInf(eps, 0) {
					return usageErrorf("--epsilon must be positive and finite, got %v", eps)
				}
				if attack != "bayes" && attack != "learned" {
					return usageErrorf("unknown --attack %q (want bayes or learned)", attack)
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
		c.AddCommand(auditNoiseCmd(env))
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

// auditSupportMechanism is the mechanism "audit support --mechanism name"
// audits: a release mechanism, or one of trajdb's negative controls
// (which release never offers).
func auditSupportMechanism(name trajdb.MechanismName, b trajdb.Bounds, factor float64) (trajdb.Mechanism, error) {
	if slices.Contains(trajdb.NegativeControls(), name) {
		if factor != 1 {
			return nil, fmt.Errorf("--noise-factor %g: a negative control is broken already; give --noise-factor with prefix or ngram", factor)
		}
		return trajdb.NewNegativeControl(name, b)
	}
	m, err := trajdb.NewWeakened(name, b, factor)
	if err != nil {
		return nil, fmt.Errorf("--mechanism %s: %w (or a negative control: %s)", name, err, controlNames(", "))
	}
	return m, nil
}

// controlNames lists trajdb's negative controls, joined by sep.
func controlNames(sep string) string {
	var s []string
	for _, n := range trajdb.NegativeControls() {
		s = append(s, string(n))
	}
	return strings.Join(s, sep)
}

// auditSupportCmd is "tracepriv audit support".
func auditSupportCmd(env *cli.Env) *cobra.Command {
	var (
		rf            readFlags
		u             universeFlags
		mec, in, seqs string
		eps, factor   float64
		opt           trajdb.AuditOptions
	)
	controls := controlNames("|")
	c := &cobra.Command{
		Use:   "support --mechanism prefix|ngram|" + controls,
		Short: "Search neighbouring databases for evidence that a trajectory-database mechanism is not epsilon-DP",
		Long: `Audit a trajectory-database mechanism at user level. Release from a database
and from neighbours made by removing one person or adding one holding a
candidate sequence, then look for:

  - a sequence released under one that the mechanism's own support model says
    the other can never release (an infinite privacy loss: Propositions 3.5
    and 3.6 of Guerra-Balboa's thesis);
  - an event on the releases' counts (copies of the person's sequences,
    sequences beginning with their prefixes, occurrences of their grams, the
    number of releases) whose probabilities prove a privacy loss above
    --epsilon. The exploration picks the --confirm-neighbours most telling
    events; --confirm-draws fresh releases of each side then test them with
    one-sided Clopper-Pearson bounds, Bonferroni-corrected, so an
    epsilon-DP mechanism is flagged with probability at most
    1 - --confidence (false_alarm_bound);
  - less noise than the tree states (prefix, ngram): --noise-draws noisy
    counts, observed as the tree draws them, tested exactly against the
    stated discrete Laplace noise (a white-box test; it shares
    1 - --confidence with the count test). epsilon_lower is the larger of
    the two tests' bounds, at "confidence".

--noise-factor F < 1 audits a deliberately weakened build of prefix or ngram
(noise and thresholds for F times the sensitivity: NOT PRIVATE, built only
here) to show that the audit catches a small calibration bug (docs/audit.md).

The database is the thesis-style demonstration (40 people over 4 symbols, one
victim alone on <3 1 2>) unless --seqs (a symbolic sequence file, one
sequence per line, or "id: sequence" lines) or --in with --cell-m and --bbox
(a trace directory on a grid) is given.

The negative controls are not differentially private and the audit must flag
them; release never offers them:
  flawed-present-only         noisy counts of the sequences present (the
                              published design of Prop. 3.5), honest support
  flawed-present-only-prefix  prefix tree with noise on present children only
  prefix-noiseless            prefix tree without noise: releases the input
  ngram-tenth-noise           n-gram tree with a tenth of its noise
The three trees claim the correct trees' support, so only their counts can
betray them. At the default budget the audit flags each of them at epsilon 1,
2 and 4 on the demonstration database (docs/audit.md).

The search finds violations; it cannot prove their absence. The report states
its budget. The exit status is 0 either way; read "violation" and "witness".`,
		Example: `  tracepriv audit support --mechanism flawed-present-only-prefix --seed 1 --json
  tracepriv audit support --mechanism prefix --epsilon 2
  tracepriv audit support --mechanism ngram-tenth-noise --draws 300
  tracepriv audit support --mechanism ngram --noise-factor 0.7 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(eps > 0) || math.IsInf(eps, 0) {
				return usageErrorf("audit support: --epsilon must be positive and finite, got %v", eps)
			}
			boundsGiven := cmd.Flags().Changed("max-len") || cmd.Flags().Changed("max-seqs")
			var db *trajdb.DB
			b := repro.AuditDemoBounds()
			switch {
			case in != "" && seqs != "":
				return usageErrorf("audit support: give --in or --seqs, not both")
			case in != "":
				g, err := u.grid()
				if err != nil {
					return fmt.Errorf("audit support: %w", err)
				}
				if db, _, err = readTrajectories(env, &rf, &u, g, in); err != nil {
					return fmt.Errorf("audit support: --in %w", err)
				}
				boundsGiven = true
			case seqs != "":
				var err error
				if db, err = trajdb.ReadSequencesFile(seqs, trajdb.SeqOptions{Size: u.alphabet, Base: u.base}); err != nil {
					return fmt.Errorf("audit support: --seqs: %w", err)
				}
			default:
				db, _ = repro.AuditDemoDB()
			}
			if boundsGiven {
				var err error
				if b, err = u.bounds(); err != nil {
					return fmt.Errorf("audit support: %w", err)
				}
			}
			m, err := auditSupportMechanism(trajdb.MechanismName(mec), b, factor)
			if err != nil {
				return fmt.Errorf("audit support: %w", err)
			}
			opt.Epsilon, opt.Src = eps, env.Source()
			bar := env.Progress(-1, "audit: releases drawn")
			// A line on stderr every 100 releases as well, where the bar
			// is silent (no terminal, --json): a long audit of a large
			// database shows it is alive.
			drawn, start := 0, time.Now()
			opt.Progress = func(n int) {
				_ = bar.Add(n)
				if drawn += n; drawn%100 == 0 && !env.Quiet {
					fmt.Fprintf(env.Stderr, "audit support: %d releases drawn (%.0f s)\n", drawn, time.Since(start).Seconds())
				}
			}
			rep, err := trajdb.AuditSupport(m, db, opt)
			_ = bar.Finish()
			if err != nil {
				return fmt.Errorf("audit support: %w", err)
			}
			return env.Emit(rep, func(w io.Writer) error { return writeAuditSupport(w, rep) })
		},
	}
	fl := c.Flags()
	fl.StringVar(&mec, "mechanism", "", "prefix, ngram, or a negative control: "+controlNames(", "))
	fl.Float64Var(&eps, "epsilon", 1, "the epsilon the mechanism runs at and claims")
	fl.StringVar(&seqs, "seqs", "", "symbolic sequence database to audit (default: the demonstration database)")
	fl.StringVar(&in, "in", "", "trace directory to audit, mapped with --cell-m and --bbox")
	fl.IntVar(&opt.Draws, "draws", 0, "exploration releases of the database (default 1000)")
	fl.IntVar(&opt.NeighbourDraws, "neighbour-draws", 0, "exploration releases of each neighbour (default 100)")
	fl.IntVar(&opt.MaxRemovals, "max-removals", 0, "neighbours made by removing a person (default 32; -1 none)")
	fl.IntVar(&opt.MaxAdditions, "max-additions", 0, "neighbours made by adding a person (default 64; -1 none)")
	fl.IntVar(&opt.RandomCandidates, "random-candidates", 0, "random candidate sequences for additions (default 32; -1 none)")
	fl.IntVar(&opt.ConfirmNeighbours, "confirm-neighbours", 0, "neighbours whose best event is tested on fresh releases (default 2; -1 none: support only)")
	fl.IntVar(&opt.ConfirmDraws, "confirm-draws", 0, "fresh releases of the database and of each tested neighbour (default 8000)")
	fl.Float64Var(&opt.Confidence, "confidence", 0, "the statistical test flags an epsilon-DP mechanism with probability at most 1 - this (default 0.95)")
	fl.BoolVar(&opt.StopAtFirst, "stop-at-first", false, "stop at the first support violation")
	fl.Float64Var(&opt.MaxWork, "max-work", 0, "cap on releases times database size (symbols plus persons); a larger database gets a scaled-down search, or a refusal saying what fits (default 2e8; -1 no cap)")
	fl.IntVar(&opt.NoiseDraws, "noise-draws", 0, "noisy counts the white-box noise test checks against the tree's stated noise (default 2000; -1 none)")
	fl.Float64Var(&factor, "noise-factor", 1, "audit a deliberately weakened build of prefix or ngram with this factor times its noise (in (0, 1]; below 1 it is NOT PRIVATE and only the audit builds it)")
	u.add(fl)
	rf.addTo(fl)
	_ = c.MarkFlagRequired("mechanism")
	return c
}

// writeAuditSupport prints an audit report for people.
func writeAuditSupport(w io.Writer, rep *trajdb.AuditReport) error {
	b := rep.Budget
	fmt.Fprintf(w, "%s at epsilon %g on %d people: %s\n", rep.Mechanism, rep.Epsilon, b.Persons, rep.Verdict)
	fmt.Fprintf(w, "budget: %d neighbours (%d removed, %d added), %d candidates, %d counts per release, %d events scored; %d releases in all, %d fresh for each of %d tests; randomness %s\n",
		b.Neighbours, b.Removals, b.Additions, b.Candidates, b.Statistics, b.Events, b.Releases, b.ConfirmDraws, len(rep.Tests), rep.Randomness)
	if nt := rep.NoiseTest; nt != nil {
		fmt.Fprintf(w, "noise test: %d noisy counts from %d releases against the stated discrete Laplace noise (sensitivity %g): p = %.3g; the noise spends at least %.3g at %g confidence\n",
			nt.Test.Draws, nt.Releases, nt.Sensitivity, nt.Test.PValue, nt.EpsilonLower, nt.Confidence)
	}
	for _, t := range rep.Tests {
		fmt.Fprintf(w, "test: %s %q; event %q: %d of %d releases of %s, %d of %d of %s; proves a loss >= %.3g\n",
			t.Change, t.Person, t.Event.Text, t.Observed, t.Draws, t.Under, t.ObservedOther, t.DrawsOther, t.Other, t.EpsilonLower)
	}
	if wt := rep.Witness; wt != nil && wt.Kind != "statistical" && wt.Kind != "noise" {
		fmt.Fprintf(w, "witness (%s): sequence %v, %s person %q: observed %d of %d releases under %s; other database can output it: %v\n",
			wt.Kind, wt.Sequence, wt.Change, wt.Person, wt.Observed, wt.Draws, wt.Under, wt.CanOutputOther)
	}
	_, err := fmt.Fprintf(w, "epsilon lower bound %.3g at %g confidence; false alarms on an epsilon-DP mechanism: at most %.3g\n", rep.EpsilonLower, rep.Confidence, rep.FalseAlarmBound)
	return err
}
