package main

import (
	"fmt"
	"github.com/tracepriv/tracepriv/internal/infile"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sdp"
)

func init() { register(newSDPCmd) }

func newSDPCmd(env *cli.Env) *cobra.Command {
	group := &cobra.Command{
		Use:     "sdp",
		Short:   "Semidefinite programming (the solver behind the CIP mechanisms)",
		Example: `  tracepriv sdp solve sdp/testdata/example1.dat-s`,
	}
	group.AddCommand(newSDPSolveCmd(env))
	return group
}

// sdpSolveCmd is "tracepriv sdp solve": its flags and its run. Every
// command of this package has this shape: a type holding the flag
// values, a constructor that wires the flags, and a run method.
type sdpSolveCmd struct {
	env      *cli.Env
	set      sdp.Settings
	solution string
}

func newSDPSolveCmd(env *cli.Env) *cobra.Command {
	c := &sdpSolveCmd{env: env, set: sdp.DefaultSettings()}
	long, example := help("sdp solve")
	cmd := &cobra.Command{
		Use:     "solve FILE.dat-s",
		Short:   "Solve an SDP in SDPA sparse format",
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE:    func(_ *cobra.Command, args []string) error { return c.run(args[0]) },
	}
	fl := cmd.Flags()
	fl.IntVar(&c.set.MaxIter, "max-iter", c.set.MaxIter, "iteration limit")
	fl.Float64Var(&c.set.FeasTol, "feas-tol", c.set.FeasTol, "relative primal and dual residual tolerance")
	fl.Float64Var(&c.set.GapTol, "gap-tol", c.set.GapTol, "relative duality gap tolerance")
	fl.StringVar(&c.solution, "solution", "", "write X, y, Z and the result as JSON to this file")
	return cmd
}

func (c *sdpSolveCmd) run(path string) error {
	f, err := infile.OpenNamed(path)
	if err != nil {
		return fmt.Errorf("sdp solve: %w", err)
	}
	p, err := sdp.ReadSDPA(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res, err := sdp.SolveSDPA(p, &c.set)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if c.solution != "" {
		if err := atomicfile.Write(c.solution, 0o644, func(w io.Writer) error { return sdp.WriteSDPASolution(w, res) }); err != nil {
			return err
		}
	}
	return c.env.Emit(res, res.WriteText)
}
