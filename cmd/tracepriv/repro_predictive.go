package main

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
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
		}
		for _, f := range reproSubcommands {
			cmd.AddCommand(f(env))
		}
		return cmd
	})
	registerRepro(reproPredictiveCmd)
}

// pltFiles lists the GeoLife PLT files under dir, sorted.
func pltFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".plt") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .plt files found", dir)
	}
	sort.Strings(files)
	return files, nil
}

func reproPredictiveCmd(env *cli.Env) *cobra.Command {
	var (
		data, outDir, origin string
		samplings            int
		maxSpeedKmh, grid    float64
	)
	def := geoind.DefaultCaseStudy()
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
(the paper's outputs are continuous, which tracepriv does not release).`,
		Example: `  tracepriv repro predictive --data ../shared/data/geolife --seed 1 --out out/predictive
  tracepriv repro predictive --data ../shared/data/geolife --samplings 2 --origin 39.9042,116.4074 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" {
				return errors.New("repro predictive: --data DIR is required")
			}
			files, err := pltFiles(data)
			if err != nil {
				return fmt.Errorf("repro predictive: %w", err)
			}
			var traces []*trace.Trace
			for _, f := range files {
				ts, _, err := trace.ReadFile(f, trace.ReadOptions{})
				if err != nil {
					return fmt.Errorf("repro predictive: %w", err)
				}
				traces = append(traces, ts...)
			}
			o, err := geo.ParseLatLon(origin)
			if err != nil {
				return fmt.Errorf("repro predictive: --origin: %w", err)
			}
			cs := geoind.DefaultCaseStudy()
			cs.Samplings = samplings
			cs.MaxSpeed = maxSpeedKmh / 3.6
			cs.Origin = geoind.LatLon{Lat: o.Lat, Lon: o.Lon}
			cs.Grid = grid
			src := env.Source()
			bar := env.Progress(len(traces)*len(cs.JumpProbs), "predictive case study")
			res, err := cs.Run(traces, src, func() { bar.Add(1) })
			bar.Finish()
			var pe *geoind.ParamError
			if errors.As(err, &pe) && pe.Name == "grid" {
				return fmt.Errorf("repro predictive: --grid %g: %w", grid, err)
			}
			if err != nil {
				return fmt.Errorf("repro predictive: %w", err)
			}
			out := reproPredictiveOutput{CaseStudyResult: res, Randomness: noise.Describe(src), Files: len(files)}
			if outDir != "" {
				if err := writePredictiveOutputs(outDir, out); err != nil {
					return err
				}
			}
			return env.Emit(out, func(w io.Writer) error { return predictiveText(w, res) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "directory of GeoLife PLT files (searched recursively)")
	f.StringVar(&outDir, "out", "", "directory for results.json and the SVG plots")
	f.IntVar(&samplings, "samplings", 10, "samplings per trace and jump probability")
	f.Float64Var(&maxSpeedKmh, "max-speed", 15, "speed (km/h) of the elapsed-time skip strategy")
	f.StringVar(&origin, "origin", fmt.Sprintf("%g,%g", def.Origin.Lat, def.Origin.Lon), "public origin LAT,LON of the tangent plane (central Beijing, for GeoLife)")
	f.Float64Var(&grid, "grid", def.Grid, "output grid step in metres (> 0)")
	return cmd
}

type reproPredictiveOutput struct {
	*geoind.CaseStudyResult
	Randomness string `json:"randomness"` // "crypto" or "seeded:N"
	Files      int    `json:"files"`
}

func predictiveText(w io.Writer, res *geoind.CaseStudyResult) error {
	for _, sec := range []struct {
		name string
		rows []geoind.CaseRow
	}{{"fixed rate (3.3 % of ε per query)", res.FixedRate}, {"fixed utility (α(0.9) = 3 km)", res.FixedUtility}} {
		fmt.Fprintf(w, "%s: %d traces\n", sec.name, res.Traces)
		fmt.Fprintf(w, "%4s  %-22s %-22s %-22s %s\n", "p", "IM err/α90/pts", "PM err/α90/pts", "PM+skip err/α90/pts", "PM PR/test share")
		for _, r := range sec.rows {
			cell := func(m geoind.Metrics) string {
				return fmt.Sprintf("%5.0f/%5.0f/%5.1f", m.MeanError, m.Alpha90, m.PointsCovered)
			}
			fmt.Fprintf(w, "%4.1f  %-22s %-22s %-22s %.2f/%.2f\n", r.P, cell(r.IM), cell(r.PM), cell(r.PMSkip), r.PM.PredictionRate, r.PM.TestShare)
		}
	}
	return nil
}

func writePredictiveOutputs(dir string, out reproPredictiveOutput) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	env := &cli.Env{JSON: true, Stdout: &b}
	if err := env.Emit(out, nil); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, "results.json"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	for name, rows := range map[string][]geoind.CaseRow{"fixed_rate": out.FixedRate, "fixed_utility": out.FixedUtility} {
		for _, ext := range []string{".svg", ".png"} {
			if err := plotPredictive(filepath.Join(dir, name+ext), strings.ReplaceAll(name, "_", " "), rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// plotPredictive draws the three panels of the paper's Figs 8-9: general
// statistics, errors, and budget rate, against the jump probability.
func plotPredictive(path, title string, rows []geoind.CaseRow) error {
	series := func(f func(geoind.CaseRow) float64) plotter.XYs {
		xy := make(plotter.XYs, len(rows))
		for i, r := range rows {
			xy[i] = plotter.XY{X: r.P, Y: f(r)}
		}
		return xy
	}
	type line struct {
		label string
		xy    plotter.XYs
	}
	panel := func(ptitle, ylabel string, lines []line) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title + ": " + ptitle
		p.X.Label.Text = "jump probability p"
		p.Y.Label.Text = ylabel
		p.Legend.Top = true
		for i, l := range lines {
			lp, pts, err := plotter.NewLinePoints(l.xy)
			if err != nil {
				return nil, err
			}
			c := plotColor(i)
			lp.Color, pts.Color = c, c
			pts.Shape = draw.CircleGlyph{}
			p.Add(lp, pts)
			p.Legend.Add(l.label, lp, pts)
		}
		// Head room for the legend, which sits inside the top of the plot.
		p.Y.Max += 0.12 * float64(len(lines)) * (p.Y.Max - p.Y.Min)
		return p, nil
	}
	stats, err := panel("statistics", "fraction", []line{
		{"PM prediction rate", series(func(r geoind.CaseRow) float64 { return r.PM.PredictionRate })},
		{"PM test budget", series(func(r geoind.CaseRow) float64 { return r.PM.TestShare })},
		{"PM+skip prediction rate", series(func(r geoind.CaseRow) float64 { return r.PMSkip.PredictionRate })},
		{"PM+skip test budget", series(func(r geoind.CaseRow) float64 { return r.PMSkip.TestShare })},
		{"PM+skip skipped points", series(func(r geoind.CaseRow) float64 { return r.PMSkip.Skipped })},
	})
	if err != nil {
		return err
	}
	errs, err := panel("error", "metres", []line{
		{"IM E[d]", series(func(r geoind.CaseRow) float64 { return r.IM.MeanError })},
		{"IM α(0.9)", series(func(r geoind.CaseRow) float64 { return r.IM.Alpha90 })},
		{"PM E[d]", series(func(r geoind.CaseRow) float64 { return r.PM.MeanError })},
		{"PM α(0.9)", series(func(r geoind.CaseRow) float64 { return r.PM.Alpha90 })},
		{"PM+skip E[d]", series(func(r geoind.CaseRow) float64 { return r.PMSkip.MeanError })},
		{"PM+skip α(0.9)", series(func(r geoind.CaseRow) float64 { return r.PMSkip.Alpha90 })},
	})
	if err != nil {
		return err
	}
	rate, err := panel("budget rate", "% of ε per query", []line{
		{"IM", series(func(r geoind.CaseRow) float64 { return 100 * r.IM.Rate })},
		{"PM", series(func(r geoind.CaseRow) float64 { return 100 * r.PM.Rate })},
		{"PM+skip", series(func(r geoind.CaseRow) float64 { return 100 * r.PMSkip.Rate })},
	})
	if err != nil {
		return err
	}
	const w, h = 42 * vg.Centimeter, 13 * vg.Centimeter
	var (
		dc draw.Canvas
		wt io.WriterTo
	)
	switch filepath.Ext(path) {
	case ".png":
		img := vgimg.New(w, h)
		dc, wt = draw.New(img), vgimg.PngCanvas{Canvas: img}
	default:
		img := vgsvg.New(w, h)
		dc, wt = draw.New(img), img
	}
	tiles := draw.Tiles{Rows: 1, Cols: 3, PadX: vg.Centimeter, PadY: vg.Centimeter / 2}
	plots := [][]*plot.Plot{{stats, errs, rate}}
	canvases := plot.Align(plots, tiles, dc)
	for j, p := range plots[0] {
		p.Draw(canvases[0][j])
	}
	return atomicfile.Write(path, 0o644, func(wr io.Writer) error {
		_, err := wt.WriteTo(wr)
		return err
	})
}

func plotColor(i int) color.RGBA {
	palette := []color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	}
	return palette[i%len(palette)]
}
