package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// plotResult is the --json output of plot.
type plotResult struct {
	Out    string `json:"out"`
	Traces int    `json:"traces"`
	Points int    `json:"points"`
	trace.InputSummary
}

func init() { register(newPlotCmd) }

// plotCmd is "tracepriv plot".
type plotCmd struct {
	env        *cli.Env
	out, title string
	labels     []string
	points     bool
	force      bool
	rf         cli.ReadFlags
}

func newPlotCmd(env *cli.Env) *cobra.Command {
	c := &plotCmd{env: env}
	long, example := help("plot")
	cmd := &cobra.Command{
		Use:     "plot FILE|DIR... --out map.svg",
		Short:   "Draw traces on a local projected map (SVG, PNG or PDF)",
		Long:    long,
		Example: example,
		Args:    cobra.MinimumNArgs(1),
		RunE:    func(_ *cobra.Command, args []string) error { return c.run(args) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.out, "out", "o", "", "image to write: .svg, .png or .pdf")
	f.StringVar(&c.title, "title", "", "figure title")
	f.StringSliceVar(&c.labels, "label", nil, "legend label per input (repeat or comma-separate)")
	f.BoolVar(&c.points, "points", false, "mark every fix")
	f.BoolVar(&c.force, "force", false, "replace --out if it exists")
	c.rf.Add(cmd)
	c.rf.AddCorpus(cmd.Flags(), "")
	return cmd
}

func (c *plotCmd) run(args []string) error {
	out, labels := c.out, c.labels
	if out == "" {
		return usageErrorf("plot: --out is required (e.g. --out map.svg)")
	}
	if err := cli.CheckFigure("--out", out); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := checkOutputs(args, c.force, map[string]string{"--out": out}); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if len(labels) > 0 && len(labels) != len(args) {
		return usageErrorf("plot: --label: %d labels for %d inputs; give one per input, comma-separated", len(labels), len(args))
	}
	var series []viz.Series
	npts := 0
	rep, err := c.rf.ReadEach(args, func(path string, ts []*trace.Trace) {
		label := filepath.Base(path)
		if i := argOf(args, path); len(labels) > 0 && i >= 0 {
			if path == args[i] {
				label = labels[i]
			} else {
				label = labels[i] + " " + label
			}
		}
		for _, t := range ts {
			l := label
			if len(ts) > 1 {
				l = fmt.Sprintf("%s [%s]", label, t.UID)
			}
			series = append(series, viz.Series{Label: l, Trace: t, Points: c.points})
			npts += t.Len()
		}
	})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	c.env.ReportSkipped(rep)
	p, err := viz.Map(series, viz.MapOptions{Title: c.title})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := viz.Save(p, out, 0, 0); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	res := plotResult{Out: out, Traces: len(series), Points: npts, InputSummary: rep.Summary()}
	return c.env.Emit(res, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "wrote %s (%d traces, %d points)\n", out, len(series), npts)
		return err
	})
}

// argOf returns the index of the argument that path was found under (the
// argument itself or a directory holding it), or -1.
func argOf(args []string, path string) int {
	for i, a := range args {
		if path == a {
			return i
		}
	}
	for i, a := range args {
		if rel, err := filepath.Rel(a, path); err == nil && !strings.HasPrefix(rel, "..") {
			return i
		}
	}
	return -1
}
