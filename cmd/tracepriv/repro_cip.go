package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(reproCIPCmd) }

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
			var figs []repro.CIPFigure
			if figure == "all" {
				figs = repro.CIPFigures()
			} else {
				for _, id := range strings.Split(figure, ",") {
					f, err := repro.LookupCIPFigure(strings.TrimSpace(id))
					if err != nil {
						return fmt.Errorf("repro cip: --figure: %w", err)
					}
					figs = append(figs, f)
				}
			}
			if !(nugget >= 0) || math.IsInf(nugget, 1) {
				return usageErrorf("repro cip: --adversary-nugget %v: want a finite number >= 0 (0: none)", nugget)
			}
			if sensitivity {
				return runCIPSensitivity(env, figs, figure == "all", outDir, python, replot)
			}
			if replot {
				return replotCIP(env, outDir, figs)
			}
			bands := repro.RecordedLEffBands()
			if leffDir != "" {
				var err error
				if bands, err = repro.LoadLEffBands(leffDir); err != nil {
					return fmt.Errorf("repro cip: --leff-data: %w", err)
				}
			}
			var out []*repro.CIPFigureReport
			for _, f := range figs {
				bar := env.Progress(len(f.L2), "figure "+f.ID)
				opt := repro.CIPFigureOptions{
					Optimal:         optimal,
					AdversaryNugget: nugget,
					Progress:        func(done, total int) { bar.Set(done) },
				}
				if nugget == 0 {
					opt.AdversaryNugget = repro.NoNugget
				}
				res, err := repro.RunCIPFigure(f, opt)
				bar.Finish()
				if err != nil {
					return fmt.Errorf("repro cip: %w", err)
				}
				fo := &repro.CIPFigureReport{CIPFigureResult: res}
				if bands != nil {
					fo.Band = bands[f.Kernel]
				}
				if outDir != "" {
					if err := repro.WriteCIPFigure(outDir, fo); err != nil {
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
	f.Float64Var(&nugget, "adversary-nugget", repro.DefaultAdversaryNugget, "2d/2h: nugget of the adversaries' priors, relative to the prior variance (0: none; the posterior is then not determined in double precision)")
	f.BoolVar(&sensitivity, "sensitivity", false, "2d/2h: run the nugget and design sensitivity study instead of the panel")
	f.StringVar(&python, "python", "", "--sensitivity: Python with mpmath for the 80-digit values (default: python3 on PATH, then /usr/bin/python3; without one the study is float64 only)")
	_ = cmd.MarkFlagRequired("figure")
	return cmd
}

func cipFigureText(w io.Writer, figs []*repro.CIPFigureReport) error {
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'g', 4, 64)
	}
	loss := func(v *repro.Num) string {
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
func replotCIP(env *cli.Env, dir string, figs []repro.CIPFigure) error {
	if dir == "" {
		return usageErrorf("repro cip: --replot needs --out DIR")
	}
	var out []*repro.CIPFigureReport
	for _, f := range figs {
		fo, err := repro.ReadCIPFigure(dir, f.ID)
		if err != nil {
			return fmt.Errorf("repro cip: --replot: %w", err)
		}
		if err := repro.WriteCIPFigure(dir, fo); err != nil {
			return fmt.Errorf("repro cip: %w", err)
		}
		out = append(out, fo)
	}
	return env.Emit(map[string]any{"figures": out}, func(w io.Writer) error { return cipFigureText(w, out) })
}

// runCIPSensitivity runs the nugget and design sensitivity study of the
// misspecified panels among figs (all of them must be, unless the user
// asked for all panels).
func runCIPSensitivity(env *cli.Env, figs []repro.CIPFigure, all bool, outDir, python string, replot bool) error {
	if replot && outDir == "" {
		return usageErrorf("repro cip: --replot needs --out DIR")
	}
	var out []*repro.CIPSensitivityResult
	for _, f := range figs {
		if f.Kind != repro.Misspecified {
			if all {
				continue
			}
			return usageErrorf("repro cip: --sensitivity: figure %s is not a misspecified-prior panel (use 2d or 2h)", f.ID)
		}
		if replot {
			res, err := repro.ReadCIPSensitivity(outDir, f.ID)
			if err != nil {
				return fmt.Errorf("repro cip: --replot: %w", err)
			}
			if _, err := repro.WriteCIPSensitivity(outDir, res); err != nil {
				return fmt.Errorf("repro cip: %w", err)
			}
			out = append(out, res)
			continue
		}
		bar := env.Progress(len(f.L2), "sensitivity "+f.ID+" (float64)")
		res, err := repro.CIPSensitivity(f, repro.CIPSensitivityOptions{Progress: func(done, total int) {
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
			if python != "" || !errors.Is(err, repro.ErrNoHighPrecision) {
				return fmt.Errorf("repro cip: --sensitivity: %w", err)
			}
			if !env.Quiet {
				fmt.Fprintf(env.Stderr, "tracepriv: note: %v; the study has float64 values only\n", err)
			}
		}
		if outDir != "" {
			files, err := repro.WriteCIPSensitivity(outDir, res)
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

func cipSensitivityText(w io.Writer, res []*repro.CIPSensitivityResult) error {
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
