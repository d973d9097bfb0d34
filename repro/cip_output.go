// The figures and JSON files of the CIP reproductions: the panels of
// Figure 2, the sensitivity study and the comparison of mechanisms.

package repro

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// CIPFigureReport is a computed panel as "repro cip" records it
// (DIR/fig2X.json): the result, the l_eff band shaded on its chart, and
// the files written.
type CIPFigureReport struct {
	*CIPFigureResult
	Band  *LEffBand `json:"leff_band,omitempty"`
	Files []string  `json:"files,omitempty"`
}

// WriteCIPFigure draws the panel (DIR/fig2X.svg, .png) with its l_eff
// band shaded, as the paper does, and writes DIR/fig2X.json, recording the
// paths in fo.Files.
func WriteCIPFigure(dir string, fo *CIPFigureReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, "fig"+fo.Figure)
	series := func(get func(CIPFigurePoint) *float64) plotter.XYs {
		var xy plotter.XYs
		for _, p := range fo.Points {
			if v := get(p); v != nil {
				xy = append(xy, plotter.XY{X: p.LEff, Y: *v})
			}
		}
		return xy
	}
	var lines []viz.Line
	add := func(label string, dashed bool, get func(CIPFigurePoint) *float64) {
		if xy := series(get); len(xy) > 0 {
			lines = append(lines, viz.Line{Label: label, XY: xy, Dashed: dashed, Points: true})
		}
	}
	add("SDP (paper)", false, func(p CIPFigurePoint) *float64 { return p.SDP })
	add("Ind. Unif.", false, func(p CIPFigurePoint) *float64 { return p.IndUniform })
	if !strings.HasPrefix(fo.Secret, "all") { // equal to uniform there
		add("Ind. Conc.", false, func(p CIPFigurePoint) *float64 { return p.IndConcentrated })
	}
	add("SDP_A exact solve (no stab. factor)", true, func(p CIPFigurePoint) *float64 { return p.SDPExact })
	add("Good prior", false, func(p CIPFigurePoint) *float64 { return p.GoodPrior })
	add("Over corr. prior (adversary 0.5 l)", false, func(p CIPFigurePoint) *float64 { return p.OverCorr })
	add("Under corr. prior (adversary 1.5 l)", false, func(p CIPFigurePoint) *float64 { return p.UnderCorr })
	add("optimal (tracepriv)", true, func(p CIPFigurePoint) *float64 { return p.Optimal })
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
	files, err := saveFigure(p, base, 0, 0)
	if err != nil {
		return err
	}
	fo.Files = append(fo.Files, files...)
	fo.Files = append(fo.Files, base+".json")
	return atomicfile.WriteJSON(base+".json", fo)
}

// ReadCIPFigure reads the panel id ("2a") that WriteCIPFigure recorded in
// dir, without its list of files, to draw it again.
func ReadCIPFigure(dir, id string) (*CIPFigureReport, error) {
	b, err := os.ReadFile(filepath.Join(dir, "fig"+id+".json"))
	if err != nil {
		return nil, err
	}
	var fo CIPFigureReport
	if err := json.Unmarshal(b, &fo); err != nil {
		return nil, fmt.Errorf("fig%s.json: %w", id, err)
	}
	fo.Files = nil
	return &fo, nil
}

// sensitivityZeroAt is where nugget 0 sits on the chart's log10 axis.
const sensitivityZeroAt = -12

func nuggetX(nu float64) float64 {
	if nu == 0 {
		return sensitivityZeroAt
	}
	return math.Log10(nu)
}

// WriteCIPSensitivity writes DIR/fig2X-sensitivity.json and, per l_eff,
// a chart of the posterior 2-sigma against the nugget; it returns the
// paths written, the JSON file last.
func WriteCIPSensitivity(dir string, res *CIPSensitivityResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, "fig"+res.Figure+"-sensitivity")
	var ticks []plot.Tick
	for _, nu := range res.Nuggets {
		ticks = append(ticks, plot.Tick{Value: nuggetX(nu), Label: strconv.FormatFloat(nu, 'g', -1, 64)})
	}
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
			if d.Name == DesignClosedForm {
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
			XTicks:       ticks,
			LegendBottom: true,
		})
		if err != nil {
			return nil, err
		}
		fs, err := saveFigure(pl, fmt.Sprintf("%s-leff%.3g", base, p.LEff), 20*vg.Centimeter, 15*vg.Centimeter)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if err := atomicfile.WriteJSON(base+".json", res); err != nil {
		return nil, err
	}
	return append(files, base+".json"), nil
}

// ReadCIPSensitivity reads the study of panel id ("2d") that
// WriteCIPSensitivity recorded in dir, to draw it again.
func ReadCIPSensitivity(dir, id string) (*CIPSensitivityResult, error) {
	name := filepath.Join(dir, "fig"+id+"-sensitivity.json")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var res CIPSensitivityResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &res, nil
}

// CIPCompareReport is the JSON of "repro cip-compare" (DIR/compare.json).
type CIPCompareReport struct {
	Randomness string       `json:"randomness"`
	Prior      *prior.Prior `json:"geolife_prior"`
	Windows    int          `json:"geolife_windows"`
	// Data names the traces the windows come from ("GeoLife" or the
	// bundled synthetic sample); every window setting's name starts with it.
	Data    string          `json:"data"`
	Rows    []CIPCompareRow `json:"rows"`
	Seconds float64         `json:"seconds"`
	Files   []string        `json:"files,omitempty"`
}

// CIPTraceSettings cuts traces into fitting windows (as prior.Fit cuts
// them) and returns n of them, evenly spread, as settings named after data
// (where the traces come from) with every point a secret under the prior pr: the common noise is what the optimal
// design needs for eps at (lambda, radius metres), and the adversary is
// the one of pr's public class (ClassAdversary).
func CIPTraceSettings(data string, traces []*trace.Trace, pr *prior.Prior, n int, eps, lambda, radius float64) ([]CIPCompareSetting, error) {
	if n <= 0 {
		return nil, nil
	}
	ws, _, err := prior.Windows(traces, prior.PaperOptions{Kernel: gp.KernelRBF}) // the paper's 5-minute windows
	if err != nil {
		return nil, err
	}
	if len(ws) < n {
		return nil, fmt.Errorf("the real traces have %d windows, asked for %d (--windows)", len(ws), n)
	}
	if err := pr.Validate(); err != nil {
		return nil, fmt.Errorf("prior: %w", err)
	}
	adv := ClassAdversary(pr)
	var out []CIPCompareSetting
	for j := range n {
		w := ws[j*len(ws)/n]
		truth := attack.Planar{East: w.East, North: w.North}
		from := ""
		if name := traces[w.Trace].Name; name != "" {
			from = name + ", "
		}
		out = append(out, CIPCompareSetting{
			Name:  fmt.Sprintf("%s %s window %d (%s%d points)", data, traces[w.Trace].UID, j+1, from, len(w.T)),
			Times: w.T, Prior: pr, Secrets: cip.EveryPoint(len(w.T)), Lambda: lambda, R: radius,
			Truth: &truth, TargetEpsilon: eps, Adversary: adv,
		})
	}
	return out, nil
}

// WriteCIPCompare writes DIR/compare.json and three plots: epsilon against
// l_eff on the paper settings (basic secret, all basic secrets) and the
// attack RMSE per window of real (or synthetic) traces. leffs are the l_eff of the paper
// settings, as given to CIPPaperSettings.
func WriteCIPCompare(dir string, out *CIPCompareReport, leffs []float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mechs := []string{MechOptimal, MechPaperSDPA, MechPaperMultiple, MechIndependent, MechConcentrated, MechPlanarLaplace}
	plotBy := func(name, title, xl, yl string, logY bool, keep func(CIPCompareRow) (x, y float64, ok bool), extra ...viz.Line) error {
		var lines []viz.Line
		for _, m := range mechs {
			var xy plotter.XYs
			for _, r := range out.Rows {
				if r.Mechanism != m {
					continue
				}
				if x, y, ok := keep(r); ok && !math.IsInf(y, 0) && (!logY || y > 0) {
					xy = append(xy, plotter.XY{X: x, Y: y})
				}
			}
			if len(xy) > 0 {
				lines = append(lines, viz.Line{Label: m, XY: xy, Points: true, Dashed: m == MechOptimal})
			}
		}
		if len(lines) == 0 {
			return nil
		}
		lines = append(lines, extra...)
		p, err := viz.Chart(lines, viz.ChartOptions{Title: title, XLabel: xl, YLabel: yl, LogY: logY})
		if err != nil {
			return err
		}
		files, err := saveFigure(p, filepath.Join(dir, name), 0, 0)
		out.Files = append(out.Files, files...)
		return err
	}
	leffOf := func(setting string) (float64, bool) {
		for _, l := range leffs {
			if strings.Contains(setting, fmt.Sprintf("l_eff %.3g,", l)) {
				return l, true
			}
		}
		return 0, false
	}
	for _, part := range []struct{ name, tag, title string }{
		{"paper_basic_epsilon", "basic {24}", "basic secret {24}, total noise 1: epsilon (lambda 2, r = 1 sd)"},
		{"paper_all_epsilon", "all basic", "all 50 basic secrets, Multiple Secrets' noise: worst epsilon"},
	} {
		err := plotBy(part.name, part.title, "prior dependence l_eff (samples)", "epsilon (lower = more private)", true,
			func(r CIPCompareRow) (float64, float64, bool) {
				l, ok := leffOf(r.Setting)
				if !ok || !strings.Contains(r.Setting, part.tag) || r.Epsilon == nil {
					return 0, 0, false
				}
				return l, float64(*r.Epsilon), true
			})
		if err != nil {
			return err
		}
	}
	// Window numbers in setting order, and the release read as it is: the
	// mean over the window's mechanisms of their release RMSE (equal in
	// expectation, sqrt(2 MSE / n) with every point a secret).
	win := map[string]float64{}
	var release plotter.XYs
	for _, r := range out.Rows {
		if out.Data == "" || !strings.HasPrefix(r.Setting, out.Data+" ") {
			continue
		}
		if _, ok := win[r.Setting]; !ok {
			win[r.Setting] = float64(len(win) + 1)
			release = append(release, plotter.XY{X: win[r.Setting]})
		}
	}
	for i := range release {
		k := 0
		for _, r := range out.Rows {
			if win[r.Setting] == release[i].X {
				release[i].Y += r.ReleaseRMSE
				k++
			}
		}
		release[i].Y /= float64(k)
	}
	err := plotBy("geolife_attack", out.Data+" windows, every point a secret: GP reconstruction RMSE at equal MSE", "window", "RMSE at the secrets (m, higher = more private)", false,
		func(r CIPCompareRow) (float64, float64, bool) {
			x, ok := win[r.Setting]
			return x, r.ReconstructionRMSE, ok
		}, viz.Line{Label: "release read as is", XY: release, Dashed: true})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "compare.json")
	out.Files = append(out.Files, path)
	return atomicfile.WriteJSON(path, out)
}
