package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
)

type inspectTrace struct {
	trace.Summary
	// Valid says whether the trace is well formed (Validate: finite
	// in-range coordinates, strictly increasing times); Problem says why
	// not. A trace read by tracepriv always is.
	Valid   bool   `json:"valid"`
	Problem string `json:"problem,omitempty"`
	// Plausible says whether it looks like what a GPS receiver records: no
	// step faster than the speed threshold. Plausibility has the counts
	// and the thresholds.
	Plausible    bool               `json:"plausible"`
	Plausibility trace.Plausibility `json:"plausibility"`
}

type inspectResult struct {
	File   string         `json:"file,omitempty"` // the file, when there is one
	Files  []string       `json:"files"`
	Format trace.Format   `json:"format,omitempty"` // omitted for mixed formats
	Limits trace.Limits   `json:"limits"`
	Traces []inspectTrace `json:"traces"`
	trace.InputSummary
	Report *trace.Report `json:"report"`
}

func init() { register(newInspectCmd) }

// inspectCmd is "tracepriv inspect".
type inspectCmd struct {
	env *cli.Env
	rf  cli.ReadFlags
	lf  cli.LimitFlags
}

func newInspectCmd(env *cli.Env) *cobra.Command {
	c := &inspectCmd{env: env}
	long, example := help("inspect")
	cmd := &cobra.Command{
		Use:     "inspect FILE|DIR...",
		Short:   "Summarise traces: points, duration, sampling, speeds, well-formedness, plausibility",
		Long:    long,
		Example: example,
		Args:    cobra.MinimumNArgs(1),
		RunE:    func(_ *cobra.Command, args []string) error { return c.run(args) },
	}
	c.lf.Add(cmd)
	c.rf.Add(cmd)
	c.rf.AddCorpus(cmd.Flags(), "the uid column shows each trace's person")
	return cmd
}

func (c *inspectCmd) run(args []string) error {
	lim, err := c.lf.Limits()
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	formats := map[trace.Format]bool{}
	var files []string
	var traces []*trace.Trace
	rep, err := c.rf.ReadEach(args, func(path string, ts []*trace.Trace) {
		if o, err := c.rf.Options(path); err == nil {
			formats[o.Format] = true
		}
		files = append(files, path)
		traces = append(traces, ts...)
	})
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	c.env.ReportSkipped(rep)
	res := &inspectResult{Files: files, Limits: lim, Traces: make([]inspectTrace, len(traces)), InputSummary: rep.Summary(), Report: rep}
	if len(files) == 1 {
		res.File = files[0]
	}
	if len(formats) == 1 {
		for f := range formats {
			res.Format = f
		}
	}
	for i, t := range traces {
		pl := trace.Check(t, lim)
		res.Traces[i] = inspectTrace{Summary: trace.Summarize(t), Valid: true, Plausible: pl.OK(), Plausibility: pl}
		if err := t.Validate(); err != nil {
			res.Traces[i].Valid, res.Traces[i].Problem = false, err.Error()
		}
	}
	return c.env.Emit(res, res.WriteText)
}

// WriteText writes the table of traces and what is wrong with them, for
// people.
func (res *inspectResult) WriteText(w io.Writer) error {
	what := strings.Join(res.Files, ", ")
	if len(res.Files) > 3 {
		what = fmt.Sprintf("%d files", len(res.Files))
	}
	format := string(res.Format)
	if format == "" {
		format = "mixed formats"
	}
	fmt.Fprintf(w, "%s (%s): %d traces, %d points", what, format, len(res.Traces), res.Report.Read)
	if n := res.Report.SkippedRows(); n > 0 {
		fmt.Fprintf(w, "; %d input rows skipped or merged (see stderr)", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "plausibility thresholds: speed jump > %.0f km/h (--max-speed), gap > %v (--max-gap)\n", 3.6*res.Limits.MaxSpeed, res.Limits.MaxGap)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "uid\tname\tpoints\tstart\tduration\tlength km\tinterval s median/mean/max\tspeed km/h median/p95/max\tjumps\tgaps\trepeats\twell-formed\tplausible\t")
	for _, t := range res.Traces {
		start := "-"
		if t.Points > 0 {
			start = t.Start.Format(time.RFC3339)
		}
		iv, sp, pl := t.Interval, t.Speed, t.Plausibility
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%.3f\t%.1f / %.1f / %.0f\t%.1f / %.1f / %.1f\t%d\t%d\t%d\t%s\t%s\t\n",
			t.UID, t.Name, t.Points, start, t.Duration, t.PathLength/1000,
			iv.Median, iv.Mean, iv.Max, 3.6*sp.Median, 3.6*sp.P95, 3.6*sp.Max,
			pl.SpeedJumps, pl.Gaps, pl.RepeatedPositions, yesNo(t.Valid), yesNo(t.Plausible))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range res.Traces {
		if !t.Valid {
			fmt.Fprintf(w, "trace %s is not well formed: %s\n", traceLabel(t.Summary), t.Problem)
		}
		if !t.Plausible {
			fmt.Fprintf(w, "trace %s is implausible: %s\n", traceLabel(t.Summary), t.Plausibility)
			for _, j := range t.Plausibility.Jumps {
				fmt.Fprintf(w, "  point %d at %s: %.0f m in %.0f s (%.0f km/h)\n", j.Index, j.Time.Format(time.RFC3339), j.Distance, j.Seconds, 3.6*j.Speed)
			}
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// traceLabel names a trace in messages: uid and name.
func traceLabel(s trace.Summary) string {
	switch {
	case s.UID != "" && s.Name != "":
		return fmt.Sprintf("%s/%s", s.UID, s.Name)
	case s.Name != "":
		return s.Name
	}
	return fmt.Sprintf("%q", s.UID)
}
