package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
)

type convertResult struct {
	In     string       `json:"in"`
	Out    string       `json:"out"`
	From   trace.Format `json:"from,omitempty"` // omitted for a directory of mixed formats
	To     trace.Format `json:"to"`
	Traces int          `json:"traces"` // traces written
	Points int          `json:"points"` // points written
	trace.InputSummary
	// Filters is what the optional plausibility filters did.
	Filters *trace.FilterReport `json:"filters,omitempty"`
	// Every is the thinning period (--every), empty without thinning;
	// PointsBeforeThinning the points it started from.
	Every                string        `json:"every,omitempty"`
	PointsBeforeThinning int           `json:"points_before_thinning,omitempty"`
	Report               *trace.Report `json:"report"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			in, out, to                       string
			rf                                readFlags
			lf                                limitFlags
			dropJumps, dropRepeats, splitGaps bool
			force                             bool
			every                             time.Duration
		)
		cmd := &cobra.Command{
			Use:   "convert --in FILE|DIR --out FILE",
			Short: "Convert traces between GeoLife PLT, CSV, GeoJSON and GPX",
			Long: `Convert traces between GeoLife PLT, CSV (uid,time,lat,lon), GeoJSON and GPX 1.1.
Formats come from the file extensions (.plt, .csv, .geojson or .json, .gpx)
unless --from/--to say otherwise. --in may be a directory: every trace file in
it (searched recursively) goes into the one output file, e.g. a GeoLife user's
PLT files into one CSV. A PLT file holds one trace, so converting several
traces to PLT fails.

The output is written atomically (the old file or the new one, never a
partial one). It must not be the input, and an existing file is replaced
only with --force.

Dirty input is repaired or skipped by the rules of docs/input.md (exact
repeats merged; repeated or backward times, bad coordinates, malformed and
cut-off rows skipped), and what was skipped is printed on stderr, counted by
reason with examples. --strict stops at the first such row instead.

Optional plausibility filters (off by default; thresholds as in inspect):
--drop-speed-jumps drops each fix reached faster than --max-speed from the
last fix kept, --drop-repeats drops fixes at exactly the previous fix's
position, --split-gaps cuts traces at intervals longer than --max-gap.

--every D thins each trace, after the filters, to one fix per period D
(trace.Thin): the first fix, then each fix at least D after the last one
kept; kept fixes are copied unchanged, nothing is interpolated. Which fixes
are kept depends on the timestamps alone (geoind sanitize --every does the
same before releasing).`,
			Example: `  tracepriv convert --in internal/sample/synth-1/commute.plt --out sample.geojson
  tracepriv convert --in demo-output/sample.csv --out sample.gpx --drop-speed-jumps --max-speed 150
  tracepriv convert --in demo-output --out all.csv --split-gaps --max-gap 5m --json
  tracepriv convert --in internal/sample/synth-1/commute.plt --out commute-1min.csv --every 60s`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if in == "" || out == "" {
					return usageErrorf("convert: --in and --out are required (e.g. --in trace.plt --out trace.csv)")
				}
				if every < 0 {
					return usageErrorf("convert: --every %v: want a positive Go duration such as 60s or 5m (0: keep every fix)", every)
				}
				lim, err := lf.limits()
				if err != nil {
					return fmt.Errorf("convert: %w", err)
				}
				var toF trace.Format
				if to != "" {
					if toF, err = trace.ParseFormat(to); err != nil {
						return fmt.Errorf("convert: --to: %w", err)
					}
				} else if toF, err = trace.FormatFromPath(out); err != nil {
					return fmt.Errorf("convert: --out: %w; or name the format with --to", err)
				}
				if err := checkOutputs([]string{in}, force, map[string]string{"--out": out}); err != nil {
					return fmt.Errorf("convert: %w", err)
				}
				var fromF trace.Format
				formats := map[trace.Format]bool{}
				var traces []*trace.Trace
				rep, err := rf.readEach([]string{in}, func(path string, ts []*trace.Trace) {
					if f, err := rf.options(path); err == nil {
						formats[f.Format] = true
						fromF = f.Format
					}
					traces = append(traces, ts...)
				})
				if err != nil {
					return fmt.Errorf("convert: %w", err)
				}
				reportSkipped(env, rep)
				if len(formats) > 1 {
					fromF = ""
				}
				res := convertResult{In: in, Out: out, From: fromF, To: toF, InputSummary: rep.Summary(), Report: rep}
				if dropJumps || dropRepeats || splitGaps {
					var fr trace.FilterReport
					traces, fr, err = trace.Filter(traces, trace.Filters{Limits: lim, DropSpeedJumps: dropJumps, DropRepeats: dropRepeats, SplitGaps: splitGaps})
					if err != nil {
						return fmt.Errorf("convert: %w", err)
					}
					res.Filters = &fr
				}
				if every > 0 {
					res.Every = every.String()
					for i, t := range traces {
						res.PointsBeforeThinning += t.Len()
						traces[i] = t.Thin(every)
					}
				}
				if toF == trace.PLT && len(traces) != 1 {
					return usageErrorf("convert: --out %s: a PLT file holds one trace and there are %d; write CSV, GeoJSON or GPX, or convert the files one by one", out, len(traces))
				}
				if err := checkFinite("--out", out, traces); err != nil {
					return fmt.Errorf("convert: %w", err)
				}
				if err := trace.WriteFile(out, traces, toF); err != nil {
					return fmt.Errorf("convert: %w", err)
				}
				res.Traces = len(traces)
				for _, t := range traces {
					res.Points += t.Len()
				}
				return env.Emit(res, func(w io.Writer) error {
					from := string(res.From)
					if from == "" {
						from = "mixed"
					}
					fmt.Fprintf(w, "%s (%s) -> %s (%s): %d traces, %d points", in, from, out, toF, res.Traces, res.Points)
					if n := rep.SkippedRows(); n > 0 {
						fmt.Fprintf(w, "; %d input rows skipped or merged", n)
					}
					fmt.Fprintln(w)
					if res.Every != "" {
						fmt.Fprintf(w, "thinned to one fix per %s: %d of %d points kept\n", res.Every, res.Points, res.PointsBeforeThinning)
					}
					if f := res.Filters; f != nil {
						fmt.Fprintf(w, "filters: %d speed jumps over %.0f km/h dropped, %d repeated positions dropped, %d splits at gaps over %v\n",
							f.SpeedJumpsDropped, 3.6*f.Limits.MaxSpeed, f.RepeatsDropped, f.GapSplits, f.Limits.MaxGap)
					}
					return nil
				})
			},
		}
		f := cmd.Flags()
		f.StringVarP(&in, "in", "i", "", "input trace file, or a directory of them")
		f.StringVarP(&out, "out", "o", "", "output file")
		f.BoolVar(&force, "force", false, "replace --out if it exists")
		f.StringVar(&to, "to", "", "output format: plt, csv, geojson or gpx (default: from the extension)")
		f.BoolVar(&dropJumps, "drop-speed-jumps", false, "drop fixes reached faster than --max-speed from the last kept fix")
		f.BoolVar(&dropRepeats, "drop-repeats", false, "drop fixes at exactly the previous fix's position")
		f.BoolVar(&splitGaps, "split-gaps", false, "split traces at intervals longer than --max-gap")
		f.DurationVar(&every, "every", 0, "thin each trace to one fix per period (e.g. 60s, 5m): the first fix, then each fix at least this long after the last one kept; 0 keeps every fix")
		lf.add(cmd)
		rf.add(cmd)
		rf.addCorpus(cmd.Flags(), "without it every trace written carries the one person's uid")
		return cmd
	})
}
