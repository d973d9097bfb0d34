package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/repro"
)

func init() { registerRepro(reproThesisCmd) }

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
	c.Flags().IntVar(&draws, "draws", 1000, "chapter 3: releases with and without the victim for Prop. 3.5")
	c.Flags().IntVar(&victims, "victims", 50, "chapter 3: people attacked in the Example 3.7 attack")
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
