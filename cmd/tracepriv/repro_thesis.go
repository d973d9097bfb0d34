package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
	"github.com/tracepriv/tracepriv/trajdb"
)

func init() { registerRepro(newReproThesisCmd) }

// reproThesisCmd is "tracepriv repro thesis": Chapters 5 and 6 of
// Guerra-Balboa's thesis (repro.Thesis), Chapter 3 (repro.Chapter3) or
// Example 3.7 (repro.ReproduceExample37).
type reproThesisCmd struct {
	env                   *cli.Env
	out, chapter, example string
	reps, draws, victims  int
	auditDraws            int
	quickAudits           bool
}

func newReproThesisCmd(env *cli.Env) *cobra.Command {
	c := &reproThesisCmd{env: env}
	long, example := help("repro thesis")
	cmd := &cobra.Command{
		Use:     "thesis [--chapter 3|5,6 | --example 3.7] [--out DIR] [--reps N]",
		Short:   "Reproduce the findings of Chapters 3, 5 and 6 of Guerra-Balboa's thesis",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.out, "out", "o", "repro-thesis", "directory for results.json and the plots")
	f.StringVar(&c.chapter, "chapter", "5,6", "3 (trajectory databases) or 5,6 (risk and Bayesian DP)")
	f.StringVar(&c.example, "example", "", "3.7: the centroid-inversion attack of Example 3.7 instead of a chapter")
	f.IntVar(&c.draws, "draws", 1000, "chapter 3: releases with and without the victim for Prop. 3.5; example 3.7: releases per mechanism (default 2000)")
	f.IntVar(&c.victims, "victims", 50, "chapter 3: people attacked in the home/work quasi-identifier attack")
	f.BoolVar(&c.quickAudits, "quick-audits", false, "chapter 3: support audits at about a third of their budget (repro.Chapter3QuickAudit): still separates the mechanisms, for a quick check; the published figures use the default")
	f.IntVar(&c.auditDraws, "audit-draws", 0, "chapter 3: support audits of this many exploration releases, their other budgets scaled alike (repro.Chapter3SmallAudit): a quick check that the reproduction runs, which below 300 need not separate the mechanisms; not with --quick-audits")
	f.IntVar(&c.reps, "reps", 1000, "repetitions per point of the utility experiment (the thesis uses 1000)")
	return cmd
}

func (c *reproThesisCmd) run(cmd *cobra.Command) error {
	if c.reps < 1 {
		return usageErrorf("--reps must be positive, got %d", c.reps)
	}
	if cmd.Flags().Changed("example") {
		if cmd.Flags().Changed("chapter") {
			return usageErrorf("give --chapter or --example, not both")
		}
		return c.example37(cmd.Flags().Changed("draws"))
	}
	switch c.chapter {
	case "3":
		return c.chapter3()
	case "5,6", "5", "6":
		return c.chapters56()
	}
	return usageErrorf("--chapter %q: want 3, or 5,6 (Chapters 5 and 6 are reproduced together)", c.chapter)
}

// example37 runs Example 3.7; --draws is its own only when given (its
// default is chapter 3's).
func (c *reproThesisCmd) example37(draws bool) error {
	if c.example != "3.7" {
		return usageErrorf("--example %q: only 3.7 is reproduced", c.example)
	}
	opt := repro.Example37Options{Src: c.env.Source()}
	if draws {
		if c.draws < 1 {
			return usageErrorf("--draws must be positive, got %d", c.draws)
		}
		opt.Draws = c.draws
	}
	res, err := repro.ReproduceExample37(opt)
	if err != nil {
		return fmt.Errorf("repro thesis --example 3.7: %w", err)
	}
	if err := repro.WriteExample37(c.out, res); err != nil {
		return fmt.Errorf("repro thesis --example 3.7: --out: %w", err)
	}
	return c.env.Emit(res, res.WriteText)
}

func (c *reproThesisCmd) chapter3() error {
	if c.draws < 1 || c.victims < 1 {
		return usageErrorf("--draws and --victims must be positive, got %d and %d", c.draws, c.victims)
	}
	bar := c.env.Progress(-1, "chapter 3: releases drawn")
	opt := repro.Chapter3Options{
		Draws: c.draws, Attack: trajdb.QIAttackOptions{Victims: c.victims}, Src: c.env.Source(),
		Progress: func(n int) { _ = bar.Add(n) },
	}
	switch {
	case c.quickAudits && c.auditDraws != 0:
		return usageErrorf("give --quick-audits or --audit-draws, not both")
	case c.quickAudits:
		opt.Audit = repro.Chapter3QuickAudit()
	case c.auditDraws != 0:
		a, err := repro.Chapter3SmallAudit(c.auditDraws)
		if err != nil {
			return usageErrorf("--audit-draws: %v", err)
		}
		opt.Audit = a
	}
	o, err := repro.Chapter3(c.out, opt)
	_ = bar.Finish()
	if err != nil {
		return fmt.Errorf("repro thesis --chapter 3: %w", err)
	}
	return c.env.Emit(o, o.WriteText)
}

func (c *reproThesisCmd) chapters56() error {
	bar := c.env.Progress(2, "utility experiments")
	res, err := repro.Thesis(repro.ThesisOptions{Reps: c.reps, Src: c.env.Source(), Progress: func(done, _ int) { _ = bar.Set(done) }})
	_ = bar.Finish()
	if err != nil {
		return err
	}
	if err := repro.WriteThesis(c.out, res); err != nil {
		return err
	}
	return c.env.Emit(res, res.WriteText)
}
