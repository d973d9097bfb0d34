package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
	"github.com/tracepriv/tracepriv/risk"
	"github.com/tracepriv/tracepriv/trajdb"
)

func init() { register(newAuditCmd) }

// auditCmd is "tracepriv audit".
type auditCmd struct {
	env                    *cli.Env
	mech, attack           string
	eps, delta, conf       float64
	m, trials, train, bins int
}

func newAuditCmd(env *cli.Env) *cobra.Command {
	c := &auditCmd{env: env}
	long, example := help("audit")
	cmd := &cobra.Command{
		Use:     "audit --mechanism " + risk.JoinNames(risk.Auditable(), "|", "|") + " --epsilon E --m M --trials N",
		Short:   "Audit a mechanism's privacy claim by a reconstruction attack",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.mech, "mechanism", "", risk.JoinNames(risk.Auditable(), ", ", " or "))
	fl.Float64Var(&c.eps, "epsilon", 0, "claimed epsilon of the mechanism")
	fl.Float64Var(&c.delta, "delta", 1e-5, "delta for the Gaussian mechanism")
	fl.IntVar(&c.m, "m", 0, "number of candidate secrets (uniform prior)")
	fl.IntVar(&c.trials, "trials", 100000, "evaluation trials")
	fl.IntVar(&c.train, "train", 0, "training runs per secret for --attack learned (default max(trials/m, 1000))")
	fl.IntVar(&c.bins, "bins", 0, "histogram bins for --attack learned on continuous outputs (default from the training size)")
	fl.Float64Var(&c.conf, "confidence", 0.95, "two-sided confidence level of the interval")
	fl.StringVar(&c.attack, "attack", "bayes", "bayes (uses the mechanism's likelihood) or learned (black box)")
	_ = cmd.MarkFlagRequired("mechanism")
	_ = cmd.MarkFlagRequired("epsilon")
	_ = cmd.MarkFlagRequired("m")
	cmd.AddCommand(newAuditSupportCmd(env), newAuditNoiseCmd(env))
	return cmd
}

func (c *auditCmd) run() error {
	if c.m < 2 {
		return usageErrorf("--m must be at least 2, got %d", c.m)
	}
	if !(c.eps > 0) || math.IsInf(c.eps, 0) {
		return usageErrorf("--epsilon must be positive and finite, got %v", c.eps)
	}
	if c.attack != "bayes" && c.attack != "learned" {
		return usageErrorf("unknown --attack %q (want bayes or learned)", c.attack)
	}
	mc, err := lookupMechanism(c.mech, risk.Auditable())
	if err != nil {
		return err
	}
	a := risk.Auditor{M: c.m, Trials: c.trials, TrainTrials: c.train, Bins: c.bins, Confidence: c.conf, Src: c.env.Source()}
	total := c.trials
	if c.attack == "learned" {
		tt := c.train
		if tt == 0 {
			tt = max(c.trials/c.m, 1000)
		}
		total += tt * c.m
	}
	bar := c.env.Progress(total, "auditing")
	a.Progress = func(n int) { _ = bar.Add(n) }
	rep, err := a.AuditClaim(mc, risk.Params{M: c.m, Epsilon: c.eps, Delta: c.delta}, c.attack)
	_ = bar.Finish()
	if err != nil {
		return err
	}
	return c.env.Emit(rep, rep.WriteText)
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
		return nil, fmt.Errorf("--mechanism %s: %w (or a negative control: %s)", name, err, trajdb.NegativeControlNames(", "))
	}
	return m, nil
}

// auditSupportCmd is "tracepriv audit support".
type auditSupportCmd struct {
	env           *cli.Env
	rf            cli.ReadFlags
	u             cli.UniverseFlags
	mec, in, seqs string
	eps, factor   float64
	opt           trajdb.AuditOptions
}

func newAuditSupportCmd(env *cli.Env) *cobra.Command {
	c := &auditSupportCmd{env: env}
	long, example := help("audit support")
	cmd := &cobra.Command{
		Use:     "support --mechanism prefix|ngram|" + trajdb.NegativeControlNames("|"),
		Short:   "Search neighbouring databases for evidence that a trajectory-database mechanism is not epsilon-DP",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.mec, "mechanism", "", "prefix, ngram, or a negative control: "+trajdb.NegativeControlNames(", "))
	fl.Float64Var(&c.eps, "epsilon", 1, "the epsilon the mechanism runs at and claims")
	fl.StringVar(&c.seqs, "seqs", "", "symbolic sequence database to audit (default: the demonstration database)")
	fl.StringVar(&c.in, "in", "", "trace directory to audit, mapped with --cell-m and --bbox")
	fl.IntVar(&c.opt.Draws, "draws", 0, "exploration releases of the database (default 1000)")
	fl.IntVar(&c.opt.NeighbourDraws, "neighbour-draws", 0, "exploration releases of each neighbour (default 100)")
	fl.IntVar(&c.opt.MaxRemovals, "max-removals", 0, "neighbours made by removing a person (default 32; -1 none)")
	fl.IntVar(&c.opt.MaxAdditions, "max-additions", 0, "neighbours made by adding a person (default 64; -1 none)")
	fl.IntVar(&c.opt.RandomCandidates, "random-candidates", 0, "random candidate sequences for additions (default 32; -1 none)")
	fl.IntVar(&c.opt.ConfirmNeighbours, "confirm-neighbours", 0, "neighbours whose best event is tested on fresh releases (default 2; -1 none: support only)")
	fl.IntVar(&c.opt.ConfirmDraws, "confirm-draws", 0, "fresh releases of the database and of each tested neighbour (default 8000)")
	fl.Float64Var(&c.opt.Confidence, "confidence", 0, "the statistical test flags an epsilon-DP mechanism with probability at most 1 - this (default 0.95)")
	fl.BoolVar(&c.opt.StopAtFirst, "stop-at-first", false, "stop at the first support violation")
	fl.Float64Var(&c.opt.MaxWork, "max-work", 0, "cap on releases times database size (symbols plus persons); a larger database gets a scaled-down search, or a refusal saying what fits (default 2e8; -1 no cap)")
	fl.IntVar(&c.opt.NoiseDraws, "noise-draws", 0, "noisy counts the white-box noise test checks against the tree's stated noise (default 2000; -1 none)")
	fl.Float64Var(&c.factor, "noise-factor", 1, "audit a deliberately weakened build of prefix or ngram with this factor times its noise (in (0, 1]; below 1 it is NOT PRIVATE and only the audit builds it)")
	c.u.Add(fl)
	c.rf.AddTo(fl)
	_ = cmd.MarkFlagRequired("mechanism")
	return cmd
}

func (c *auditSupportCmd) run(f *pflag.FlagSet) error {
	if !(c.eps > 0) || math.IsInf(c.eps, 0) {
		return usageErrorf("audit support: --epsilon must be positive and finite, got %v", c.eps)
	}
	db, b, err := c.database(f.Changed("max-len") || f.Changed("max-seqs"))
	if err != nil {
		return fmt.Errorf("audit support: %w", err)
	}
	m, err := auditSupportMechanism(trajdb.MechanismName(c.mec), b, c.factor)
	if err != nil {
		return fmt.Errorf("audit support: %w", err)
	}
	opt := c.opt
	opt.Epsilon, opt.Src = c.eps, c.env.Source()
	bar := c.env.Progress(-1, "audit: releases drawn")
	// A line on stderr every 100 releases as well, where the bar is silent
	// (no terminal, --json): a long audit of a large database shows it is
	// alive.
	drawn, start := 0, time.Now()
	opt.Progress = func(n int) {
		_ = bar.Add(n)
		if drawn += n; drawn%100 == 0 && !c.env.Quiet {
			fmt.Fprintf(c.env.Stderr, "audit support: %d releases drawn (%.0f s)\n", drawn, time.Since(start).Seconds())
		}
	}
	rep, err := trajdb.AuditSupport(m, db, opt)
	_ = bar.Finish()
	if err != nil {
		return fmt.Errorf("audit support: %w", err)
	}
	return c.env.Emit(rep, rep.WriteText)
}

// database returns the database audited and its bounds: --in on a grid,
// --seqs, or the demonstration database with its own bounds unless the
// flags give them.
func (c *auditSupportCmd) database(boundsGiven bool) (*trajdb.DB, trajdb.Bounds, error) {
	var db *trajdb.DB
	b := repro.AuditDemoBounds()
	switch {
	case c.in != "" && c.seqs != "":
		return nil, b, usageErrorf("give --in or --seqs, not both")
	case c.in != "":
		g, err := c.u.Grid()
		if err != nil {
			return nil, b, err
		}
		if db, _, err = cli.ReadTrajectories(c.env, &c.rf, &c.u, g, c.in); err != nil {
			return nil, b, fmt.Errorf("--in %w", err)
		}
		boundsGiven = true
	case c.seqs != "":
		var err error
		if db, err = trajdb.ReadSequencesFile(c.seqs, trajdb.SeqOptions{Size: c.u.Alphabet, Base: c.u.Base}); err != nil {
			return nil, b, fmt.Errorf("--seqs: %w", err)
		}
	default:
		db, _ = repro.AuditDemoDB()
	}
	if boundsGiven {
		var err error
		if b, err = c.u.Bounds(); err != nil {
			return nil, b, err
		}
	}
	return db, b, nil
}
