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
	windows        string
	cutWindows     int
	stopBelow      float64
	extraScales    string
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
	f.StringVar(&c.windows, "windows", "set", "set: the --set's windows; every: add cutting planes from every contiguous window against every member each round (and an upper end certifying every window)")
	f.IntVar(&c.cutWindows, "cut-windows", 200, "with --windows every, each member's worst windows added a round (and those above the target, up to twice this)")
	f.Float64Var(&c.stopBelow, "stop-below", 0, "stop the rounds once one raises the bound by less than this (m; 0: run every round)")
	f.StringVar(&c.extraScales, "extra-lengthscales", "", "add members at these lengthscales (seconds, comma-separated) for each Matérn kernel whose range holds them")
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
	if c.stride < 1 || c.rounds < 1 || c.maxStarts < 0 || c.cutWindows < 1 || c.stopBelow < 0 {
		return usageErrorf("repro places-lower-bound: --stride, --rounds and --cut-windows must be at least 1, --max-starts and --stop-below at least 0")
	}
	if c.windows != "set" && c.windows != "every" {
		return usageErrorf("repro places-lower-bound: --windows %q: want set or every", c.windows)
	}
	var extra []float64
	if c.extraScales != "" {
		if extra, err = positiveList("--extra-lengthscales", c.extraScales); err != nil {
			return err
		}
	}
	ds := make([]float64, len(mins))
	for i, m := range mins {
		ds[i] = 60 * m
	}
	opt, err := repro.PlacesLowerSet(repro.PlacesLowerOptions{Durations: ds, Stride: c.stride, Rounds: c.rounds, MaxStarts: c.maxStarts, TargetRMSM: c.target,
		EveryWindow: c.windows == "every", CutWindows: c.cutWindows, StopBelowM: c.stopBelow, ExtraLengthscales: extra}, c.set)
	if err != nil {
		return usageErrorf("repro places-lower-bound: --set: %v", err)
	}
	res, err := repro.RunPlacesLowerFile(c.in, c.prior, opt)
	if err != nil {
		return fmt.Errorf("repro places-lower-bound: %w", err)
	}
	return c.env.Emit(res, res.WriteText)
}
