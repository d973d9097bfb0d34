package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
)

type inspectTrace struct {
	trace.Summary
	// Valid is false when Validate fails; Problem says why.
	Valid   bool   `json:"valid"`
	Problem string `json:"problem,omitempty"`
}

type inspectResult struct {
	File   string         `json:"file"`
	Format trace.Format   `json:"format"`
	Traces []inspectTrace `json:"traces"`
	Report *trace.Report  `json:"report"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var rf readFlags
		cmd := &cobra.Command{
			Use:   "inspect FILE",
			Short: "Summarise the traces in a file: points, duration, sampling, speeds",
			Long: `Read a trace file (GeoLife PLT, CSV, GeoJSON or GPX) and print, per trace, the
number of points, the time span, the path length, sampling-interval and speed
statistics (median, mean, 95th percentile, maximum), and whether the trace is
valid (finite in-range coordinates, strictly increasing times).`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				path := args[0]
				opt, err := rf.options(path)
				if err != nil {
					return err
				}
				traces, rep, err := trace.ReadFile(path, opt)
				if err != nil {
					return err
				}
				res := inspectResult{File: path, Format: opt.Format, Traces: make([]inspectTrace, len(traces)), Report: rep}
				for i, t := range traces {
					res.Traces[i] = inspectTrace{Summary: trace.Summarize(t), Valid: true}
					if err := t.Validate(); err != nil {
						res.Traces[i].Valid, res.Traces[i].Problem = false, err.Error()
					}
				}
				return env.Emit(res, func(w io.Writer) error { return inspectText(w, res) })
			},
		}
		rf.add(cmd)
		return cmd
	})
}

func inspectText(w io.Writer, res inspectResult) error {
	fmt.Fprintf(w, "%s (%s): %d traces, %d points", res.File, res.Format, len(res.Traces), res.Report.Read)
	if res.Report.Deduplicated > 0 {
		fmt.Fprintf(w, ", %d exact repeats dropped", res.Report.Deduplicated)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "uid\tname\tpoints\tstart\tduration\tlength km\tinterval s median/mean/max\tspeed km/h median/p95/max\tvalid\t")
	for _, t := range res.Traces {
		start := "-"
		if t.Points > 0 {
			start = t.Start.Format(time.RFC3339)
		}
		valid := "yes"
		if !t.Valid {
			valid = "NO"
		}
		iv, sp := t.Interval, t.Speed
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%.3f\t%.1f / %.1f / %.0f\t%.1f / %.1f / %.1f\t%s\t\n",
			t.UID, t.Name, t.Points, start, t.Duration, t.PathLength/1000,
			iv.Median, iv.Mean, iv.Max, 3.6*sp.Median, 3.6*sp.P95, 3.6*sp.Max, valid)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range res.Traces {
		if !t.Valid {
			fmt.Fprintf(w, "trace %q is invalid: %s\n", t.UID, t.Problem)
		}
	}
	printProblems(w, res.Report)
	return nil
}
