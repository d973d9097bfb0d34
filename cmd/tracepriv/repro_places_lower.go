package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(newReproPlacesLowerCmd) }

// reproPlacesLowerCmd is "tracepriv repro places-lower-bound": the least
// noise any Gaussian mechanism needs to certify a trace's stays against
// every family member (repro.RunPlacesLowerFile).
type reproPlacesLowerCmd struct {
	env            *cli.Env
	in, prior      string
	durations, set string
	stride, rounds int
	maxStarts      int
	target         float64
}

func newReproPlacesLowerCmd(env *cli.Env) *cobra.Command {
	c := &reproPlacesLowerCmd{env: env}
	long, example := help("repro places-lower-bound")
	cmd := &cobra.Command{
		Use:     "places-lower-bound --in FILE --prior FILE",
		Short:   "Lower bound on the noise certifying a trace's stays against every family member",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.in, "in", "", "trace file (one person)")
	f.StringVar(&c.prior, "prior", "", "prior file whose family the stays are certified against")
	f.StringVar(&c.durations, "durations", "30,50,90", "stay durations in minutes (comma-separated)")
	f.StringVar(&c.set, "set", "stays", "constraint set: stays (--durations against each kernel's shortest member), durations (+ a ladder of durations from 1 minute to the span), lengthscales (+ each kernel's range middle and longest end), all (+ every point and the route)")
	f.IntVar(&c.maxStarts, "max-starts", 0, "at most this many windows per ladder duration and of single points (starts thinned evenly; 0: no cap); --durations keep --stride")
	f.IntVar(&c.stride, "stride", 1, "start a stay at every stride-th point")
	f.IntVar(&c.rounds, "rounds", 4, "rounds of rebuilding the trial noise (more: a higher bound, slower)")
	f.Float64Var(&c.target, "target", 400, "the RMS target (m) the bound is compared with")
	return cmd
}

func (c *reproPlacesLowerCmd) run() error {
	if c.in == "" || c.prior == "" {
		return usageErrorf("repro places-lower-bound: --in FILE and --prior FILE are required")
	}
	mins, err := positiveList("--durations", c.durations)
	if err != nil {
		return err
	}
	if c.stride < 1 || c.rounds < 1 || c.maxStarts < 0 {
		return usageErrorf("repro places-lower-bound: --stride and --rounds must be at least 1, --max-starts at least 0")
	}
	ds := make([]float64, len(mins))
	for i, m := range mins {
		ds[i] = 60 * m
	}
	opt, err := repro.PlacesLowerSet(repro.PlacesLowerOptions{Durations: ds, Stride: c.stride, Rounds: c.rounds, MaxStarts: c.maxStarts, TargetRMSM: c.target}, c.set)
	if err != nil {
		return usageErrorf("repro places-lower-bound: --set: %v", err)
	}
	res, err := repro.RunPlacesLowerFile(c.in, c.prior, opt)
	if err != nil {
		return fmt.Errorf("repro places-lower-bound: %w", err)
	}
	return c.env.Emit(res, res.WriteText)
}
