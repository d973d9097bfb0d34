package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			out, title string
			labels     []string
			points     bool
			lenient    bool
		)
		cmd := &cobra.Command{
			Use:   "plot FILE... --out map.svg",
			Short: "Draw traces on a local projected map (SVG, PNG or PDF)",
			Long: `Draw one or more traces on a plain east-north canvas in metres around their
common centre, with a scale bar. Give an original and a sanitised trace to
compare them; --label names them in the legend (default: the file name).`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return errors.New("plot: --out is required (e.g. --out map.svg)")
				}
				if len(labels) > 0 && len(labels) != len(args) {
					return fmt.Errorf("plot: %d labels for %d files", len(labels), len(args))
				}
				var series []viz.Series
				npts := 0
				for i, path := range args {
					ts, _, err := trace.ReadFile(path, trace.ReadOptions{Lenient: lenient})
					if err != nil {
						return err
					}
					for _, t := range ts {
						label := filepath.Base(path)
						if len(labels) > 0 {
							label = labels[i]
						}
						if len(ts) > 1 {
							label = fmt.Sprintf("%s [%s]", label, t.UID)
						}
						series = append(series, viz.Series{Label: label, Trace: t, Points: points})
						npts += t.Len()
					}
				}
				p, err := viz.Map(series, viz.MapOptions{Title: title})
				if err != nil {
					return err
				}
				if err := viz.Save(p, out, 0, 0); err != nil {
					return err
				}
				res := map[string]any{"out": out, "traces": len(series), "points": npts}
				return env.Emit(res, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "wrote %s (%d traces, %d points)\n", out, len(series), npts)
					return err
				})
			},
		}
		f := cmd.Flags()
		f.StringVarP(&out, "out", "o", "", "image to write: .svg, .png or .pdf")
		f.StringVar(&title, "title", "", "figure title")
		f.StringSliceVar(&labels, "label", nil, "legend label per file (repeat or comma-separate)")
		f.BoolVar(&points, "points", false, "mark every fix")
		f.BoolVar(&lenient, "lenient", false, "skip malformed rows (reported) instead of failing")
		return cmd
	})
}
