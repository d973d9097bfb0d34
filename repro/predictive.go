// The figures of the predictive mechanism's case study (Chatzikokolakis,
// Palamidessi and Stronati, §V), computed by PredictiveCaseStudy (predictive_casestudy.go).

package repro

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/trace"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/viz"
)

// Predictive is the result of the case study as `tracepriv repro
// predictive` prints it with --json and writes it to results.json.
type Predictive struct {
	*PredictiveCaseStudyResult
	Randomness string `json:"randomness"` // "crypto" or "seeded:N"
	Files      int    `json:"files"`
	trace.InputSummary
}

// WritePredictive writes results.json and the figures of out to dir, and
// returns the paths written.
func WritePredictive(dir string, out Predictive) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "results.json")
	if err := atomicfile.WriteJSON(path, out); err != nil {
		return nil, err
	}
	figs, err := WritePredictiveFigures(dir, out.PredictiveCaseStudyResult)
	return append([]string{path}, figs...), err
}

// WritePredictiveFigures draws the paper's Figs 8-9 from res into dir:
// fixed_rate and fixed_utility (SVG and PNG), one per budget manager.
// It returns the paths written.
func WritePredictiveFigures(dir string, res *PredictiveCaseStudyResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, m := range []struct {
		name string
		rows []PredictiveRow
	}{{"fixed_rate", res.FixedRate}, {"fixed_utility", res.FixedUtility}} {
		fs, err := plotPredictive(filepath.Join(dir, m.name), strings.ReplaceAll(m.name, "_", " "), m.rows)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	return files, nil
}

// plotPredictive draws the three panels of the paper's Figs 8-9: general
// statistics, errors, and budget rate, against the jump probability, side
// by side. viz.Chart keeps each legend off the curves.
func plotPredictive(base, title string, rows []PredictiveRow) ([]string, error) {
	p := func(r PredictiveRow) float64 { return r.P }
	line := func(label string, f func(PredictiveRow) float64) viz.Line {
		return viz.Line{Label: label, XY: xyOf(rows, p, f), Points: true}
	}
	panel := func(ptitle, ylabel string, lines []viz.Line) (*plot.Plot, error) {
		return viz.Chart(lines, viz.ChartOptions{
			Title: title + ": " + ptitle, XLabel: "jump probability p", YLabel: ylabel,
			LegendAuto: true,
		})
	}
	stats, err := panel("statistics", "fraction", []viz.Line{
		line("PM prediction rate", func(r PredictiveRow) float64 { return r.PM.PredictionRate }),
		line("PM test budget", func(r PredictiveRow) float64 { return r.PM.TestShare }),
		line("PM+skip prediction rate", func(r PredictiveRow) float64 { return r.PMSkip.PredictionRate }),
		line("PM+skip test budget", func(r PredictiveRow) float64 { return r.PMSkip.TestShare }),
		line("PM+skip skipped points", func(r PredictiveRow) float64 { return r.PMSkip.Skipped }),
	})
	if err != nil {
		return nil, err
	}
	errs, err := panel("error", "metres", []viz.Line{
		line("IM E[d]", func(r PredictiveRow) float64 { return r.IM.MeanError }),
		line("IM α(0.9)", func(r PredictiveRow) float64 { return r.IM.Alpha90 }),
		line("PM E[d]", func(r PredictiveRow) float64 { return r.PM.MeanError }),
		line("PM α(0.9)", func(r PredictiveRow) float64 { return r.PM.Alpha90 }),
		line("PM+skip E[d]", func(r PredictiveRow) float64 { return r.PMSkip.MeanError }),
		line("PM+skip α(0.9)", func(r PredictiveRow) float64 { return r.PMSkip.Alpha90 }),
	})
	if err != nil {
		return nil, err
	}
	rate, err := panel("budget rate", "% of ε per query", []viz.Line{
		line("IM", func(r PredictiveRow) float64 { return 100 * r.IM.Rate }),
		line("PM", func(r PredictiveRow) float64 { return 100 * r.PM.Rate }),
		line("PM+skip", func(r PredictiveRow) float64 { return 100 * r.PMSkip.Rate }),
	})
	if err != nil {
		return nil, err
	}
	return saveTiles([][]*plot.Plot{{stats, errs, rate}}, base, 42*vg.Centimeter, 13*vg.Centimeter)
}
