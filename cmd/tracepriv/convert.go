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

func init() { register(newConvertCmd) }

// convertCmd is "tracepriv convert".
type convertCmd struct {
	env                               *cli.Env
	in, out, to                       string
	rf                                cli.ReadFlags
	lf                                cli.LimitFlags
	dropJumps, dropRepeats, splitGaps bool
	force                             bool
	every                             time.Duration
}

func newConvertCmd(env *cli.Env) *cobra.Command {
	c := &convertCmd{env: env}
	long, example := help("convert")
	cmd := &cobra.Command{
		Use:     "convert --in FILE|DIR --out FILE",
		Short:   "Convert traces between GeoLife PLT, CSV, GeoJSON and GPX",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVarP(&c.in, "in", "i", "", "input trace file, or a directory of them")
	f.StringVarP(&c.out, "out", "o", "", "output file")
	f.BoolVar(&c.force, "force", false, "replace --out if it exists")
	f.StringVar(&c.to, "to", "", "output format: plt, csv, geojson or gpx (default: from the extension)")
	f.BoolVar(&c.dropJumps, "drop-speed-jumps", false, "drop fixes reached faster than --max-speed from the last kept fix")
	f.BoolVar(&c.dropRepeats, "drop-repeats", false, "drop fixes at exactly the previous fix's position")
	f.BoolVar(&c.splitGaps, "split-gaps", false, "split traces at intervals longer than --max-gap")
	f.DurationVar(&c.every, "every", 0, "thin each trace to one fix per period (e.g. 60s, 5m): the first fix, then each fix at least this long after the last one kept; 0 keeps every fix")
	c.lf.Add(cmd)
	c.rf.Add(cmd)
	c.rf.AddCorpus(cmd.Flags(), "without it every trace written carries the one person's uid")
	return cmd
}

func (c *convertCmd) run() error {
	if c.in == "" || c.out == "" {
		return usageErrorf("convert: --in and --out are required (e.g. --in trace.plt --out trace.csv)")
	}
	if c.every < 0 {
		return usageErrorf("convert: --every %v: want a positive Go duration such as 60s or 5m (0: keep every fix)", c.every)
	}
	lim, err := c.lf.Limits()
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	var toF trace.Format
	if c.to != "" {
		if toF, err = trace.ParseFormat(c.to); err != nil {
			return fmt.Errorf("convert: --to: %w", err)
		}
	} else if toF, err = trace.FormatFromPath(c.out); err != nil {
		return fmt.Errorf("convert: --out: %w; or name the format with --to", err)
	}
	if err := checkOutputs([]string{c.in}, c.force, map[string]string{"--out": c.out}); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	traces, res, err := c.read()
	if err != nil {
		return err
	}
	res.To = toF
	if c.dropJumps || c.dropRepeats || c.splitGaps {
		var fr trace.FilterReport
		traces, fr, err = trace.Filter(traces, trace.Filters{Limits: lim, DropSpeedJumps: c.dropJumps, DropRepeats: c.dropRepeats, SplitGaps: c.splitGaps})
		if err != nil {
			return fmt.Errorf("convert: %w", err)
		}
		res.Filters = &fr
	}
	if c.every > 0 {
		res.Every = c.every.String()
		res.PointsBeforeThinning = trace.Points(traces)
		traces = trace.ThinEach(traces, c.every)
	}
	if toF == trace.PLT && len(traces) != 1 {
		return usageErrorf("convert: --out %s: a PLT file holds one trace and there are %d; write CSV, GeoJSON or GPX, or convert the files one by one", c.out, len(traces))
	}
	if err := checkFinite("--out", c.out, traces); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	if err := trace.WriteFile(c.out, traces, toF); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	res.Traces, res.Points = len(traces), trace.Points(traces)
	return c.env.Emit(res, res.WriteText)
}

// read reads --in, noting the input format (empty for mixed formats).
func (c *convertCmd) read() ([]*trace.Trace, *convertResult, error) {
	var fromF trace.Format
	formats := map[trace.Format]bool{}
	var traces []*trace.Trace
	rep, err := c.rf.ReadEach([]string{c.in}, func(path string, ts []*trace.Trace) {
		if f, err := c.rf.Options(path); err == nil {
			formats[f.Format] = true
			fromF = f.Format
		}
		traces = append(traces, ts...)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("convert: %w", err)
	}
	c.env.ReportSkipped(rep)
	if len(formats) > 1 {
		fromF = ""
	}
	return traces, &convertResult{In: c.in, Out: c.out, From: fromF, InputSummary: rep.Summary(), Report: rep}, nil
}

// WriteText writes what convert did, for people.
func (res *convertResult) WriteText(w io.Writer) error {
	from := string(res.From)
	if from == "" {
		from = "mixed"
	}
	fmt.Fprintf(w, "%s (%s) -> %s (%s): %d traces, %d points", res.In, from, res.Out, res.To, res.Traces, res.Points)
	if n := res.Report.SkippedRows(); n > 0 {
		fmt.Fprintf(w, "; %d input rows skipped or merged", n)
	}
	fmt.Fprintln(w)
	if res.Every != "" {
		fmt.Fprintf(w, "thinned to one fix per %s: %d of %d points kept\n", res.Every, res.Points, res.PointsBeforeThinning)
	}
	if f := res.Filters; f != nil {
		_, err := fmt.Fprintf(w, "filters: %d speed jumps over %.0f km/h dropped, %d repeated positions dropped, %d splits at gaps over %v\n",
			f.SpeedJumpsDropped, 3.6*f.Limits.MaxSpeed, f.RepeatsDropped, f.GapSplits, f.Limits.MaxGap)
		return err
	}
	return nil
}
