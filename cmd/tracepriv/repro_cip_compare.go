package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(newReproCIPCompareCmd) }

// reproCIPCompareCmd is "tracepriv repro cip-compare": CIP mechanisms
// compared at equal MSE (repro.RunCIPCompare).
type reproCIPCompareCmd struct {
	env   *cli.Env
	opt   repro.CIPCompareOptions
	leffs string
}

func newReproCIPCompareCmd(env *cli.Env) *cobra.Command {
	c := &reproCIPCompareCmd{env: env}
	long, example := help("repro cip-compare")
	cmd := &cobra.Command{
		Use:     "cip-compare [--data DIR] [--out DIR]",
		Short:   "Compare CIP mechanisms at equal MSE: paper SDPs, optimal, independent Gaussian, planar Laplace",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.opt.Data, "data", "", "GeoLife root directory (users as subdirectories); empty: the bundled synthetic sample trace")
	f.StringVar(&c.opt.User, "user", "000", "GeoLife user whose windows are sanitised (keep it out of the prior's corpus)")
	f.StringVar(&c.opt.PriorFile, "prior", "", "prior for the real traces (default: the bundled prior fitted on users 001-007)")
	f.IntVar(&c.opt.Windows, "windows", 6, "number of GeoLife windows, evenly spread over the user's windows")
	f.StringVar(&c.leffs, "leff", "1,2.5,6.1,10", "l_eff values of the paper settings")
	f.Float64Var(&c.opt.Epsilon, "epsilon", 1, "target epsilon of the optimal design on the real traces")
	f.Float64Var(&c.opt.Lambda, "lambda", 2, "Rényi order on the real traces")
	f.Float64Var(&c.opt.Radius, "radius", 100, "radius r in metres on the real traces")
	f.StringVar(&c.opt.Out, "out", "repro-output/cip-compare", "directory for compare.json and the plots (empty: write nothing)")
	return cmd
}

func (c *reproCIPCompareCmd) run() error {
	var err error
	if c.opt.LEffs, err = positiveList("repro cip-compare: --leff", c.leffs); err != nil {
		return err
	}
	c.opt.Src = c.env.Source()
	if c.env.SeedSet {
		// One seeded stream per setting: the settings run in parallel.
		c.opt.Stream = func(i int) noise.Source { return noise.Seeded(c.env.Seed + uint64(i) + 1) }
	}
	bar := c.env.Progress(-1, "cip-compare")
	c.opt.Progress = func(done, total int) { bar.ChangeMax(total); _ = bar.Set(done) }
	out, err := repro.RunCIPCompare(c.opt)
	_ = bar.Finish()
	if err != nil {
		return fmt.Errorf("repro cip-compare: %w", err)
	}
	return c.env.Emit(out, out.WriteText)
}
