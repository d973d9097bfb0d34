package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/reprocip"
	"github.com/tracepriv/tracepriv/internal/stats"
	"github.com/tracepriv/tracepriv/viz"
)

func init() { registerRepro(reproCIPCmd) }

// leffBand is the spread of fitted effective lengthscales that the paper
// shades on Figure 2 (GeoLife for RBF panels, home temperature for
// periodic ones).
type leffBand struct {
	Source string  `json:"source"`
	Values int     `json:"values"`
	Q25    float64 `json:"q25"`
	Median float64 `json:"median"`
	Q75    float64 `json:"q75"`
}

type reproCIPFigure struct {
	*reprocip.Result
	Band  *leffBand `json:"leff_band,omitempty"`
	Files []string  `json:"files,omitempty"`
}

func reproCIPCmd(env *cli.Env) *cobra.Command {
	var (
		figure, outDir, leffDir, python string
		optimal, replot, sensitivity    bool
		nugget                          float64
	)
	cmd := &cobra.Command{
		Use:   "cip --figure 2a|...|2h|all [--out DIR]",
		Short: "Figure 2 of Meehan & Chaudhuri (AISTATS 2021): SDP mechanisms vs Approach C",
		Long: `Reproduce a panel of Figure 2 of Meehan & Chaudhuri with the authors' settings
(figure_2.py): unit prior variance, kernel on sample indices, total noise
0.02 n, their stabilisation factors. RBF, n = 50, lengthscale^2 in
linspace(1, 100, 20): 2a basic secret {24}, 2b compound {24, 25}, 2c all 50
basic secrets (Multiple Secrets), 2d 2a's mechanism against adversaries at
0.5 l and 1.5 l. Periodic (period 24), n = 48, lengthscale^2 in
linspace(0.25, 2.25, 20): 2e basic {24}, 2f compound {16, 32}, 2g all basic,
2h misspecified. Indices are 0-based.

Each point is the posterior 2-sigma interval of a Gaussian-process adversary
(higher = more private) for the paper's SDP mechanism and the independent
uniform / concentrated baselines at the same total noise, plus the exact
(E1) loss factor of each design (lower = more private). --optimal adds
tracepriv's optimal design at equal total noise ((E2), or (E3) in budget mode).

Writes DIR/fig2X.json, .svg and .png with the interquartile band of the
paper's fitted l_eff shaded, as in the paper: the GeoLife fits for RBF
panels, the temperature fits for periodic ones. The band is the recorded
quartiles of the authors' fits unless --leff-data names a directory of them
(l_eff_x.csv, l_eff_y.csv, l_eff_temp.csv), which are then read instead.

2d/2h score the design with adversary priors that carry a nugget of
--adversary-nugget times the prior variance (default 1e-6, the ridge the
authors' code adds before scoring): without one, the 1.5 l adversary's
Gram matrix is far beyond double precision and its posterior is not
determined. --sensitivity runs the study behind that default instead of the
panel: posterior 2-sigma over nuggets 0, 1e-10, 1e-8, 1e-6, 1e-4 and three
solves of the design, in float64 and (with python3 and mpmath) at 80 digits
from the same matrices and for the exact problem; it writes
DIR/fig2X-sensitivity.json and one chart per l_eff studied.`,
		Example: `  tracepriv repro cip --figure 2a --out repro-output/cip
  tracepriv repro cip --figure 2a,2e --optimal --out repro-output/cip --json
  tracepriv repro cip --figure all --out repro-output/cip     # every panel; minutes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var figs []reprocip.Figure
			if figure == "all" {
				figs = reprocip.Figures()
			} else {
				for _, id := range strings.Split(figure, ",") {
					f, err := reprocip.Lookup(strings.TrimSpace(id))
					if err != nil {
						return fmt.Errorf("repro cip: --figure: %w", err)
					}
					figs = append(figs, f)
				}
			}
			if !(nugget >= 0) || math.IsInf(nugget, 1) {
				return fmt.Errorf("repro cip: --adversary-nugget %v: want a finite number >= 0 (0: none)", nugget)
			}
			if sensitivity {
				return runCIPSensitivity(env, figs, figure == "all", outDir, python, replot)
			}
			if replot {
				return replotCIP(env, outDir, figs)
			}
			bands := recordedLeffBands()
			if leffDir != "" {
				var err error
				if bands, err = loadLeffBands(leffDir); err != nil {
					return fmt.Errorf("repro cip: --leff-data: %w", err)
				}
			}
			var out []reproCIPFigure
			for _, f := range figs {
				bar := env.Progress(len(f.L2), "figure "+f.ID)
				opt := reprocip.Options{
					Optimal:         optimal,
					AdversaryNugget: nugget,
					Progress:        func(done, total int) { bar.Set(done) },
				}
				if nugget == 0 {
					opt.AdversaryNugget = reprocip.NoNugget
				}
				res, err := reprocip.Run(f, opt)
				bar.Finish()
				if err != nil {
					return fmt.Errorf("repro cip: %w", err)
				}
				fo := reproCIPFigure{Result: res}
				if bands != nil {
					fo.Band = bands[f.Kernel]
				}
				if outDir != "" {
					if err := writeCIPFigure(outDir, &fo); err != nil {
						return fmt.Errorf("repro cip: %w", err)
					}
				}
				out = append(out, fo)
			}
			var v any = out[0]
			if len(out) > 1 {
				v = map[string]any{"figures": out}
			}
			return env.Emit(v, func(w io.Writer) error { return cipFigureText(w, out) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&figure, "figure", "", "panel 2a..2h, a comma-separated list, or all")
	f.StringVar(&outDir, "out", "repro-output/cip", "directory for fig2X.json/.svg/.png (empty: write nothing)")
	f.StringVar(&leffDir, "leff-data", "", "directory with the paper's fitted l_eff CSVs (l_eff_x.csv, l_eff_y.csv, l_eff_temp.csv) to compute the band from (default: their recorded quartiles)")
	f.BoolVar(&optimal, "optimal", false, "also score tracepriv's optimal design at equal noise")
	f.BoolVar(&replot, "replot", false, "redraw the plots from the fig2X.json (with --sensitivity: fig2X-sensitivity.json) files already in --out, without computing")
	f.Float64Var(&nugget, "adversary-nugget", reprocip.DefaultAdversaryNugget, "2d/2h: nugget of the adversaries' priors, relative to the prior variance (0: none; the posterior is then not determined in double precision)")
	f.BoolVar(&sensitivity, "sensitivity", false, "2d/2h: run the nugget and design sensitivity study instead of the panel")
	f.StringVar(&python, "python", "", "--sensitivity: Python with mpmath for the 80-digit values (default: python3 on PATH, then /usr/bin/python3; without one the study is float64 only)")
	_ = cmd.MarkFlagRequired("figure")
	return cmd
}

// recordedLeffBands are the quartiles of Meehan and Chaudhuri's fitted
// l_eff (their saved_data: 3,762 GeoLife traces fitted per coordinate, x
// and y pooled as figure_2.py pools them; 10 SML2010 temperature series),
// as loadLeffBands computes them from the authors' files.
func recordedLeffBands() map[string]*leffBand {
	return map[string]*leffBand{
		"rbf":      {Source: "Meehan & Chaudhuri's GeoLife l_eff fits (x and y, recorded quartiles)", Values: 7524, Q25: 2.66600731875, Median: 6.1034848055, Q75: 7.999996118},
		"periodic": {Source: "Meehan & Chaudhuri's temperature l_eff fits (recorded quartiles)", Values: 10, Q25: 1.0400445235, Median: 1.096819488, Q75: 1.14498017075},
	}
}

// loadLeffBands reads the paper's l_eff fits from dir: x and y pooled for
// RBF panels (as figure_2.py pools them), temperature for periodic ones.
func loadLeffBands(dir string) (map[string]*leffBand, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: no such directory (check the path)", dir)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is a file; give the directory that holds l_eff_x.csv, l_eff_y.csv and l_eff_temp.csv", dir)
	}
	read := func(names ...string) (*leffBand, error) {
		var vals []float64
		for _, name := range names {
			v, err := readLeffCSV(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			vals = append(vals, v...)
		}
		slices.Sort(vals)
		return &leffBand{Source: strings.Join(names, "+"), Values: len(vals),
			Q25: stats.Quantile7(vals, 0.25), Median: stats.Quantile7(vals, 0.5), Q75: stats.Quantile7(vals, 0.75)}, nil
	}
	rbf, err := read("l_eff_x.csv", "l_eff_y.csv")
	if err != nil {
		return nil, err
	}
	per, err := read("l_eff_temp.csv")
	if err != nil {
		return nil, err
	}
	return map[string]*leffBand{"rbf": rbf, "periodic": per}, nil
}

// readLeffCSV reads a one-column CSV with the header "l_eff".
func readLeffCSV(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 1
	var out []float64
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 {
			if strings.TrimSpace(rec[0]) != "l_eff" {
				return nil, fmt.Errorf("%s:1: header %q, want \"l_eff\"", path, rec[0])
			}
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%s:%d: field \"l_eff\": %q is not a positive number", path, line, rec[0])
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no values", path)
	}
	return out, nil
}

func writeCIPFigure(dir string, fo *reproCIPFigure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, "fig"+fo.Figure)
	series := func(get func(reprocip.Point) *float64) plotter.XYs {
		var xy plotter.XYs
		for _, p := range fo.Points {
			if v := get(p); v != nil {
				xy = append(xy, plotter.XY{X: p.LEff, Y: *v})
			}
		}
		return xy
	}
	var lines []viz.Line
	add := func(label string, dashed bool, get func(reprocip.Point) *float64) {
		if xy := series(get); len(xy) > 0 {
			lines = append(lines, viz.Line{Label: label, XY: xy, Dashed: dashed, Points: true})
		}
	}
	add("SDP (paper)", false, func(p reprocip.Point) *float64 { return p.SDP })
	add("Ind. Unif.", false, func(p reprocip.Point) *float64 { return p.IndUniform })
	if !strings.HasPrefix(fo.Secret, "all") { // equal to uniform there
		add("Ind. Conc.", false, func(p reprocip.Point) *float64 { return p.IndConcentrated })
	}
	add("SDP_A exact solve (no stab. factor)", true, func(p reprocip.Point) *float64 { return p.SDPExact })
	add("Good prior", false, func(p reprocip.Point) *float64 { return p.GoodPrior })
	add("Over corr. prior (adversary 0.5 l)", false, func(p reprocip.Point) *float64 { return p.OverCorr })
	add("Under corr. prior (adversary 1.5 l)", false, func(p reprocip.Point) *float64 { return p.UnderCorr })
	add("optimal (tracepriv)", true, func(p reprocip.Point) *float64 { return p.Optimal })
	title := fmt.Sprintf("Figure %s: %s", fo.Figure, fo.Title)
	if fo.AdversaryNugget != nil {
		title += fmt.Sprintf(" (adversary nugget %g)", *fo.AdversaryNugget)
	}
	opt := viz.ChartOptions{
		Title:  title,
		XLabel: "prior dependence l_eff (samples)", YLabel: "posterior uncertainty interval (2 sigma)",
		LegendAuto: true,
	}
	if fo.Band != nil {
		opt.Band = &[2]float64{fo.Band.Q25, fo.Band.Q75}
		opt.BandLabel = "middle 50% of fitted l_eff"
		opt.Marker, opt.MarkerLabel = &fo.Band.Median, "median fitted l_eff"
	}
	p, err := viz.Chart(lines, opt)
	if err != nil {
		return err
	}
	for _, ext := range []string{".svg", ".png"} {
		if err := viz.Save(p, base+ext, 0, 0); err != nil {
			return err
		}
		fo.Files = append(fo.Files, base+ext)
	}
	fo.Files = append(fo.Files, base+".json")
	return cli.WriteJSONFile(base+".json", fo)
}

func cipFigureText(w io.Writer, figs []reproCIPFigure) error {
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'g', 4, 64)
	}
	loss := func(v *reprocip.Num) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(float64(*v), 'g', 4, 64)
	}
	for _, fo := range figs {
		fmt.Fprintf(w, "Figure %s: %s (n = %d, budget %.3g, stab. factor %g) in %s\n", fo.Figure, fo.Title, fo.N, fo.BudgetPerUnit, fo.Stabilisation, time.Duration(fo.Seconds*float64(time.Second)).Round(time.Millisecond))
		if nu := fo.AdversaryNugget; nu != nil && *nu > 0 {
			fmt.Fprintf(w, "  adversaries' prior nugget: %g x prior variance\n", *nu)
		} else if nu != nil {
			fmt.Fprintf(w, "  adversaries' prior nugget: none (the 1.5 l curve is then not determined in double precision)\n")
		}
		if fo.Band != nil {
			fmt.Fprintf(w, "  fitted l_eff (%s): quartiles %.3g / %.3g / %.3g\n", fo.Band.Source, fo.Band.Q25, fo.Band.Median, fo.Band.Q75)
		}
		fmt.Fprintf(w, "  %6s %8s %9s %9s %9s %9s %9s %9s %10s\n", "l_eff", "budget", "sdp", "ind_unif", "ind_conc", "good", "over", "under", "L(sdp)")
		for _, p := range fo.Points {
			fmt.Fprintf(w, "  %6.3f %8.4g %9s %9s %9s %9s %9s %9s %10s\n", p.LEff, p.Budget, num(p.SDP), num(p.IndUniform), num(p.IndConcentrated),
				num(p.GoodPrior), num(p.OverCorr), num(p.UnderCorr), loss(p.LossSDP))
		}
		for _, f := range fo.Files {
			fmt.Fprintf(w, "  wrote %s\n", f)
		}
	}
	return nil
}

// replotCIP redraws panels from their JSON in dir.
func replotCIP(env *cli.Env, dir string, figs []reprocip.Figure) error {
	if dir == "" {
		return errors.New("repro cip: --replot needs --out DIR")
	}
	var out []reproCIPFigure
	for _, f := range figs {
		b, err := os.ReadFile(filepath.Join(dir, "fig"+f.ID+".json"))
		if err != nil {
			return fmt.Errorf("repro cip: --replot: %w", err)
		}
		var fo reproCIPFigure
		if err := json.Unmarshal(b, &fo); err != nil {
			return fmt.Errorf("repro cip: --replot: fig%s.json: %w", f.ID, err)
		}
		fo.Files = nil
		if err := writeCIPFigure(dir, &fo); err != nil {
			return fmt.Errorf("repro cip: %w", err)
		}
		out = append(out, fo)
	}
	return env.Emit(map[string]any{"figures": out}, func(w io.Writer) error { return cipFigureText(w, out) })
}

// runCIPSensitivity runs the nugget and design sensitivity study of the
// misspecified panels among figs (all of them must be, unless the user
// asked for all panels).
func runCIPSensitivity(env *cli.Env, figs []reprocip.Figure, all bool, outDir, python string, replot bool) error {
	if replot && outDir == "" {
		return errors.New("repro cip: --replot needs --out DIR")
	}
	var out []*reprocip.SensitivityResult
	for _, f := range figs {
		if f.Kind != reprocip.Misspecified {
			if all {
				continue
			}
			return fmt.Errorf("repro cip: --sensitivity: figure %s is not a misspecified-prior panel (use 2d or 2h)", f.ID)
		}
		if replot {
			name := filepath.Join(outDir, "fig"+f.ID+"-sensitivity.json")
			b, err := os.ReadFile(name)
			if err != nil {
				return fmt.Errorf("repro cip: --replot: %w", err)
			}
			var res reprocip.SensitivityResult
			if err := json.Unmarshal(b, &res); err != nil {
				return fmt.Errorf("repro cip: --replot: %s: %w", name, err)
			}
			if _, err := writeCIPSensitivity(outDir, &res); err != nil {
				return fmt.Errorf("repro cip: %w", err)
			}
			out = append(out, &res)
			continue
		}
		bar := env.Progress(len(f.L2), "sensitivity "+f.ID+" (float64)")
		res, err := reprocip.Sensitivity(f, reprocip.SensitivityOptions{Progress: func(done, total int) {
			bar.ChangeMax(total)
			bar.Set(done)
		}})
		bar.Finish()
		if err != nil {
			return fmt.Errorf("repro cip: %w", err)
		}
		if !env.Quiet {
			fmt.Fprintf(env.Stderr, "tracepriv: sensitivity %s: 80-digit cross-check with mpmath (a few minutes)\n", f.ID)
		}
		if err := res.RunHighPrecision(python); err != nil {
			if python != "" || !errors.Is(err, reprocip.ErrNoHighPrecision) {
				return fmt.Errorf("repro cip: --sensitivity: %w", err)
			}
			if !env.Quiet {
				fmt.Fprintf(env.Stderr, "tracepriv: note: %v; the study has float64 values only\n", err)
			}
		}
		if outDir != "" {
			files, err := writeCIPSensitivity(outDir, res)
			if err != nil {
				return fmt.Errorf("repro cip: %w", err)
			}
			if !env.Quiet {
				for _, name := range files {
					fmt.Fprintf(env.Stderr, "tracepriv: wrote %s\n", name)
				}
			}
		}
		out = append(out, res)
	}
	var v any = out[0]
	if len(out) > 1 {
		v = map[string]any{"sensitivity": out}
	}
	return env.Emit(v, func(w io.Writer) error { return cipSensitivityText(w, out) })
}

// sensitivityZeroAt is where nugget 0 sits on the chart's log10 axis.
const sensitivityZeroAt = -12

func nuggetX(nu float64) float64 {
	if nu == 0 {
		return sensitivityZeroAt
	}
	return math.Log10(nu)
}

// writeCIPSensitivity writes DIR/fig2X-sensitivity.json and, per l_eff,
// a chart of the posterior 2-sigma against the nugget.
func writeCIPSensitivity(dir string, res *reprocip.SensitivityResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, "fig"+res.Figure+"-sensitivity")
	var files []string
	for _, p := range res.Points {
		var lines []viz.Line
		add := func(label string, dashed bool, xy plotter.XYs) {
			if len(xy) > 0 {
				lines = append(lines, viz.Line{Label: label, XY: xy, Dashed: dashed, Points: true})
			}
		}
		// The 1.5 l adversary in float64 for every design and at 80 digits
		// (same matrices) for the closed form, the panel's design; the
		// exact problem for all three adversaries.
		short := func(name string) string { return strings.Replace(name, "interior point, tol", "interior point", 1) }
		for _, d := range p.Designs {
			var f64, hp plotter.XYs
			for _, v := range p.Values {
				if v.Scale != 1.5 || v.Design != d.Name {
					continue
				}
				f64 = append(f64, plotter.XY{X: nuggetX(v.Nugget), Y: v.Float64})
				if v.HighPrecision != nil {
					hp = append(hp, plotter.XY{X: nuggetX(v.Nugget), Y: *v.HighPrecision})
				}
			}
			add("float64, "+short(d.Name), false, f64)
			if d.Name == reprocip.DesignClosedForm {
				add("80 digits, same matrices, closed form", true, hp)
			}
		}
		for _, sc := range []float64{1.5, 1, 0.5} {
			var ex plotter.XYs
			for _, s := range p.Summary {
				if s.Scale == sc && s.Exact != nil {
					ex = append(ex, plotter.XY{X: nuggetX(s.Nugget), Y: *s.Exact})
				}
			}
			label := map[float64]string{1.5: "exact problem", 1: "design's prior (l), exact", 0.5: "adversary at 0.5 l, exact"}[sc]
			add(label, sc != 1.5, ex)
		}
		if len(lines) == 0 {
			continue
		}
		pl, err := viz.Chart(lines, viz.ChartOptions{
			Title:        fmt.Sprintf("Figure %s, l_eff %.3g: adversary at 1.5 l, by its prior's nugget", res.Figure, p.LEff),
			XLabel:       "adversary's prior nugget (relative to the prior variance)",
			YLabel:       "posterior 2 sigma of the secret",
			LegendBottom: true,
		})
		if err != nil {
			return nil, err
		}
		var ticks []plot.Tick
		for _, nu := range res.Nuggets {
			label := strconv.FormatFloat(nu, 'g', -1, 64)
			ticks = append(ticks, plot.Tick{Value: nuggetX(nu), Label: label})
		}
		pl.X.Tick.Marker = plot.ConstantTicks(ticks)
		name := fmt.Sprintf("%s-leff%.3g", base, p.LEff)
		for _, ext := range []string{".svg", ".png"} {
			if err := viz.Save(pl, name+ext, 20*vg.Centimeter, 15*vg.Centimeter); err != nil {
				return nil, err
			}
			files = append(files, name+ext)
		}
	}
	if err := cli.WriteJSONFile(base+".json", res); err != nil {
		return nil, err
	}
	return append(files, base+".json"), nil
}

func cipSensitivityText(w io.Writer, res []*reprocip.SensitivityResult) error {
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'f', 6, 64)
	}
	for _, r := range res {
		fmt.Fprintf(w, "Figure %s sensitivity: %s (n = %d, secret {%d}, budget %.3g) in %s\n", r.Figure, r.Title, r.N, r.Secret, r.Budget,
			time.Duration(r.Seconds*float64(time.Second)).Round(time.Millisecond))
		if hp := r.HighPrecision; hp != nil && hp.Error == "" {
			fmt.Fprintf(w, "  high precision: %s, %d digits (%s) in %.0f s\n", hp.Tool, hp.Digits, hp.Python, hp.Seconds)
		} else if hp != nil {
			fmt.Fprintf(w, "  high precision: none (%s)\n", hp.Error)
		}
		for _, p := range r.Points {
			fmt.Fprintf(w, "  l_eff %.3f; designs:", p.LEff)
			for _, d := range p.Designs[1:] {
				fmt.Fprintf(w, " %s %.2g from the closed form;", d.Name, d.Distance)
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "    %5s %7s %10s %19s %19s %9s %9s %s\n", "scale", "nugget", "condition", "float64 (designs)", "80 digits (designs)", "exact", "spread", "determined")
			for _, s := range p.Summary {
				cond := "-"
				if s.Condition != nil {
					cond = strconv.FormatFloat(float64(*s.Condition), 'g', 2, 64)
				}
				fmt.Fprintf(w, "    %5g %7g %10s %9.6f-%9.6f %9s-%9s %9s %9.2g %v\n", s.Scale, s.Nugget, cond, s.Float64Min, s.Float64Max,
					opt(s.HighPrecisionMin), opt(s.HighPrecisionMax), opt(s.Exact), float64(s.Spread), s.Determined)
			}
		}
	}
	return nil
}
