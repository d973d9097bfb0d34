// Chapter 3 of Guerra-Balboa's thesis and the utility of the trajectory-
// database releases (trajdb_ch3.go and trajdb_utility.go compute them with
// package trajdb's mechanisms); this file draws and records them.

package repro

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/trajdb"
	"github.com/tracepriv/tracepriv/viz"
)

// Chapter3Report is the JSON of "repro thesis --chapter 3".
type Chapter3Report struct {
	*Chapter3Result
	Files []string `json:"files"`
}

// Chapter3 runs ReproduceChapter3 and writes its figures (ch3-prop3_5,
// ch3-qi-attack) and results-ch3.json to dir, together.
func Chapter3(dir string, opt Chapter3Options) (*Chapter3Report, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res, err := ReproduceChapter3(opt)
	if err != nil {
		return nil, err
	}
	out := &Chapter3Report{Chapter3Result: res}
	// Proposition 3.5: how often each mechanism releases the victim's
	// sequence with and without the victim.
	var names []string
	with, without := viz.BarSeries{Label: "with the victim"}, viz.BarSeries{Label: "without the victim"}
	for _, s := range res.Prop35 {
		names = append(names, string(s.Mechanism))
		with.Values = append(with.Values, s.ProbWith)
		without.Values = append(without.Values, s.ProbWithout)
	}
	p35, err := viz.Bars(names, []viz.BarSeries{with, without}, viz.BarOptions{
		Title:  fmt.Sprintf("Prop. 3.5: releases containing the victim's sequence %v (epsilon %g)", res.Database.VictimSeq, res.Epsilon),
		YLabel: "share of releases", YMax: 1,
	})
	if err != nil {
		return nil, err
	}
	// The quasi-identifier attack's advantage against epsilon, beside what
	// epsilon-DP allows.
	byMech := map[trajdb.MechanismName]plotter.XYs{}
	var bound plotter.XYs
	for _, r := range res.QIAttack {
		byMech[r.Mechanism] = append(byMech[r.Mechanism], plotter.XY{X: r.Epsilon, Y: r.All.Advantage})
		if len(byMech) == 1 {
			bound = append(bound, plotter.XY{X: r.Epsilon, Y: r.AdvantageBoundPriorFree})
		}
	}
	mechs := make([]trajdb.MechanismName, 0, len(byMech))
	for m := range byMech {
		mechs = append(mechs, m)
	}
	slices.Sort(mechs)
	lines := []viz.Line{{Label: "epsilon-DP bound (e^ε − 1)/(e^ε + 1)", XY: bound, Dashed: true}}
	for _, m := range mechs {
		lines = append(lines, viz.Line{Label: string(m), XY: byMech[m], Points: true})
	}
	pa, err := viz.Chart(lines, viz.ChartOptions{Title: "Quasi-identifier attack (after Prop. 3.5): known home and work reveal the path", XLabel: "epsilon", YLabel: "advantage (recovered with − without victim)", LogX: true, LegendAuto: true})
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		p    *plot.Plot
	}{{"ch3-prop3_5", p35}, {"ch3-qi-attack", pa}} {
		files, err := saveFigure(f.p, filepath.Join(dir, f.name), 0, 0)
		if err != nil {
			return nil, err
		}
		out.Files = append(out.Files, files...)
	}
	path := filepath.Join(dir, "results-ch3.json")
	out.Files = append(out.Files, path)
	if err := atomicfile.WriteJSON(path, out); err != nil {
		return nil, err
	}
	return out, nil
}

// TrajDBReport is the JSON of "repro trajdb".
type TrajDBReport struct {
	*TrajDBUtilityResult
	Universe *trajdb.Grid      `json:"universe"`
	Input    *trajdb.MapReport `json:"input"`
	// Population is set when the database measured is a synthetic
	// population drawn from the input's Markov chain.
	Population *Population `json:"population,omitempty"`
	Files      []string    `json:"files"`
}

// Population describes the synthetic population "repro trajdb
// --population" measures instead of the input.
type Population struct {
	Persons       int    `json:"persons"`
	SeqsPerPerson int    `json:"seqs_per_person"`
	Model         string `json:"model"`
}

// MarkovPopulationModel is Population.Model for MarkovPopulation.
const MarkovPopulationModel = "first-order Markov chain of the input's trajectories (start, transitions, stop)"

// WriteTrajDB draws each metric of o against epsilon (trajdb-utility, SVG
// and PNG) and writes results-trajdb.json to dir, recording the paths in
// o.Files.
func WriteTrajDB(dir string, o *TrajDBReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files, err := writeUtilityFigure(dir, o.TrajDBUtilityResult)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "results-trajdb.json")
	o.Files = append(files, path)
	return atomicfile.WriteJSON(path, o)
}

// MetricRow is one metric of several trajdb.Metrics, in their order.
type MetricRow struct {
	Name   string
	Values []float64
}

// MetricRows lists the six metrics of each of ms, in the order of
// trajdb.Metrics and under their JSON names (diameter_jsd only when every
// one has it): the rows of the tables and figures of the trajectory
// releases.
func MetricRows(ms ...*trajdb.Metrics) []MetricRow {
	if len(ms) == 0 {
		return nil
	}
	values := make([]map[string]float64, len(ms))
	for i, m := range ms {
		values[i] = map[string]float64{}
		for _, sc := range m.Scores() {
			values[i][sc.Name] = sc.Value
		}
	}
	var rows []MetricRow
next:
	for _, sc := range ms[0].Scores() {
		r := MetricRow{Name: sc.Name}
		for _, v := range values {
			x, ok := v[sc.Name]
			if !ok {
				continue next
			}
			r.Values = append(r.Values, x)
		}
		rows = append(rows, r)
	}
	return rows
}

// writeUtilityFigure draws each metric against epsilon: one line per
// mechanism, the uniform floor dashed in the mechanism's colour, the
// non-private ceiling dotted.
func writeUtilityFigure(dir string, res *TrajDBUtilityResult) ([]string, error) {
	mechs := []trajdb.MechanismName{}
	seen := map[trajdb.MechanismName]bool{}
	for _, r := range res.Rows {
		if !seen[r.Mechanism] {
			seen[r.Mechanism] = true
			mechs = append(mechs, r.Mechanism)
		}
	}
	np := MetricRows(res.NonPrivate)
	var tiles []*plot.Plot
	for mi, metric := range np {
		var lines []viz.Line
		var xs []float64
		for i, m := range mechs {
			var rel, uni plotter.XYs
			for _, r := range res.Rows {
				if r.Mechanism != m {
					continue
				}
				rows := MetricRows(r.Mean, r.Uniform)
				rel = append(rel, plotter.XY{X: r.Epsilon, Y: rows[mi].Values[0]})
				uni = append(uni, plotter.XY{X: r.Epsilon, Y: rows[mi].Values[1]})
				if i == 0 {
					xs = append(xs, r.Epsilon)
				}
			}
			lines = append(lines,
				viz.Line{Label: string(m), XY: rel, Points: true, Color: viz.Color(i)},
				viz.Line{Label: "uniform, size of " + string(m), XY: uni, Dashed: true, Color: viz.Color(i)})
		}
		var npXY plotter.XYs
		for _, x := range xs {
			npXY = append(npXY, plotter.XY{X: x, Y: metric.Values[0]})
		}
		lines = append(lines, viz.Line{Label: "non-private", XY: npXY, Dashed: true, Color: viz.Color(len(mechs))})
		if mi != 0 { // one legend for the figure, above its first chart
			for i := range lines {
				lines[i].Label = ""
			}
		}
		better := "lower is better"
		if metric.Name == "pattern_f1" || metric.Name == "kendall_tau" {
			better = "higher is better"
		}
		p, err := viz.Chart(lines, viz.ChartOptions{Title: metric.Name + " (" + better + ")", XLabel: "epsilon", YLabel: metric.Name, LogX: true, LegendOutside: mi == 0})
		if err != nil {
			return nil, err
		}
		tiles = append(tiles, p)
	}
	var rows [][]*plot.Plot
	for i := 0; i < len(tiles); i += 3 {
		row := make([]*plot.Plot, 3)
		copy(row, tiles[i:min(i+3, len(tiles))])
		rows = append(rows, row)
	}
	return saveTiles(rows, filepath.Join(dir, "trajdb-utility"), 0, 0)
}
