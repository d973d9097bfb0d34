package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(newReproTrajDBCmd) }

// reproTrajDBCmd is "tracepriv repro trajdb": the utility of the prefix
// and n-gram releases against uniform and non-private ones
// (repro.RunTrajDB).
type reproTrajDBCmd struct {
	env      *cli.Env
	rf       cli.ReadFlags
	u        cli.UniverseFlags
	in       string
	epsilons string
	opt      repro.TrajDBRunOptions
}

func newReproTrajDBCmd(env *cli.Env) *cobra.Command {
	c := &reproTrajDBCmd{env: env}
	long, example := help("repro trajdb")
	cmd := &cobra.Command{
		Use:     "trajdb --in DIR --cell-m METRES --bbox MINLAT,MINLON,MAXLAT,MAXLON [--out DIR]",
		Short:   "Utility of the prefix and n-gram releases against uniform and non-private ones",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.in, "in", "", "directory of traces")
	fl.StringVarP(&c.opt.Out, "out", "o", "repro-trajdb", "directory for results-trajdb.json and the figure")
	fl.StringVar(&c.epsilons, "epsilons", "0.5,1,2", "comma-separated privacy parameters")
	fl.IntVar(&c.opt.Utility.Reps, "reps", 20, "releases per mechanism and epsilon")
	fl.IntVar(&c.opt.Population, "population", 0, "measure a synthetic population of N people drawn from the input's Markov chain instead of the input (evaluation only)")
	fl.IntVar(&c.opt.PopulationSeqs, "population-seqs", 5, "trajectories per person of the synthetic population")
	fl.BoolVar(&c.opt.Utility.Bounded, "bounded", false, "compare with the bounded trajectories (the mechanisms' input) instead of all")
	fl.Uint64Var(&c.opt.Utility.Metrics.QuerySeed, "query-seed", 0, "seed of the query generator")
	c.u.Add(fl)
	c.rf.AddTo(fl)
	for _, f := range []string{"in", "cell-m", "bbox"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

func (c *reproTrajDBCmd) run() error {
	g, err := c.u.Grid()
	if err != nil {
		return fmt.Errorf("repro trajdb: %w", err)
	}
	if c.opt.Utility.Bounds, err = c.u.Bounds(); err != nil {
		return fmt.Errorf("repro trajdb: %w", err)
	}
	if c.opt.Utility.Epsilons, err = positiveList("repro trajdb: --epsilons", c.epsilons); err != nil {
		return err
	}
	if c.opt.Utility.Reps < 1 {
		return usageErrorf("repro trajdb: --reps must be positive, got %d", c.opt.Utility.Reps)
	}
	// Fail on an unwritable --out before the long run, not after it.
	if err := os.MkdirAll(c.opt.Out, 0o755); err != nil {
		return fmt.Errorf("repro trajdb: --out: %w", err)
	}
	db, rep, err := cli.ReadTrajectories(c.env, &c.rf, &c.u, g, c.in)
	if err != nil {
		return fmt.Errorf("repro trajdb: --in %w", err)
	}
	c.opt.Utility.Src = c.env.Source()
	tick := c.env.Ticker(len(c.opt.Utility.Epsilons)*2*c.opt.Utility.Reps, "repro trajdb")
	c.opt.Utility.Progress = func(done, total int) { tick.Set(done, "releases measured") }
	o, err := repro.RunTrajDB(db, g, rep, c.opt)
	if err != nil {
		return fmt.Errorf("repro trajdb: %w", err)
	}
	return c.env.Emit(o, o.WriteText)
}
