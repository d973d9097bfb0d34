package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var out string
		cmd := &cobra.Command{
			Use:   "demo [--out DIR]",
			Short: "Run the main job on the bundled sample trace",
			Long: `Run tracepriv's main job on a bundled GeoLife trace (user 000, 244 fixes
in Beijing) and write the results to --out: the trace in every supported
format, its summary, and a map.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
				r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{Name: sample.Name, UID: "000"})
				if err != nil {
					return err
				}
				t, err := r.Next()
				if err != nil {
					return err
				}
				var files []string
				for _, f := range []trace.Format{trace.PLT, trace.CSV, trace.GeoJSON, trace.GPX} {
					path := filepath.Join(out, "sample"+extension(f))
					if err := trace.WriteFile(path, []*trace.Trace{t}, f); err != nil {
						return err
					}
					files = append(files, path)
				}
				p, err := viz.Map([]viz.Series{{Label: "GeoLife user 000", Trace: t, Points: true}}, viz.MapOptions{Title: "bundled sample trace"})
				if err != nil {
					return err
				}
				mapPath := filepath.Join(out, "map.svg")
				if err := viz.Save(p, mapPath, 0, 0); err != nil {
					return err
				}
				files = append(files, mapPath)
				sum := trace.Summarize(t)
				res := map[string]any{"summary": sum, "files": files}
				return env.Emit(res, func(w io.Writer) error {
					fmt.Fprintf(w, "sample trace: %d points over %s\n", t.Len(), t.Duration())
					for _, f := range files {
						fmt.Fprintf(w, "wrote %s\n", f)
					}
					return nil
				})
			},
		}
		cmd.Flags().StringVarP(&out, "out", "o", "demo-output", "directory for the results")
		return cmd
	})
}

func extension(f trace.Format) string {
	switch f {
	case trace.PLT:
		return ".plt"
	case trace.CSV:
		return ".csv"
	case trace.GeoJSON:
		return ".geojson"
	default:
		return ".gpx"
	}
}
