package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/plotter"

	"github.com/tracepriv/tracepriv/bdp"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/risk"
	"github.com/tracepriv/tracepriv/viz"
)

func init() { registerRepro(reproThesisCmd) }

// thesisRepro is the JSON written by "repro thesis": the closed-form curves
// and tables of Chapters 5 and 6 of Guerra-Balboa's thesis, and the Chapter 6
// utility experiment on synthetic data.
type thesisRepro struct {
	Version    int    `json:"version"`
	Randomness string `json:"randomness"`
	// Fig51: exact RAD (Theorem 5.3) of GRR, SS, OUE, Laplace (A.18) and
	// Gaussian (A.12) against Theorem 5.2, m = 11, uniform prior. The
	// Gaussian σ for an ε is the analytic-Gaussian σ at δ = 1e-5 (the thesis
	// does not say how it maps ε to σ).
	Fig51 []fig51Row `json:"fig5_1"`
	// Fig52: Laplace, m = 10: the 95 % error bound ln(20)/ε when ε is
	// calibrated so that RAD ≤ γ (A.18), and so that Hayes et al.'s ReRo
	// bound ≤ 1/m + γ (the thesis does not say how it matches "the same
	// risk"; here ReRo's chance baseline 1/m is added to γ).
	Fig52 []fig52Row `json:"fig5_2"`
	// Fig53: black-box bounds for U[10], δ = 1e-5.
	Fig53 []fig53Row `json:"fig5_3"`
	// DPSGD: full-batch DP-SGD, m = 8, T = 100, δ = 1e-5 (Figs 5.4/5.5
	// bounds); μ from the GDP δ(ε) curve.
	DPSGD []dpsgdRow `json:"dpsgd"`
	// Calibration: ε or σ for an accepted risk (Examples 5.4, 5.17, A.18).
	Calibration []calRow `json:"calibration"`
	// Fig62: the Gaussian factor h(m, ρ) against the general bound m.
	Fig62 []fig62Row `json:"fig6_2"`
	// Fig66 and Fig67: the utility experiment (Sec. 6.5) on SyntheticIQ and
	// on a synthetic chain with the Electricity 80 kWh transition matrix.
	Fig66 []bdp.ExperimentRow `json:"fig6_6"`
	Fig67 []bdp.ExperimentRow `json:"fig6_7"`
	Files []string            `json:"files"`
}

type fig51Row struct {
	Epsilon  float64 `json:"epsilon"`
	GRR      float64 `json:"grr"`
	SS       float64 `json:"ss"`
	OUE      float64 `json:"oue"`
	Laplace  float64 `json:"laplace"`
	Gaussian float64 `json:"gaussian"`
	Sigma    float64 `json:"gaussian_sigma"`
	Thm52    float64 `json:"thm5_2"`
}

type fig52Row struct {
	Risk         float64 `json:"risk"`
	EpsilonRAD   float64 `json:"epsilon_rad"`
	AlphaRAD     float64 `json:"alpha_rad"`
	EpsilonHayes float64 `json:"epsilon_hayes"`
	AlphaHayes   float64 `json:"alpha_hayes"`
}

type fig53Row struct {
	Epsilon float64 `json:"epsilon"`
	Prop513 float64 `json:"prop5_13"`
	Thm515  float64 `json:"thm5_15"`
	OUE     float64 `json:"oue"`
}

type dpsgdRow struct {
	Epsilon float64 `json:"epsilon"`
	Mu      float64 `json:"mu"`
	Sigma   float64 `json:"sigma"`
	Thm52   float64 `json:"thm5_2"`
	Thm511  float64 `json:"thm5_11"`
	Hayes   float64 `json:"hayes_rero"`
}

type calRow struct {
	Mechanism string  `json:"mechanism"`
	M         int     `json:"m"`
	Risk      float64 `json:"risk"`
	Value     float64 `json:"value"`
	Param     string  `json:"param"`
}

type fig62Row struct {
	M   int     `json:"m"`
	Rho float64 `json:"rho"`
	H   float64 `json:"h"`
}

func reproThesisCmd(env *cli.Env) *cobra.Command {
	var (
		out, chapter string
		reps, draws  int
		victims      int
	)
	c := &cobra.Command{
		Use:   "thesis [--chapter 3|5,6] [--out DIR] [--reps N]",
		Short: "Reproduce the findings of Chapters 3, 5 and 6 of Guerra-Balboa's thesis",
		Long: `Compute the closed-form RAD curves and black-box bounds of Chapter 5 (Figs 5.1,
5.2, 5.3, the DP-SGD bounds, calibration examples) and the BDP factors and the
utility experiment of Chapter 6 (Figs 6.2, 6.6, 6.7 on synthetic data, as the
real datasets are not bundled), and write results.json and SVG and PNG plots to --out.

--chapter 3 reproduces Sec. 3.4.1.4 instead: Proposition 3.5 (a "noisy counts
of present sequences" release shows whether the one person holding a sequence
is in the data), Proposition 3.6 (the support auditor flags that design and
finds nothing on the prefix and n-gram trees in its budget) and the Example 3.7
attack (known home and work plus a flawed release reveal the rest of the path;
the DP trees stop it), writing results-ch3.json and its figures.`,
		Example: `  tracepriv repro thesis --out thesis-output --reps 2 --seed 1
  tracepriv repro thesis --out thesis-output --json
  tracepriv repro thesis --chapter 3 --out thesis-output --draws 200 --victims 20 --seed 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if reps < 1 {
				return fmt.Errorf("--reps must be positive, got %d", reps)
			}
			switch chapter {
			case "3":
				if draws < 1 || victims < 1 {
					return fmt.Errorf("--draws and --victims must be positive, got %d and %d", draws, victims)
				}
				o, err := reproChapter3(env, out, draws, victims)
				if err != nil {
					return fmt.Errorf("repro thesis --chapter 3: %w", err)
				}
				return env.Emit(o, func(w io.Writer) error { return writeChapter3(w, o) })
			case "5,6", "5", "6":
			default:
				return fmt.Errorf("--chapter %q: want 3, or 5,6 (Chapters 5 and 6 are reproduced together)", chapter)
			}
			src := env.Source()
			res, err := reproThesis(src, reps, env)
			if err != nil {
				return err
			}
			res.Randomness = noise.Describe(src)
			if err := writeThesisOutputs(out, &res); err != nil {
				return err
			}
			return env.Emit(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Fig 5.1 (m = 11):\n  eps     GRR      SS       OUE      Laplace  Gaussian Thm5.2\n")
				for _, r := range res.Fig51 {
					if isOneOf(r.Epsilon, 0.5, 1, 2, 4, 8) {
						fmt.Fprintf(w, "  %-6g  %.5f  %.5f  %.5f  %.5f  %.5f  %.5f\n", r.Epsilon, r.GRR, r.SS, r.OUE, r.Laplace, r.Gaussian, r.Thm52)
					}
				}
				fmt.Fprintf(w, "Fig 5.3 (U[10], delta 1e-5):\n")
				for _, r := range res.Fig53 {
					if isOneOf(r.Epsilon, 0.5, 1, 2, 4) {
						fmt.Fprintf(w, "  eps %-4g Prop 5.13 %.5f  Thm 5.15 %.5f  OUE %.5f\n", r.Epsilon, r.Prop513, r.Thm515, r.OUE)
					}
				}
				fmt.Fprintf(w, "wrote %s\n", strings.Join(res.Files, ", "))
				return nil
			})
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "repro-thesis", "directory for results.json and the plots")
	c.Flags().StringVar(&chapter, "chapter", "5,6", "3 (trajectory databases) or 5,6 (risk and Bayesian DP)")
	c.Flags().IntVar(&draws, "draws", 1000, "chapter 3: releases with and without the victim for Prop. 3.5")
	c.Flags().IntVar(&victims, "victims", 50, "chapter 3: people attacked in the Example 3.7 attack")
	c.Flags().IntVar(&reps, "reps", 1000, "repetitions per point of the utility experiment (the thesis uses 1000)")
	return c
}

func isOneOf(x float64, vs ...float64) bool {
	for _, v := range vs {
		if math.Abs(x-v) < 1e-9 {
			return true
		}
	}
	return false
}

// grid returns lo, lo+step, …, hi, computed from integers to avoid drift.
func grid(lo, hi, step float64) []float64 {
	n := int(math.Round((hi - lo) / step))
	g := make([]float64, n+1)
	for i := range g {
		g[i] = math.Round((lo+float64(i)*step)*1e9) / 1e9
	}
	return g
}

func reproThesis(src noise.Source, reps int, env *cli.Env) (thesisRepro, error) {
	res := thesisRepro{Version: 1}
	var err error
	check := func(v float64, e error) float64 {
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	for _, eps := range grid(0.1, 14, 0.1) {
		sigma := check(risk.GaussianSigma(eps, 1e-5, 1))
		res.Fig51 = append(res.Fig51, fig51Row{
			Epsilon: eps,
			GRR:     check(risk.GRR(eps, 11)), SS: check(risk.SubsetSelection(eps, 11)),
			OUE: check(risk.OUE(eps, 11)), Laplace: check(risk.LaplaceUnitRange(eps, 11)),
			Gaussian: check(risk.GaussianUnitRange(sigma, 11)), Sigma: sigma,
			Thm52: check(risk.EpsDeltaBound(eps, 0, 11)),
		})
	}
	for _, g := range grid(0.01, 0.5, 0.01) {
		er := check(risk.CalibrateLaplace(g, 10))
		eh := check(risk.CalibrateHayesLaplace(0.1+g, 10))
		res.Fig52 = append(res.Fig52, fig52Row{Risk: g, EpsilonRAD: er, AlphaRAD: math.Log(20) / er, EpsilonHayes: eh, AlphaHayes: math.Log(20) / eh})
	}
	for _, eps := range grid(0.1, 8, 0.1) {
		b, _, e := risk.Theorem515(eps, 1e-5, risk.Uniform(10))
		res.Fig53 = append(res.Fig53, fig53Row{
			Epsilon: eps, Prop513: check(risk.Prop513(eps, 1e-5, 0.1, 0.1, 0.1)),
			Thm515: check(b, e), OUE: check(risk.OUE(eps, 10)),
		})
	}
	for _, eps := range []float64{0.5, 1, 2, 4, 8} {
		s1 := check(risk.GaussianSigma(eps, 1e-5, 1))
		mu := 1 / s1
		sigma := math.Sqrt(100) / mu
		res.DPSGD = append(res.DPSGD, dpsgdRow{
			Epsilon: eps, Mu: mu, Sigma: sigma,
			Thm52: check(risk.DPSGDTV(sigma, 100, 8)), Thm511: check(risk.DPSGD(sigma, 100, 8)),
			Hayes: risk.HayesReRo(risk.GDPTradeOff{Mu: mu}, 1.0/8),
		})
	}
	for _, c := range []struct {
		mech  string
		m     int
		risk  float64
		param string
		f     func(float64, int) (float64, error)
	}{
		{"grr", 2, 0.1, "epsilon", risk.CalibrateGRR},
		{"grr", 100, 0.1, "epsilon", risk.CalibrateGRR},
		{"laplace", 10, 0.1, "epsilon", risk.CalibrateLaplace},
		{"laplace", 10, 0.05, "epsilon", risk.CalibrateLaplace},
		{"dpsgd(T=100)", 10, 0.1, "sigma", func(r float64, m int) (float64, error) { return risk.CalibrateDPSGD(r, 100, m) }},
	} {
		res.Calibration = append(res.Calibration, calRow{Mechanism: c.mech, M: c.m, Risk: c.risk, Param: c.param, Value: check(c.f(c.risk, c.m))})
	}
	for m := 2; m <= 10; m++ {
		hi := 0.99
		if m > 2 {
			hi = math.Min(0.99, 0.99/float64(m-2))
		}
		for _, rho := range grid(0, hi, hi/50) {
			h := check(bdp.Gaussian{M: m, Rho: rho}.Factor())
			res.Fig62 = append(res.Fig62, fig62Row{M: m, Rho: rho, H: h})
		}
	}
	if err != nil {
		return res, err
	}
	epsGrid := []float64{0.5, 1, 2, 5, 10, 15, 20}
	bar := env.Progress(2, "utility experiments")
	iq, err := bdp.GaussianBlocks(10000, []float64{100, 100}, bdp.Equicorrelated(2, 225, 0.45), src)
	if err != nil {
		return res, err
	}
	res.Fig66, err = bdp.Experiment{
		Data: iq, Query: bdp.ClippedSum{Lo: 40, Hi: 160}, Epsilons: epsGrid,
		Models: []bdp.Calibrator{bdp.Groups{M: 2}, bdp.Gaussian{M: 2, Rho: 0.45}},
		Reps:   reps, Src: src,
	}.Run()
	if err != nil {
		return res, err
	}
	_ = bar.Add(1)
	p80 := [][]float64{{0.818, 0.182}, {0.371, 0.629}}
	mk, err := bdp.NewMarkov(p80, 1e-9)
	if err != nil {
		return res, err
	}
	chain, err := bdp.MarkovChain(p80, 731, src)
	if err != nil {
		return res, err
	}
	data := make([]float64, len(chain))
	for i, s := range chain {
		data[i] = float64(s)
	}
	res.Fig67, err = bdp.Experiment{
		Data: data, Query: bdp.ClippedSum{Lo: 0, Hi: 1}, Epsilons: epsGrid,
		Models: []bdp.Calibrator{bdp.Groups{M: len(data)}, mk}, Reps: reps, Src: src,
	}.Run()
	_ = bar.Finish()
	return res, err
}

func writeThesisOutputs(dir string, res *thesisRepro) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	type series struct {
		label string
		xy    plotter.XYs
	}
	// Curves are lines; points are measurements drawn unjoined in the
	// colour of the i-th curve they go with. viz.Chart puts the legend
	// where it covers neither.
	linePlot := func(name, title, xl, yl string, logY bool, lines []series, points []series) error {
		var ls []viz.Line
		for _, s := range lines {
			ls = append(ls, viz.Line{Label: s.label, XY: s.xy})
		}
		for i, s := range points {
			ls = append(ls, viz.Line{Label: s.label, XY: s.xy, PointsOnly: true, Color: viz.Color(i)})
		}
		p, err := viz.Chart(ls, viz.ChartOptions{Title: title, XLabel: xl, YLabel: yl, LogY: logY, LegendAuto: true})
		if err != nil {
			return err
		}
		for _, ext := range []string{".svg", ".png"} {
			path := filepath.Join(dir, name+ext)
			if err := viz.Save(p, path, 0, 0); err != nil {
				return err
			}
			res.Files = append(res.Files, path)
		}
		return nil
	}
	xy51 := func(f func(fig51Row) float64) plotter.XYs {
		xy := make(plotter.XYs, len(res.Fig51))
		for i, r := range res.Fig51 {
			xy[i] = plotter.XY{X: r.Epsilon, Y: f(r)}
		}
		return xy
	}
	if err := linePlot("fig5_1", "Fig 5.1: 0-RAD, m = 11, uniform prior", "epsilon", "RAD", false, []series{
		{"Thm 5.2", xy51(func(r fig51Row) float64 { return r.Thm52 })},
		{"GRR", xy51(func(r fig51Row) float64 { return r.GRR })},
		{"SS", xy51(func(r fig51Row) float64 { return r.SS })},
		{"OUE", xy51(func(r fig51Row) float64 { return r.OUE })},
		{"Laplace (A.18)", xy51(func(r fig51Row) float64 { return r.Laplace })},
		{"Gaussian (A.12), delta 1e-5", xy51(func(r fig51Row) float64 { return r.Gaussian })},
	}, nil); err != nil {
		return err
	}
	xy52 := func(f func(fig52Row) float64) plotter.XYs {
		xy := make(plotter.XYs, len(res.Fig52))
		for i, r := range res.Fig52 {
			xy[i] = plotter.XY{X: r.Risk, Y: f(r)}
		}
		return xy
	}
	if err := linePlot("fig5_2", "Fig 5.2: Laplace 95% error bound after calibration, m = 10", "accepted risk (RAD; ReRo - 1/m)", "alpha = ln(20)/epsilon", true, []series{
		{"RAD calibration (A.18)", xy52(func(r fig52Row) float64 { return r.AlphaRAD })},
		{"ReRo calibration (Hayes)", xy52(func(r fig52Row) float64 { return r.AlphaHayes })},
	}, nil); err != nil {
		return err
	}
	xy53 := func(f func(fig53Row) float64) plotter.XYs {
		xy := make(plotter.XYs, len(res.Fig53))
		for i, r := range res.Fig53 {
			xy[i] = plotter.XY{X: r.Epsilon, Y: f(r)}
		}
		return xy
	}
	if err := linePlot("fig5_3", "Fig 5.3: black-box 0-RAD bounds, U[10], delta 1e-5", "epsilon", "RAD", false, []series{
		{"Prop 5.13", xy53(func(r fig53Row) float64 { return r.Prop513 })},
		{"Thm 5.15 = Cor 5.16", xy53(func(r fig53Row) float64 { return r.Thm515 })},
		{"OUE (Thm 5.3)", xy53(func(r fig53Row) float64 { return r.OUE })},
	}, nil); err != nil {
		return err
	}
	var h62 []series
	for m := 2; m <= 10; m += 2 {
		var xy plotter.XYs
		for _, r := range res.Fig62 {
			if r.M == m {
				xy = append(xy, plotter.XY{X: r.Rho, Y: r.H})
			}
		}
		h62 = append(h62, series{fmt.Sprintf("h(m=%d)", m), xy})
	}
	if err := linePlot("fig6_2", "Fig 6.2: Gaussian factor h(m, rho) (general bound: h = m)", "rho", "h = alpha_BDP / alpha_DP", true, h62, nil); err != nil {
		return err
	}
	expPlot := func(name, title string, rows []bdp.ExperimentRow) error {
		byModel := map[string]*[2]plotter.XYs{}
		var order []string
		for _, r := range rows {
			if r.Skipped != "" {
				continue
			}
			s, ok := byModel[r.Model]
			if !ok {
				s = &[2]plotter.XYs{}
				byModel[r.Model] = s
				order = append(order, r.Model)
			}
			s[0] = append(s[0], plotter.XY{X: r.Epsilon, Y: r.AlphaTheory})
			s[1] = append(s[1], plotter.XY{X: r.Epsilon, Y: r.AlphaEmpirical})
		}
		var lines, pts []series
		for _, m := range order {
			lines = append(lines, series{m + " (theory)", byModel[m][0]})
			pts = append(pts, series{m + " (empirical 95%)", byModel[m][1]})
		}
		return linePlot(name, title, "epsilon (BDP)", "alpha at beta = 0.05", true, lines, pts)
	}
	if err := expPlot("fig6_6", "Fig 6.6 analogue: SyntheticIQ (m = 2, rho = 0.45)", res.Fig66); err != nil {
		return err
	}
	if err := expPlot("fig6_7", "Fig 6.7 analogue: Markov chain (Electricity 80 kWh P), n = 731", res.Fig67); err != nil {
		return err
	}
	path := filepath.Join(dir, "results.json")
	res.Files = append(res.Files, path)
	var b strings.Builder
	if err := (&cli.Env{JSON: true, Stdout: &b}).Emit(res, nil); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, []byte(b.String()), 0o644)
}
