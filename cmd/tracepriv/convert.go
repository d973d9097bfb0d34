package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
)

// readFlags are the input options shared by convert and inspect.
type readFlags struct {
	from, uid, tz string
	lenient       bool
}

func (r *readFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.from, "from", "", "input format: plt, csv, geojson or gpx (default: from the extension)")
	f.BoolVar(&r.lenient, "lenient", false, "skip malformed records (each one reported) instead of failing")
	f.StringVar(&r.uid, "uid", "", "user id for traces whose format has none (default for PLT: the GeoLife user directory)")
	f.StringVar(&r.tz, "tz", "", "IANA time zone of PLT local times and zone-less CSV times (default UTC)")
}

// options resolves the flags for reading path.
func (r *readFlags) options(path string) (trace.ReadOptions, error) {
	opt := trace.ReadOptions{UID: r.uid, Lenient: r.lenient}
	var err error
	if r.from != "" {
		opt.Format, err = trace.ParseFormat(r.from)
	} else {
		opt.Format, err = trace.FormatFromPath(path)
	}
	if err != nil {
		return opt, err
	}
	if r.tz != "" {
		if opt.Location, err = time.LoadLocation(r.tz); err != nil {
			return opt, fmt.Errorf("--tz: %w", err)
		}
	}
	return opt, nil
}

// printProblems lists the records a lenient read skipped.
func printProblems(w io.Writer, rep *trace.Report) {
	if rep.Skipped == 0 {
		return
	}
	fmt.Fprintf(w, "skipped %d malformed records:\n", rep.Skipped)
	const show = 20
	for i, p := range rep.Problems {
		if i == show {
			fmt.Fprintf(w, "  ... and %d more (see --json)\n", rep.Skipped-show)
			break
		}
		fmt.Fprintf(w, "  %v\n", p)
	}
}

type convertResult struct {
	In     string        `json:"in"`
	Out    string        `json:"out"`
	From   trace.Format  `json:"from"`
	To     trace.Format  `json:"to"`
	Traces int           `json:"traces"`
	Points int           `json:"points"`
	Report *trace.Report `json:"report"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			in, out, to string
			rf          readFlags
		)
		cmd := &cobra.Command{
			Use:   "convert --in FILE --out FILE",
			Short: "Convert traces between GeoLife PLT, CSV, GeoJSON and GPX",
			Long: `Convert traces between GeoLife PLT, CSV (uid,time,lat,lon), GeoJSON and GPX 1.1.
Formats come from the file extensions (.plt, .csv, .geojson or .json, .gpx)
unless --from/--to say otherwise. The output is written atomically.

A malformed record stops the conversion with an error naming the file, line
and field; with --lenient it is skipped and reported instead. A PLT file
holds one trace, so converting several traces to PLT fails.`,
			Example: `  tracepriv convert --in 000/20081023025304.plt --out trace.geojson
  tracepriv convert --in export.txt --from csv --out trace.gpx --lenient`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if in == "" || out == "" {
					return errors.New("convert: --in and --out are required")
				}
				opt, err := rf.options(in)
				if err != nil {
					return err
				}
				var toF trace.Format
				if to != "" {
					toF, err = trace.ParseFormat(to)
				} else {
					toF, err = trace.FormatFromPath(out)
				}
				if err != nil {
					return err
				}
				traces, rep, err := trace.ReadFile(in, opt)
				if err != nil {
					return err
				}
				if err := trace.WriteFile(out, traces, toF); err != nil {
					return err
				}
				res := convertResult{In: in, Out: out, From: opt.Format, To: toF, Traces: len(traces), Points: rep.Read, Report: rep}
				return env.Emit(res, func(w io.Writer) error {
					fmt.Fprintf(w, "%s (%s) -> %s (%s): %d traces, %d points", in, opt.Format, out, toF, res.Traces, res.Points)
					if rep.Deduplicated > 0 {
						fmt.Fprintf(w, ", %d exact repeats dropped", rep.Deduplicated)
					}
					fmt.Fprintln(w)
					printProblems(w, rep)
					return nil
				})
			},
		}
		f := cmd.Flags()
		f.StringVarP(&in, "in", "i", "", "input file")
		f.StringVarP(&out, "out", "o", "", "output file")
		f.StringVar(&to, "to", "", "output format: plt, csv, geojson or gpx (default: from the extension)")
		rf.add(cmd)
		return cmd
	})
}
