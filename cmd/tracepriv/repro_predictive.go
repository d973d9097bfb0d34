package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(newReproPredictiveCmd) }

// reproPredictiveCmd is "tracepriv repro predictive": the case study of
// the predictive mechanism (repro.RunPredictive).
type reproPredictiveCmd struct {
	env               *cli.Env
	data, out, origin string
	samplings         int
	maxSpeedKmh, grid float64
	rf                cli.ReadFlags
}

func newReproPredictiveCmd(env *cli.Env) *cobra.Command {
	c := &reproPredictiveCmd{env: env}
	def := repro.DefaultPredictiveCaseStudy()
	long, example := help("repro predictive")
	cmd := &cobra.Command{
		Use:     "predictive --data DIR [--out DIR]",
		Short:   "Case study of the predictive mechanism on GeoLife (Chatzikokolakis et al., §V)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.data, "data", "", "directory of GeoLife PLT files (searched recursively)")
	c.rf.Add(cmd)
	f.StringVar(&c.out, "out", "", "directory for results.json and the SVG plots")
	f.IntVar(&c.samplings, "samplings", 10, "samplings per trace and jump probability")
	f.Float64Var(&c.maxSpeedKmh, "max-speed", 15, "speed (km/h) of the elapsed-time skip strategy")
	f.StringVar(&c.origin, "origin", fmt.Sprintf("%g,%g", def.Origin.Lat, def.Origin.Lon), "public origin LAT,LON of the tangent plane (central Beijing, for GeoLife)")
	f.Float64Var(&c.grid, "grid", def.Grid, "output grid step in metres (> 0)")
	return cmd
}

func (c *reproPredictiveCmd) run() error {
	if c.data == "" {
		return usageErrorf("repro predictive: --data DIR is required")
	}
	if st, err := os.Stat(c.data); err == nil && !st.IsDir() {
		return usageErrorf("repro predictive: --data %s is a file; give the directory that holds the traces", c.data)
	}
	traces, rep, err := c.rf.Read(c.data)
	if err != nil {
		return fmt.Errorf("repro predictive: --data: %w", err)
	}
	c.env.ReportSkipped(rep)
	o, err := geo.ParseLatLon(c.origin)
	if err != nil {
		return usageErrorf("repro predictive: --origin: %w", err)
	}
	cs := repro.DefaultPredictiveCaseStudy()
	cs.Samplings = c.samplings
	cs.MaxSpeed = c.maxSpeedKmh / 3.6
	cs.Origin = o
	cs.Grid = c.grid
	bar := c.env.Progress(len(traces)*len(cs.JumpProbs), "predictive case study")
	res, err := repro.RunPredictive(cs, traces, rep, c.env.Source(), c.out, func() { _ = bar.Add(1) })
	_ = bar.Finish()
	var pe *param.Error
	if errors.As(err, &pe) && pe.Name == "grid" {
		return fmt.Errorf("repro predictive: --grid %g: %w", c.grid, err)
	}
	if err != nil {
		return fmt.Errorf("repro predictive: %w", err)
	}
	return c.env.Emit(res, res.WriteText)
}
