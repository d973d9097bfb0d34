package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/repro"
	"github.com/tracepriv/tracepriv/trajdb"
)

// reproChapter3 runs "repro thesis --chapter 3" into dir.
func reproChapter3(env *cli.Env, dir string, draws, victims int) (*repro.Chapter3Report, error) {
	bar := env.Progress(-1, "chapter 3: releases drawn")
	defer bar.Finish()
	return repro.Chapter3(dir, repro.Chapter3Options{Draws: draws, Attack: trajdb.QIAttackOptions{Victims: victims}, Src: env.Source(), Progress: func(n int) { _ = bar.Add(n) }})
}

// writeChapter3 prints the reproduction's summary.
func writeChapter3(w io.Writer, o *repro.Chapter3Report) error {
	for _, s := range o.Summary {
		fmt.Fprintln(w, s)
	}
	var adv []float64
	for _, r := range o.QIAttack {
		adv = append(adv, r.All.Advantage)
	}
	if len(adv) > 0 {
		fmt.Fprintf(w, "largest quasi-identifier attack advantage measured: %.3f\n", floats.Max(adv))
	}
	_, err := fmt.Fprintf(w, "wrote %v\n", o.Files)
	return err
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

User-level DP needs people: with a handful of persons (the bundled sample's
three, or GeoLife's eight), every count the trees perturb is smaller than its
noise. --population N
measures instead a synthetic population of N people drawn from the first-order
Markov chain of the input's trajectories: the input's spatial structure at a
scale where the mechanisms have signal. It is an evaluation device only.`,
			Example: `  tracepriv repro trajdb --in internal/sample --cell-m 10000 --bbox 39.75,116.15,40.10,116.60 --max-len 3 --max-seqs 1 --reps 5 --out trajdb-output --seed 1
  tracepriv repro trajdb --in internal/sample --cell-m 2000 --bbox 39.75,116.15,40.10,116.60 --max-len 5 --max-seqs 5 --population 200 --reps 1 --epsilons 0.5,2 --out trajdb-output --seed 1`,
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
						return usageErrorf("repro trajdb: --epsilons: %q is not a positive number", f)
					}
					eps = append(eps, v)
				}
				if reps < 1 {
					return usageErrorf("repro trajdb: --reps must be positive, got %d", reps)
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
				var population *repro.Population
				if pop > 0 {
					if db, err = repro.MarkovPopulation(db, pop, popSeqs, noise.Derive(src, "population")); err != nil {
						return fmt.Errorf("repro trajdb: --population: %w", err)
					}
					population = &repro.Population{Persons: pop, SeqsPerPerson: popSeqs, Model: repro.MarkovPopulationModel}
				}
				tick := env.Ticker(len(eps)*2*reps, "repro trajdb")
				res, err := repro.TrajDBUtility(db, repro.TrajDBUtilityOptions{
					Bounds: b, Epsilons: eps, Reps: reps, Bounded: bounded, Metrics: mopt, Src: src,
					Progress: func(done, total int) { tick.Set(done, "releases measured") },
				})
				if err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				o := &repro.TrajDBReport{TrajDBUtilityResult: res, Universe: g, Input: rep, Population: population}
				if err := repro.WriteTrajDB(out, o); err != nil {
					return fmt.Errorf("repro trajdb: %w", err)
				}
				return env.Emit(o, func(w io.Writer) error {
					fmt.Fprintf(w, "%s; %d persons, bounds %d cells x %d trajectories, %d reps, against %s\n", g, res.Persons, b.MaxLen, b.MaxSeqs, reps, res.Against)
					fmt.Fprintf(w, "  %-7s %-4s  %-21s %-21s %-21s %-21s %-21s %-21s  %s\n", "mech", "eps", "query_are", "trip_jsd", "length_jsd", "diameter_jsd", "pattern_f1", "kendall_tau", "beats uniform")
					for _, r := range res.Rows {
						fmt.Fprintf(w, "  %-7s %-4g", r.Mechanism, r.Epsilon)
						for _, row := range repro.MetricRows(r.Mean, r.Uniform) {
							fmt.Fprintf(w, "  %8.3f (uni %7.3f)", row.Values[0], row.Values[1])
						}
						verdict := "yes"
						if !r.BeatsUniform {
							verdict = "no: " + strings.Join(r.NotBetter, ", ")
						}
						fmt.Fprintf(w, "  %s\n", verdict)
					}
					fmt.Fprintf(w, "  non-private:")
					for _, row := range repro.MetricRows(res.NonPrivate) {
						fmt.Fprintf(w, " %s %.3f", row.Name, row.Values[0])
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
