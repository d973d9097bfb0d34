// Chapters 5 and 6 of Guerra-Balboa's thesis: the closed-form RAD curves
// and black-box bounds of Chapter 5, the BDP factors of Chapter 6 and its
// utility experiment on synthetic data.

package repro

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot/plotter"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/bdp"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/risk"
	"github.com/tracepriv/tracepriv/viz"
)

// ThesisResult is the JSON written by "repro thesis": the closed-form
// curves and tables of Chapters 5 and 6 of Guerra-Balboa's thesis, and the
// Chapter 6 utility experiment on synthetic data.
type ThesisResult struct {
	Version    int    `json:"version"`
	Randomness string `json:"randomness"`
	// Fig51: exact RAD (Theorem 5.3) of GRR, SS, OUE, Laplace (A.18) and
	// Gaussian (A.12) against Theorem 5.2, m = 11, uniform prior. The
	// Gaussian σ for an ε is the analytic-Gaussian σ at δ = 1e-5 (the thesis
	// does not say how it maps ε to σ).
	Fig51 []Fig51Row `json:"fig5_1"`
	// Fig52: Laplace, m = 10: the 95 % error bound ln(20)/ε when ε is
	// calibrated so that RAD ≤ γ (A.18), and so that Hayes et al.'s ReRo
	// bound ≤ 1/m + γ (the thesis does not say how it matches "the same
	// risk"; here ReRo's chance baseline 1/m is added to γ).
	Fig52 []Fig52Row `json:"fig5_2"`
	// Fig53: black-box bounds for U[10], δ = 1e-5.
	Fig53 []Fig53Row `json:"fig5_3"`
	// DPSGD: full-batch DP-SGD, m = 8, T = 100, δ = 1e-5 (Figs 5.4/5.5
	// bounds); μ from the GDP δ(ε) curve.
	DPSGD []DPSGDRow `json:"dpsgd"`
	// Calibration: ε or σ for an accepted risk (Examples 5.4, 5.17, A.18).
	Calibration []CalibrationRow `json:"calibration"`
	// Fig62: the Gaussian factor h(m, ρ) against the general bound m.
	Fig62 []Fig62Row `json:"fig6_2"`
	// Fig66 and Fig67: the utility experiment (Sec. 6.5) on SyntheticIQ and
	// on a synthetic chain with the Electricity 80 kWh transition matrix.
	Fig66 []bdp.ExperimentRow `json:"fig6_6"`
	Fig67 []bdp.ExperimentRow `json:"fig6_7"`
	// Files are the figures and the JSON file WriteThesis wrote.
	Files []string `json:"files"`
}

// Fig51Row is one ε of Figure 5.1.
type Fig51Row struct {
	Epsilon  float64 `json:"epsilon"`
	GRR      float64 `json:"grr"`
	SS       float64 `json:"ss"`
	OUE      float64 `json:"oue"`
	Laplace  float64 `json:"laplace"`
	Gaussian float64 `json:"gaussian"`
	Sigma    float64 `json:"gaussian_sigma"`
	Thm52    float64 `json:"thm5_2"`
}

// Fig52Row is one accepted risk of Figure 5.2.
type Fig52Row struct {
	Risk         float64 `json:"risk"`
	EpsilonRAD   float64 `json:"epsilon_rad"`
	AlphaRAD     float64 `json:"alpha_rad"`
	EpsilonHayes float64 `json:"epsilon_hayes"`
	AlphaHayes   float64 `json:"alpha_hayes"`
}

// Fig53Row is one ε of Figure 5.3.
type Fig53Row struct {
	Epsilon float64 `json:"epsilon"`
	Prop513 float64 `json:"prop5_13"`
	Thm515  float64 `json:"thm5_15"`
	OUE     float64 `json:"oue"`
}

// DPSGDRow is one ε of the DP-SGD bounds (Figs 5.4 and 5.5).
type DPSGDRow struct {
	Epsilon float64 `json:"epsilon"`
	Mu      float64 `json:"mu"`
	Sigma   float64 `json:"sigma"`
	Thm52   float64 `json:"thm5_2"`
	Thm511  float64 `json:"thm5_11"`
	Hayes   float64 `json:"hayes_rero"`
}

// CalibrationRow is one calibration example: the parameter Param of a
// mechanism that meets an accepted risk.
type CalibrationRow struct {
	Mechanism string  `json:"mechanism"`
	M         int     `json:"m"`
	Risk      float64 `json:"risk"`
	Value     float64 `json:"value"`
	Param     string  `json:"param"`
}

// Fig62Row is one (m, ρ) of Figure 6.2.
type Fig62Row struct {
	M   int     `json:"m"`
	Rho float64 `json:"rho"`
	H   float64 `json:"h"`
}

// ThesisOptions tunes Thesis.
type ThesisOptions struct {
	// Reps is the number of repetitions per point of the utility
	// experiment (the thesis uses 1000).
	Reps int
	// Src draws the synthetic data and the releases (nil: crypto/rand).
	Src noise.Source
	// Progress, if set, is called after each of the two utility
	// experiments.
	Progress func(done, total int)
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

// Thesis computes the Chapter 5 and 6 reproduction; WriteThesis draws and
// records it.
func Thesis(opt ThesisOptions) (*ThesisResult, error) {
	if err := param.AtLeastInt("reps", opt.Reps, 1); err != nil {
		return nil, err
	}
	src := opt.Src
	if src == nil {
		src = noise.Secure()
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	res := &ThesisResult{Version: 1, Randomness: noise.Describe(src)}
	var err error
	check := func(v float64, e error) float64 {
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	for _, eps := range grid(0.1, 14, 0.1) {
		sigma := check(accountant.GaussianSigma(eps, 1e-5, 1))
		res.Fig51 = append(res.Fig51, Fig51Row{
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
		res.Fig52 = append(res.Fig52, Fig52Row{Risk: g, EpsilonRAD: er, AlphaRAD: math.Log(20) / er, EpsilonHayes: eh, AlphaHayes: math.Log(20) / eh})
	}
	for _, eps := range grid(0.1, 8, 0.1) {
		b, _, e := risk.EpsDeltaPrior(eps, 1e-5, risk.Uniform(10))
		res.Fig53 = append(res.Fig53, Fig53Row{
			Epsilon: eps, Prop513: check(risk.EpsDeltaBallBound(eps, 1e-5, 0.1, 0.1, 0.1)),
			Thm515: check(b, e), OUE: check(risk.OUE(eps, 10)),
		})
	}
	for _, eps := range []float64{0.5, 1, 2, 4, 8} {
		s1 := check(accountant.GaussianSigma(eps, 1e-5, 1))
		mu := 1 / s1
		sigma := math.Sqrt(100) / mu
		res.DPSGD = append(res.DPSGD, DPSGDRow{
			Epsilon: eps, Mu: mu, Sigma: sigma,
			Thm52: check(risk.DPSGDTV(sigma, 100, 8)), Thm511: check(risk.DPSGD(sigma, 100, 8)),
			Hayes: risk.HayesReRo(accountant.GaussianTradeOff{Mu: mu}, 1.0/8),
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
		res.Calibration = append(res.Calibration, CalibrationRow{Mechanism: c.mech, M: c.m, Risk: c.risk, Param: c.param, Value: check(c.f(c.risk, c.m))})
	}
	for m := 2; m <= 10; m++ {
		hi := 0.99
		if m > 2 {
			hi = math.Min(0.99, 0.99/float64(m-2))
		}
		for _, rho := range grid(0, hi, hi/50) {
			h := check(bdp.Gaussian{M: m, Rho: rho}.Factor())
			res.Fig62 = append(res.Fig62, Fig62Row{M: m, Rho: rho, H: h})
		}
	}
	if err != nil {
		return nil, err
	}
	epsGrid := []float64{0.5, 1, 2, 5, 10, 15, 20}
	iq, err := bdp.GaussianBlocks(10000, []float64{100, 100}, bdp.Equicorrelated(2, 225, 0.45), src)
	if err != nil {
		return nil, err
	}
	res.Fig66, err = bdp.Experiment{
		Data: iq, Query: bdp.ClippedSum{Lo: 40, Hi: 160}, Epsilons: epsGrid,
		Models: []bdp.Calibrator{bdp.Groups{M: 2}, bdp.Gaussian{M: 2, Rho: 0.45}},
		Reps:   opt.Reps, Src: src,
	}.Run()
	if err != nil {
		return nil, err
	}
	progress(1, 2)
	p80 := [][]float64{{0.818, 0.182}, {0.371, 0.629}}
	mk, err := bdp.NewMarkov(p80, 1e-9)
	if err != nil {
		return nil, err
	}
	chain, err := bdp.MarkovChain(p80, 731, src)
	if err != nil {
		return nil, err
	}
	data := make([]float64, len(chain))
	for i, s := range chain {
		data[i] = float64(s)
	}
	res.Fig67, err = bdp.Experiment{
		Data: data, Query: bdp.ClippedSum{Lo: 0, Hi: 1}, Epsilons: epsGrid,
		Models: []bdp.Calibrator{bdp.Groups{M: len(data)}, mk}, Reps: opt.Reps, Src: src,
	}.Run()
	if err != nil {
		return nil, err
	}
	progress(2, 2)
	return res, nil
}

// WriteThesis draws the figures of res (fig5_1 … fig6_7, SVG and PNG) and
// writes results.json to dir, recording every path in res.Files.
func WriteThesis(dir string, res *ThesisResult) error {
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
		files, err := saveFigure(p, filepath.Join(dir, name), 0, 0)
		res.Files = append(res.Files, files...)
		return err
	}
	xy51 := func(f func(Fig51Row) float64) plotter.XYs {
		return xyOf(res.Fig51, func(r Fig51Row) float64 { return r.Epsilon }, f)
	}
	if err := linePlot("fig5_1", "Fig 5.1: 0-RAD, m = 11, uniform prior", "epsilon", "RAD", false, []series{
		{"Thm 5.2", xy51(func(r Fig51Row) float64 { return r.Thm52 })},
		{"GRR", xy51(func(r Fig51Row) float64 { return r.GRR })},
		{"SS", xy51(func(r Fig51Row) float64 { return r.SS })},
		{"OUE", xy51(func(r Fig51Row) float64 { return r.OUE })},
		{"Laplace (A.18)", xy51(func(r Fig51Row) float64 { return r.Laplace })},
		{"Gaussian (A.12), delta 1e-5", xy51(func(r Fig51Row) float64 { return r.Gaussian })},
	}, nil); err != nil {
		return err
	}
	xy52 := func(f func(Fig52Row) float64) plotter.XYs {
		return xyOf(res.Fig52, func(r Fig52Row) float64 { return r.Risk }, f)
	}
	if err := linePlot("fig5_2", "Fig 5.2: Laplace 95% error bound after calibration, m = 10", "accepted risk (RAD; ReRo - 1/m)", "alpha = ln(20)/epsilon", true, []series{
		{"RAD calibration (A.18)", xy52(func(r Fig52Row) float64 { return r.AlphaRAD })},
		{"ReRo calibration (Hayes)", xy52(func(r Fig52Row) float64 { return r.AlphaHayes })},
	}, nil); err != nil {
		return err
	}
	xy53 := func(f func(Fig53Row) float64) plotter.XYs {
		return xyOf(res.Fig53, func(r Fig53Row) float64 { return r.Epsilon }, f)
	}
	if err := linePlot("fig5_3", "Fig 5.3: black-box 0-RAD bounds, U[10], delta 1e-5", "epsilon", "RAD", false, []series{
		{"Prop 5.13", xy53(func(r Fig53Row) float64 { return r.Prop513 })},
		{"Thm 5.15 = Cor 5.16", xy53(func(r Fig53Row) float64 { return r.Thm515 })},
		{"OUE (Thm 5.3)", xy53(func(r Fig53Row) float64 { return r.OUE })},
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
	return atomicfile.WriteJSON(path, res)
}
