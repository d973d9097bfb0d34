package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(reproThesisCmd) }

func reproThesisCmd(env *cli.Env) *cobra.Command {
	var (
		out, chapter, example string
		reps, draws           int
		victims               int
	)
	c := &cobra.Command{
		Use:   "thesis [--chapter 3|5,6 | --example 3.7] [--out DIR] [--reps N]",
		Short: "Reproduce the findings of Chapters 3, 5 and 6 of Guerra-Balboa's thesis",
		Long: `Compute the closed-form RAD curves and black-box bounds of Chapter 5 (Figs 5.1,
5.2, 5.3, the DP-SGD bounds, calibration examples) and the BDP factors and the
utility experiment of Chapter 6 (Figs 6.2, 6.6, 6.7 on synthetic data, as the
real datasets are not bundled), and write results.json and SVG and PNG plots to --out.

--chapter 3 reproduces Sec. 3.4.1.4 instead: Proposition 3.5 (a "noisy counts
of present sequences" release shows whether the one person holding a sequence
is in the data), Proposition 3.6 (the auditor flags that design and the broken
trees of "audit support", and finds nothing on the prefix and n-gram trees in
its budget) and the home/work quasi-identifier attack the thesis describes
after Proposition 3.5 (known home and work plus a flawed release reveal the
rest of the path; the DP trees stop it), writing results-ch3.json and its
figures.

--example 3.7 reproduces Example 3.7 (Sec. 3.4.2.1): a clustering mechanism
in the style of Hua et al. releases the centroids of a partition of the data's
own locations, and an attacker who knows l2 = (5, 2) and l3 = (5, 5) inverts
the released centroid to recover the target l1 = (2, 2) exactly; the corrected
mechanism (the exponential mechanism over partitions of a public grid) stops
it. recovered_error is the attack's mean error on the flawed mechanism,
recovered_error_correct on the corrected one. Writes results-ex3_7.json and
ex3_7.svg/png.`,
		Example: `  tracepriv repro thesis --out thesis-output --reps 2 --seed 1
  tracepriv repro thesis --out thesis-output --json
  tracepriv repro thesis --chapter 3 --out thesis-output --draws 200 --victims 20 --seed 1
  tracepriv repro thesis --example 3.7 --out thesis-output --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if reps < 1 {
				return usageErrorf("--reps must be positive, got %d", reps)
			}
			if cmd.Flags().Changed("example") {
				if cmd.Flags().Changed("chapter") {
					return usageErrorf("give --chapter or --example, not both")
				}
				if example != "3.7" {
					return usageErrorf("--example %q: only 3.7 is reproduced", example)
				}
				opt := repro.Example37Options{Src: env.Source()}
				if cmd.Flags().Changed("draws") {
					if draws < 1 {
						return usageErrorf("--draws must be positive, got %d", draws)
					}
					opt.Draws = draws
				}
				res, err := repro.ReproduceExample37(opt)
				if err != nil {
					return fmt.Errorf("repro thesis --example 3.7: %w", err)
				}
				if err := repro.WriteExample37(out, res); err != nil {
					return fmt.Errorf("repro thesis --example 3.7: --out: %w", err)
				}
				return env.Emit(res, func(w io.Writer) error {
					for _, l := range res.Summary {
						fmt.Fprintln(w, l)
					}
					fmt.Fprintf(w, "recovered_error %.4g (flawed), recovered_error_correct %.4g (corrected)\nwrote %s\n",
						res.RecoveredError, res.RecoveredErrorCorrect, strings.Join(res.Files, ", "))
					return nil
				})
			}
			switch chapter {
			case "3":
				if draws < 1 || victims < 1 {
					return usageErrorf("--draws and --victims must be positive, got %d and %d", draws, victims)
				}
				o, err := reproChapter3(env, out, draws, victims)
				if err != nil {
					return fmt.Errorf("repro thesis --chapter 3: %w", err)
				}
				return env.Emit(o, func(w io.Writer) error { return writeChapter3(w, o) })
			case "5,6", "5", "6":
			default:
				return usageErrorf("--chapter %q: want 3, or 5,6 (Chapters 5 and 6 are reproduced together)", chapter)
			}
			bar := env.Progress(2, "utility experiments")
			res, err := repro.Thesis(repro.ThesisOptions{Reps: reps, Src: env.Source(), Progress: func(done, _ int) { _ = bar.Set(done) }})
			_ = bar.Finish()
			if err != nil {
				return err
			}
			if err := repro.WriteThesis(out, res); err != nil {
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
	c.Flags().StringVar(&example, "example", "", "3.7: the centroid-inversion attack of Example 3.7 instead of a chapter")
	c.Flags().IntVar(&draws, "draws", 1000, "chapter 3: releases with and without the victim for Prop. 3.5; example 3.7: releases per mechanism (default 2000)")
	c.Flags().IntVar(&victims, "victims", 50, "chapter 3: people attacked in the home/work quasi-identifier attack")
	c.Flags().IntVar(&reps, "reps", 1000, "repetitions per point of the utility experiment (the thesis uses 1000)")
	return c
}

// isOneOf picks the grid points the text summary shows (the grid's values
// are rounded to 1e-9).
func isOneOf(x float64, vs ...float64) bool {
	for _, v := range vs {
		if math.Abs(x-v) < 1e-9 {
			return true
		}
	}
	return false
}
