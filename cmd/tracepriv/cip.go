package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/matfile"
	"github.com/tracepriv/tracepriv/param"
)

func init() { register(newCIPCmd) }

func newCIPCmd(env *cli.Env) *cobra.Command {
	long, example := help("cip")
	cmd := &cobra.Command{
		Use:     "cip",
		Short:   "Conditional inferential privacy: exact loss of Gaussian noise, and noise design",
		Long:    long,
		Example: example,
	}
	cmd.AddCommand(newCIPLossCmd(env), newCIPDesignCmd(env), newCIPEnvelopeCmd(env))
	return cmd
}

// cipLossCmd is "tracepriv cip loss".
type cipLossCmd struct {
	env       *cli.Env
	prior     cli.CIPPriorFlags
	priv      cli.PrivacyFlags
	noiseFile string
	iid       float64
	rigid     []string
	route     bool
}

func newCIPLossCmd(env *cli.Env) *cobra.Command {
	c := &cipLossCmd{env: env}
	long, example := help("cip loss")
	cmd := &cobra.Command{
		Use:     "loss (--noise FILE.csv | --iid VAR) [prior flags] (--secret I[,J...] | --all-secrets) [--rigid FIRST:LAST] [--route]",
		Short:   "Certify the exact CIP loss of a Gaussian noise covariance",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	f := cmd.Flags()
	c.prior.Register(f)
	c.priv.Register(f)
	f.StringVar(&c.noiseFile, "noise", "", "noise covariance SigmaG as a matrix file (rows of comma- or space-separated numbers)")
	f.Float64Var(&c.iid, "iid", 0, "independent noise of this variance on every point")
	f.StringArrayVar(&c.rigid, "rigid", nil, "a window FIRST:LAST (0-based point indices, inclusive) moved rigidly, a place: its loss against the prior's adversary conditioning on it and against one who believes the person stood still there; repeat for several")
	f.BoolVar(&c.route, "route", false, "also the whole trace moved rigidly (the route)")
	return cmd
}

func (c *cipLossCmd) run(f *pflag.FlagSet) error {
	start := time.Now()
	sigma, secrets, err := c.prior.Load(c.env, &c.priv, f)
	if err != nil {
		return fmt.Errorf("cip loss: %w", err)
	}
	n := sigma.SymmetricDim()
	var g *mat.SymDense
	switch {
	case f.Changed("noise") == f.Changed("iid"):
		return usageErrorf("cip loss: give --noise FILE or --iid VAR")
	case f.Changed("iid"):
		if g, err = cip.IndependentUniform(n, c.iid*float64(n)); err != nil {
			return fmt.Errorf("cip loss: --iid: %w", err)
		}
	default:
		if g, err = readNoise(c.noiseFile, n); err != nil {
			return fmt.Errorf("cip loss: %w", err)
		}
	}
	opt := c.priv.Options(f)
	opt.BlockDiagonalBound = true
	a, err := cip.Assess(sigma, g, secrets, opt)
	if err != nil {
		return fmt.Errorf("cip loss: %w", err)
	}
	rep := &cip.Report{Kernel: c.prior.Kernel, Assessment: a}
	if rep.Rigid, err = c.rigidWindows(sigma, g, opt.Lambda); err != nil {
		return fmt.Errorf("cip loss: %w", err)
	}
	rep.Seconds = time.Since(start).Seconds()
	return c.env.Emit(c.prior.Output(rep), rep.WriteText)
}

// rigidWindows evaluates the --rigid windows and --route.
func (c *cipLossCmd) rigidWindows(sigma, g mat.Symmetric, lambda float64) ([]cip.RigidWindow, error) {
	n := sigma.SymmetricDim()
	specs := c.rigid
	if c.route {
		specs = append(specs, fmt.Sprintf("0:%d", n-1))
	}
	var out []cip.RigidWindow
	for _, spec := range specs {
		i, j, err := cip.ParseWindow(spec, n)
		if pe := (*param.Error)(nil); errors.As(err, &pe) {
			return nil, usageErrorf("--rigid %q: %s", spec, pe.Why)
		}
		r, err := cip.AssessRigid(sigma, g, i, j, lambda, c.priv.Radius)
		if err != nil {
			return nil, fmt.Errorf("--rigid %q: %w", spec, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// cipDesignCmd is "tracepriv cip design".
type cipDesignCmd struct {
	env                    *cli.Env
	prior                  cli.CIPPriorFlags
	priv                   cli.PrivacyFlags
	method, noiseOut       string
	budget, stab, targetEp float64
}

func newCIPDesignCmd(env *cli.Env) *cobra.Command {
	c := &cipDesignCmd{env: env}
	long, example := help("cip design")
	cmd := &cobra.Command{
		Use:     "design [prior flags] (--secret I[,J...] | --all-secrets) (--budget B | --target-epsilon E --lambda L --radius R) [--method e3|paper]",
		Short:   "Design Gaussian noise for CIP and certify its loss",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	f := cmd.Flags()
	c.prior.Register(f)
	c.priv.Register(f)
	f.StringVar(&c.method, "method", string(cip.MethodE3), "e3 (tracepriv's exact optimum; also optimal), paper (Meehan & Chaudhuri's SDPs), paper-sdp-a or paper-multiple-secrets")
	f.Float64Var(&c.budget, "budget", 0, "budget mode: total noise variance tr(SigmaG)")
	f.Float64Var(&c.targetEp, "target-epsilon", 0, "target mode: the least noise with epsilon <= E for every secret at --lambda, --radius")
	f.Float64Var(&c.stab, "stab", 1, "with --method paper: the authors' stabilisation factor (1 = exact solve)")
	f.StringVar(&c.noiseOut, "noise-out", "", "write the noise covariance as a CSV matrix")
	return cmd
}

func (c *cipDesignCmd) run(f *pflag.FlagSet) error {
	start := time.Now()
	sigma, secrets, err := c.prior.Load(c.env, &c.priv, f)
	if err != nil {
		return fmt.Errorf("cip design: %w", err)
	}
	target := f.Changed("target-epsilon")
	if target == f.Changed("budget") {
		return usageErrorf("cip design: give --budget B (least loss at that noise) or --target-epsilon E with --lambda and --radius (least noise for that loss)")
	}
	if target && (!f.Changed("lambda") || !(c.targetEp > 0)) {
		return usageErrorf("cip design: --target-epsilon needs a positive value, --lambda and --radius")
	}
	m, err := cip.ParseMethod(c.method)
	if err != nil {
		return fmt.Errorf("cip design: --method: %w", err)
	}
	if m.Kernel() {
		return usageErrorf("cip design: --method %s designs noise for a prior family: use tracepriv sanitize --design %s (tracepriv cip envelope shows its noise kernel)", m, m)
	}
	req := cip.DesignRequest{Method: m, Sigma: sigma, Secrets: secrets, Paper: &cip.PaperOptions{Stabilisation: c.stab}, Budget: c.budget}
	if target {
		req.Budget = 0
		if req.Targets, err = cip.TargetLossFactors(secrets, c.targetEp, c.priv.Lambda, c.priv.Radius); err != nil {
			return fmt.Errorf("cip design: %w", err)
		}
	}
	finish := func() {}
	req.Progress = func(stage string) {
		finish()
		bar := c.env.Progress(1, stage)
		finish = func() { bar.Finish() }
	}
	d, err := cip.DesignNoise(req)
	finish()
	if err != nil {
		return fmt.Errorf("cip design: %w", err)
	}
	a, err := d.Assess(sigma, secrets, c.priv.Options(f))
	if err != nil {
		return fmt.Errorf("cip design: %w", err)
	}
	rep := &cip.Report{Method: d.Method, Solver: d.Solver, Kernel: c.prior.Kernel, Assessment: a}
	if target && d.Set != nil {
		rep.LowerBound = ptr(d.LowerBound)
	}
	if c.noiseOut != "" {
		if err := matfile.WriteFile(c.noiseOut, d.SigmaG); err != nil {
			return fmt.Errorf("cip design: %w", err)
		}
		rep.NoiseFile = c.noiseOut
	}
	rep.Seconds = time.Since(start).Seconds()
	return c.env.Emit(c.prior.Output(rep), rep.WriteText)
}

// readNoise reads --noise: an n x n noise covariance in the matrix-file
// format (internal/matfile), symmetric and positive semidefinite.
func readNoise(path string, n int) (*mat.SymDense, error) {
	m, err := readMatrix(path)
	if err != nil {
		return nil, err
	}
	if err := m.Square(n); err != nil {
		return nil, fmt.Errorf("%w (the prior has %d points)", err, n)
	}
	g, err := m.Symmetric(matfile.DefaultTol)
	if err != nil {
		return nil, err
	}
	if err := cip.CheckCovariance(g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}
