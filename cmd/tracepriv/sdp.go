package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sdp"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		group := &cobra.Command{
			Use:     "sdp",
			Short:   "Semidefinite programming (the solver behind the CIP mechanisms)",
			Example: `  tracepriv sdp solve sdp/testdata/example1.dat-s`,
		}
		var (
			set      = sdp.DefaultSettings()
			solution string
		)
		solve := &cobra.Command{
			Use:   "solve FILE.dat-s",
			Short: "Solve an SDP in SDPA sparse format",
			Long: `Solve a semidefinite program in SDPA sparse format (.dat-s):

  (P) maximise tr(C X) s.t. tr(A_i X) = a_i, X >= 0
  (D) minimise a^T y   s.t. sum_i y_i A_i - C >= 0

Objectives are reported with CSDP's signs: primal_objective = tr(C X),
dual_objective = a^T y. The status is one of optimal, near_optimal,
primal_infeasible, dual_infeasible, max_iterations, numerical_problems;
an infeasible problem is an answer, not an error (exit status 0).`,
			Example: `  tracepriv sdp solve sdp/testdata/example1.dat-s
  tracepriv sdp solve sdp/testdata/example1.dat-s --gap-tol 1e-10 --solution solution.json --json`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				f, err := openFile(args[0])
				if err != nil {
					return fmt.Errorf("sdp solve: %w", err)
				}
				p, err := sdp.ReadSDPA(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				res, err := sdp.SolveSDPA(p, &set)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if solution != "" {
					if err := atomicfile.Write(solution, 0o644, func(w io.Writer) error { return sdp.WriteSDPASolution(w, res) }); err != nil {
						return err
					}
				}
				return env.Emit(res, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "status            %s\nprimal_objective  %.12g\ndual_objective    %.12g\ngap               %.3g\nrelative_gap      %.3g\nprimal_residual   %.3g\ndual_residual     %.3g\niterations        %d\nseconds           %.3f\n",
						res.Status, res.PrimalObj, res.DualObj, res.Gap, res.RelGap, res.PrimalRes, res.DualRes, res.Iterations, res.Seconds)
					return err
				})
			},
		}
		fl := solve.Flags()
		fl.IntVar(&set.MaxIter, "max-iter", set.MaxIter, "iteration limit")
		fl.Float64Var(&set.FeasTol, "feas-tol", set.FeasTol, "relative primal and dual residual tolerance")
		fl.Float64Var(&set.GapTol, "gap-tol", set.GapTol, "relative duality gap tolerance")
		fl.StringVar(&solution, "solution", "", "write X, y, Z and the result as JSON to this file")
		group.AddCommand(solve)
		return group
	})
}
