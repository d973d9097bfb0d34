package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/repro"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
)

// reproSubcommands are the experiments under "tracepriv repro"; files add
// to it with registerRepro so that one parent command holds them all.
var reproSubcommands []func(env *cli.Env) *cobra.Command

func registerRepro(f func(env *cli.Env) *cobra.Command) {
	reproSubcommands = append(reproSubcommands, f)
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "repro",
			Short: "Reproduce the experiments of the papers tracepriv implements",
			Example: `  tracepriv repro predictive --data internal/sample --samplings 2 --seed 1 --out predictive-output
  tracepriv repro cip --figure 2a --out repro-output/cip
  tracepriv repro thesis --out thesis-output`,
		}
		for _, f := range reproSubcommands {
			cmd.AddCommand(f(env))
		}
		return cmd
	})
	registerRepro(reproPredictiveCmd)
}

func reproPredictiveCmd(env *cli.Env) *cobra.Command {
	var (
		data, outDir, origin string
		samplings            int
		maxSpeedKmh, grid    float64
		rf                   readFlags
	)
	def := repro.DefaultPredictiveCaseStudy()
	cmd := &cobra.Command{
		Use:   "predictive --data DIR [--out DIR]",
		Short: "Case study of the predictive mechanism on GeoLife (Chatzikokolakis et al., §V)",
		Long: `Sample location queries from the slow (< 15 km/h) parts of GeoLife PLT traces
(every minute, or after a one-hour jump with probability p = 0, 0.1, ..., 1;
10 samplings per trace) and run the independent mechanism IM and the
predictive mechanism PM, with and without the elapsed-time skip, under the
fixed-rate (3.3 % of ε per query) and fixed-utility (α(0.9) = 3 km)
managers, with ε = ln 10 / 100 m. Prints JSON with --json; --out DIR also
writes results.json and the plots of the paper's Figs 8-9 (SVG and PNG).

Noise is added on the tangent plane at --origin, a public point chosen
without looking at the traces (default: central Beijing, Tiananmen Square,
39.9042,116.4074, for the GeoLife corpus), and released on a --grid of 1 m
(the paper's outputs are continuous, which tracepriv does not release).

--data is a directory of GeoLife PLT files (its Data/ folder, or some users
of it), searched recursively; other trace formats are read too. Dirty rows
are repaired or skipped as docs/input.md says and unreadable files skipped,
both reported on stderr and in --json (skipped_rows); --strict stops at the
first instead.`,
		Example: `  tracepriv repro predictive --data internal/sample --samplings 2 --seed 1 --out predictive-output
  tracepriv repro predictive --data demo-output --samplings 1 --origin 39.9042,116.4074 --json
  # the paper's case study: tracepriv repro predictive --data GEOLIFE/Data --seed 1 --out predictive-output`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" {
				return usageErrorf("repro predictive: --data DIR is required")
			}
			if st, err := os.Stat(data); err == nil && !st.IsDir() {
				return usageErrorf("repro predictive: --data %s is a file; give the directory that holds the traces", data)
			}
			traces, rep, err := rf.read(data)
			if err != nil {
				return fmt.Errorf("repro predictive: --data: %w", err)
			}
			reportSkipped(env, rep)
			o, err := geo.ParseLatLon(origin)
			if err != nil {
				return fmt.Errorf("repro predictive: --origin: %w", err)
			}
			cs := repro.DefaultPredictiveCaseStudy()
			cs.Samplings = samplings
			cs.MaxSpeed = maxSpeedKmh / 3.6
			cs.Origin = o
			cs.Grid = grid
			src := env.Source()
			bar := env.Progress(len(traces)*len(cs.JumpProbs), "predictive case study")
			res, err := cs.Run(traces, src, func() { bar.Add(1) })
			bar.Finish()
			var pe *param.Error
			if errors.As(err, &pe) && pe.Name == "grid" {
				return fmt.Errorf("repro predictive: --grid %g: %w", grid, err)
			}
			if err != nil {
				return fmt.Errorf("repro predictive: %w", err)
			}
			out := repro.Predictive{PredictiveCaseStudyResult: res, Randomness: noise.Describe(src), Files: rep.Files, InputSummary: rep.Summary()}
			if outDir != "" {
				if _, err := repro.WritePredictive(outDir, out); err != nil {
					return err
				}
			}
			return env.Emit(out, func(w io.Writer) error { return predictiveText(w, res) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "directory of GeoLife PLT files (searched recursively)")
	rf.add(cmd)
	f.StringVar(&outDir, "out", "", "directory for results.json and the SVG plots")
	f.IntVar(&samplings, "samplings", 10, "samplings per trace and jump probability")
	f.Float64Var(&maxSpeedKmh, "max-speed", 15, "speed (km/h) of the elapsed-time skip strategy")
	f.StringVar(&origin, "origin", fmt.Sprintf("%g,%g", def.Origin.Lat, def.Origin.Lon), "public origin LAT,LON of the tangent plane (central Beijing, for GeoLife)")
	f.Float64Var(&grid, "grid", def.Grid, "output grid step in metres (> 0)")
	return cmd
}

func predictiveText(w io.Writer, res *repro.PredictiveCaseStudyResult) error {
	for _, sec := range []struct {
		name string
		rows []repro.PredictiveRow
	}{{"fixed rate (3.3 % of ε per query)", res.FixedRate}, {"fixed utility (α(0.9) = 3 km)", res.FixedUtility}} {
		fmt.Fprintf(w, "%s: %d traces\n", sec.name, res.Traces)
		fmt.Fprintf(w, "%4s  %-22s %-22s %-22s %s\n", "p", "IM err/α90/pts", "PM err/α90/pts", "PM+skip err/α90/pts", "PM PR/test share")
		for _, r := range sec.rows {
			cell := func(m repro.PredictiveMetrics) string {
				return fmt.Sprintf("%5.0f/%5.0f/%5.1f", m.MeanError, m.Alpha90, m.PointsCovered)
			}
			fmt.Fprintf(w, "%4.1f  %-22s %-22s %-22s %.2f/%.2f\n", r.P, cell(r.IM), cell(r.PM), cell(r.PMSkip), r.PM.PredictionRate, r.PM.TestShare)
		}
	}
	return nil
}
