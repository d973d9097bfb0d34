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

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			out, title string
			labels     []string
			points     bool
			force      bool
			rf         readFlags
		)
		cmd := &cobra.Command{
			Use:   "plot FILE|DIR... --out map.svg",
			Short: "Draw traces on a local projected map (SVG, PNG or PDF)",
			Long: `Draw one or more traces on a plain east-north canvas in metres around their
common centre, with a scale bar. Give an original and a sanitised trace to
compare them; --label names them in the legend (default: the file name). A
directory draws every trace file in it. The image is written atomically; an
existing file is replaced only with --force.

Dirty input is repaired or skipped as docs/input.md says and reported on
stderr; --strict stops at the first bad row instead.`,
			Example: `  tracepriv plot internal/sample/synth-1/commute.plt --out sample.svg
  tracepriv plot demo-output/sample.plt demo-output/sanitised.plt --label original,sanitised --out compare.png
  tracepriv plot demo-output/sample.gpx --points --title "synthetic person synth-1" --out fixes.svg --json`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return usageErrorf("plot: --out is required (e.g. --out map.svg)")
				}
				switch strings.ToLower(filepath.Ext(out)) {
				case ".svg", ".png", ".pdf":
				default:
					return usageErrorf("plot: --out %s: give a .svg, .png or .pdf file", out)
				}
				if err := checkOutputs(args, force, map[string]string{"--out": out}); err != nil {
					return fmt.Errorf("plot: %w", err)
				}
				if len(labels) > 0 && len(labels) != len(args) {
					return usageErrorf("plot: --label: %d labels for %d inputs; give one per input, comma-separated", len(labels), len(args))
				}
				var series []viz.Series
				npts := 0
				rep, err := rf.readEach(args, func(path string, ts []*trace.Trace) {
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
						series = append(series, viz.Series{Label: l, Trace: t, Points: points})
						npts += t.Len()
					}
				})
				if err != nil {
					return fmt.Errorf("plot: %w", err)
				}
				reportSkipped(env, rep)
				p, err := viz.Map(series, viz.MapOptions{Title: title})
				if err != nil {
					return fmt.Errorf("plot: %w", err)
				}
				if err := viz.Save(p, out, 0, 0); err != nil {
					return fmt.Errorf("plot: %w", err)
				}
				res := plotResult{Out: out, Traces: len(series), Points: npts, InputSummary: rep.Summary()}
				return env.Emit(res, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "wrote %s (%d traces, %d points)\n", out, len(series), npts)
					return err
				})
			},
		}
		f := cmd.Flags()
		f.StringVarP(&out, "out", "o", "", "image to write: .svg, .png or .pdf")
		f.StringVar(&title, "title", "", "figure title")
		f.StringSliceVar(&labels, "label", nil, "legend label per input (repeat or comma-separate)")
		f.BoolVar(&points, "points", false, "mark every fix")
		f.BoolVar(&force, "force", false, "replace --out if it exists")
		rf.add(cmd)
		rf.addCorpus(cmd.Flags(), "")
		return cmd
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
