package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot/plotter"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trajdb"
	"github.com/tracepriv/tracepriv/viz"
)

// chapter3Output is the JSON of "repro thesis --chapter 3".
type chapter3Output struct {
	*trajdb.Chapter3Result
	Files []string `json:"files"`
}

// reproChapter3 runs trajdb.ReproduceChapter3 and writes results-ch3.json
// with its figures to dir, together.
func reproChapter3(env *cli.Env, dir string, draws, victims int) (*chapter3Output, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bar := env.Progress(-1, "chapter 3: releases drawn")
	src := env.Source()
	res, err := trajdb.ReproduceChapter3(trajdb.Chapter3Options{Draws: draws, Attack: trajdb.QIAttackOptions{Victims: victims}, Src: src, Progress: func(n int) { _ = bar.Add(n) }})
	_ = bar.Finish()
	if err != nil {
		return nil, err
	}
	out := &chapter3Output{Chapter3Result: res}
	// Proposition 3.5: how often each mechanism releases the victim's
	// sequence with and without the victim.
	var names []string
	with, without := viz.BarSeries{Label: "with the victim"}, viz.BarSeries{Label: "without the victim"}
	for _, s := range res.Prop35 {
		names = append(names, s.Mechanism)
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
	// The attack's advantage against epsilon, beside what epsilon-DP allows.
	byMech := map[string]plotter.XYs{}
	var bound plotter.XYs
	for _, r := range res.Attack {
		byMech[r.Mechanism] = append(byMech[r.Mechanism], plotter.XY{X: r.Epsilon, Y: r.All.Advantage})
		if len(byMech) == 1 {
			bound = append(bound, plotter.XY{X: r.Epsilon, Y: r.AdvantageBoundPriorFree})
		}
	}
	mechs := make([]string, 0, len(byMech))
	for m := range byMech {
		mechs = append(mechs, m)
	}
	sort.Strings(mechs)
	lines := []viz.Line{{Label: "epsilon-DP bound (e^ε − 1)/(e^ε + 1)", XY: bound, Dashed: true}}
	for _, m := range mechs {
		lines = append(lines, viz.Line{Label: m, XY: byMech[m], Points: true})
	}
	pa, err := viz.Chart(lines, viz.ChartOptions{Title: "Example 3.7 attack: known home and work reveal the path", XLabel: "epsilon", YLabel: "advantage (recovered with − without victim)", LogX: true, LegendAuto: true})
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		save func(path string) error
	}{
		{"ch3-prop3_5", func(path string) error { return viz.Save(p35, path, 0, 0) }},
		{"ch3-attack", func(path string) error { return viz.Save(pa, path, 0, 0) }},
	} {
		for _, ext := range []string{".svg", ".png"} {
			path := filepath.Join(dir, f.name+ext)
			if err := f.save(path); err != nil {
				return nil, err
			}
			out.Files = append(out.Files, path)
		}
	}
	path := filepath.Join(dir, "results-ch3.json")
	out.Files = append(out.Files, path)
	if err := cli.WriteJSONFile(path, out); err != nil {
		return nil, err
	}
	return out, nil
}

// writeChapter3 prints the reproduction's summary.
func writeChapter3(w io.Writer, o *chapter3Output) error {
	for _, s := range o.Summary {
		fmt.Fprintln(w, s)
	}
	var adv []float64
	for _, r := range o.Attack {
		adv = append(adv, r.All.Advantage)
	}
	if len(adv) > 0 {
		fmt.Fprintf(w, "largest attack advantage measured: %.3f\n", floats.Max(adv))
	}
	_, err := fmt.Fprintf(w, "wrote %v\n", o.Files)
	return err
}

// trajdbReproOutput is the JSON of "repro trajdb".
type trajdbReproOutput struct {
	*trajdb.UtilityResult
	Universe *trajdb.Grid      `json:"universe"`
	Input    *trajdb.MapReport `json:"input"`
	// Population is set when the database measured is a synthetic
	// population drawn from the input's Markov chain (--population).
	Population *populationJSON `json:"population,omitempty"`
	Files      []string        `json:"files"`
}

func init() {
	registerRepro(func(env *cli.Env) *cobra.Command {
		var (
			rf                 readFlags
			u                  universeFlags
			in, out            string
			epsList            string
			reps, pop, popSeqs int
			bounded            bool
			mopt               trajdb.MetricOptions
		)
		c := &cobra.Command{
			Use:   "trajdb --in DIR --cell-m METRES --bbox MINLAT,MINLON,MAXLAT,MAXLON [--out DIR]",
			Short: "Utility of the prefix and n-gram releases against uniform and non-private ones",
			Long: `Release a trace directory with the prefix and n-gram trees at each epsilon,
--reps times, and measure every release (tracepriv evaluate's metrics) beside a
uniform-random release of the same size and the non-private one. Writes
results-trajdb.json and a figure of each metric against epsilon to --out.

User-level DP needs people: with a handful of persons (the bundled GeoLife
users), every count the trees perturb is smaller than its noise. --population N
measures instead a synthetic population of N people drawn from the first-order
Markov chain of the input's trajectories: the input's spatial structure at a
scale where the mechanisms have signal. It is an evaluation device only.`,
			Example: `  tracepriv repro trajdb --in internal/sample --cell-m 10000 --bbox 39.75,116.15,40.10,116.60 --max-len 3 --max-seqs 1 --reps 5 --out trajdb-output --seed 1
  tracepriv repro trajdb --in internal/sample --cell-m 2000 --bbox 39.75,116.15,40.10,116.60 --max-len 5 --max-seqs 5 --population 500 --reps 3 --out trajdb-output --seed 1`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				g, err := u.grid()
				if err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				b, err := u.bounds()
				if err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				var eps []float64
				for _, f := range strings.Split(epsList, ",") {
					v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
					if err != nil || !(v > 0) || math.IsInf(v, 0) {
						return fmt.Errorf("repro trajdb: --epsilons: %q is not a positive number", f)
					}
					eps = append(eps, v)
				}
				if reps < 1 {
					return fmt.Errorf("repro trajdb: --reps must be positive, got %d", reps)
				}
				if err := os.MkdirAll(out, 0o755); err != nil {
					return fmt.Errorf("repro trajdb: --out: %w", err)
				}
				db, rep, err := readTrajectories(env, &rf, &u, g, in)
				if err != nil {
					return fmt.Errorf("repro trajdb: --in %w", err)
				}
				mopt.Universe = g
				src := env.Source()
				var popJSON *populationJSON
				if pop > 0 {
					if db, err = trajdb.MarkovPopulation(db, pop, popSeqs, noise.Derive(src, "population")); err != nil {
						return fmt.Errorf("repro trajdb: --population: %w", err)
					}
					popJSON = &populationJSON{Persons: pop, SeqsPerPerson: popSeqs, Model: "first-order Markov chain of the input's trajectories (start, transitions, stop)"}
				}
				tick := env.Ticker(len(eps)*2*reps, "repro trajdb")
				res, err := trajdb.UtilityExperiment(db, trajdb.UtilityOptions{
					Bounds: b, Epsilons: eps, Reps: reps, Bounded: bounded, Metrics: mopt, Src: src,
					Progress: func(done, total int) { tick.Set(done, "releases measured") },
				})
				if err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				o := &trajdbReproOutput{UtilityResult: res, Universe: g, Input: rep, Population: popJSON}
				if o.Files, err = writeUtilityFigure(out, res); err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				path := filepath.Join(out, "results-trajdb.json")
				o.Files = append(o.Files, path)
				if err := cli.WriteJSONFile(path, o); err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				return env.Emit(o, func(w io.Writer) error {
					fmt.Fprintf(w, "%s; %d persons, bounds %d cells x %d trajectories, %d reps, against %s\n", g, res.Persons, b.MaxLen, b.MaxSeqs, reps, res.Against)
					fmt.Fprintf(w, "  %-7s %-4s  %-21s %-21s %-21s %-21s %-21s %-21s  %s\n", "mech", "eps", "query_are", "trip_jsd", "length_jsd", "diameter_jsd", "pattern_f1", "kendall_tau", "beats uniform")
					for _, r := range res.Rows {
						fmt.Fprintf(w, "  %-7s %-4g", r.Mechanism, r.Epsilon)
						for _, row := range metricRows(r.Mean, r.Uniform) {
							fmt.Fprintf(w, "  %8.3f (uni %7.3f)", row.v[0], row.v[1])
						}
						verdict := "yes"
						if !r.BeatsUniform {
							verdict = "no: " + strings.Join(r.NotBetter, ", ")
						}
						fmt.Fprintf(w, "  %s\n", verdict)
					}
					fmt.Fprintf(w, "  non-private:")
					for _, row := range metricRows(res.NonPrivate) {
						fmt.Fprintf(w, " %s %.3f", row.name, row.v[0])
					}
					_, err := fmt.Fprintf(w, "\nwrote %s\n", strings.Join(o.Files, ", "))
					return err
				})
			},
		}
		fl := c.Flags()
		fl.StringVar(&in, "in", "", "directory of traces")
		fl.StringVarP(&out, "out", "o", "repro-trajdb", "directory for results-trajdb.json and the figure")
		fl.StringVar(&epsList, "epsilons", "0.5,1,2", "comma-separated privacy parameters")
		fl.IntVar(&reps, "reps", 20, "releases per mechanism and epsilon")
		fl.IntVar(&pop, "population", 0, "measure a synthetic population of N people drawn from the input's Markov chain instead of the input (evaluation only)")
		fl.IntVar(&popSeqs, "population-seqs", 5, "trajectories per person of the synthetic population")
		fl.BoolVar(&bounded, "bounded", false, "compare with the bounded trajectories (the mechanisms' input) instead of all")
		fl.Uint64Var(&mopt.QuerySeed, "query-seed", 0, "seed of the query generator")
		u.add(fl)
		rf.addTo(fl)
		for _, f := range []string{"in", "cell-m", "bbox"} {
			_ = c.MarkFlagRequired(f)
		}
		return c
	})
}

type populationJSON struct {
	Persons       int    `json:"persons"`
	SeqsPerPerson int    `json:"seqs_per_person"`
	Model         string `json:"model"`
}

// writeUtilityFigure draws each metric against epsilon: one line per
// mechanism, the uniform floor dashed in the mechanism's colour, the
// non-private ceiling dotted.
func writeUtilityFigure(dir string, res *trajdb.UtilityResult) ([]string, error) {
	mechs := []string{}
	seen := map[string]bool{}
	for _, r := range res.Rows {
		if !seen[r.Mechanism] {
			seen[r.Mechanism] = true
			mechs = append(mechs, r.Mechanism)
		}
	}
	np := metricRows(res.NonPrivate)
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
				rows := metricRows(r.Mean, r.Uniform)
				rel = append(rel, plotter.XY{X: r.Epsilon, Y: rows[mi].v[0]})
				uni = append(uni, plotter.XY{X: r.Epsilon, Y: rows[mi].v[1]})
				if i == 0 {
					xs = append(xs, r.Epsilon)
				}
			}
			lines = append(lines,
				viz.Line{Label: m, XY: rel, Points: true, Color: viz.Color(i)},
				viz.Line{Label: "uniform, size of " + m, XY: uni, Dashed: true, Color: viz.Color(i)})
		}
		var npXY plotter.XYs
		for _, x := range xs {
			npXY = append(npXY, plotter.XY{X: x, Y: metric.v[0]})
		}
		lines = append(lines, viz.Line{Label: "non-private", XY: npXY, Dashed: true, Color: viz.Color(len(mechs))})
		if mi != 0 { // one legend for the figure, above its first chart
			for i := range lines {
				lines[i].Label = ""
			}
		}
		better := "lower is better"
		if metric.name == "pattern_f1" || metric.name == "kendall_tau" {
			better = "higher is better"
		}
		p, err := viz.Chart(lines, viz.ChartOptions{Title: metric.name + " (" + better + ")", XLabel: "epsilon", YLabel: metric.name, LogX: true, LegendOutside: mi == 0})
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
	var files []string
	for _, ext := range []string{".svg", ".png"} {
		path := filepath.Join(dir, "trajdb-utility"+ext)
		if err := viz.SaveTiles(path, rows, 0, 0); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}
