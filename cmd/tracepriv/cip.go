package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/matfile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// cipPriorFlags are the flags that describe a GP prior on the time axis of
// a trace: a kernel and where it is evaluated.
type cipPriorFlags struct {
	kernel                        string
	variance, lengthscale, period float64
	n                             int
	times, traceFile              string
	secrets                       []string
	allSecrets                    bool
	rf                            cli.ReadFlags
	// read reports what reading --trace skipped (nil without --trace).
	read *trace.Report
}

func (p *cipPriorFlags) register(f *pflag.FlagSet) {
	f.StringVar(&p.kernel, "kernel", "rbf", "kernel: rbf, periodic, matern32 or matern52")
	f.Float64Var(&p.variance, "variance", 1, "kernel variance (prior variance of each value)")
	f.Float64Var(&p.lengthscale, "lengthscale", 0, "kernel lengthscale, in the units of the time axis (samples with --n)")
	f.Float64Var(&p.period, "period", 0, "period of the periodic kernel, in the units of the time axis")
	f.IntVar(&p.n, "n", 0, "number of points, at times 0, 1, ..., n-1 (the paper's kernel on indices)")
	f.StringVar(&p.times, "times", "", "comma-separated times instead of --n (e.g. seconds)")
	f.StringVar(&p.traceFile, "trace", "", "take the times (seconds from the first point) of this trace file instead of --n; its coordinates are not read")
	p.rf.AddTo(f)
	f.StringArrayVar(&p.secrets, "secret", nil, "a secret: one 0-based index (basic) or several comma-separated (compound); repeat for several secrets")
	f.BoolVar(&p.allSecrets, "all-secrets", false, "every point is a basic secret")
}

// build returns the prior covariance and the secrets.
// load checks the privacy flags, builds the prior's covariance and
// secrets, and reports what reading the input skipped: the start that
// cip loss and cip design share.
func (p *cipPriorFlags) load(env *cli.Env, priv *privacyFlags, f *pflag.FlagSet) (*mat.SymDense, []cip.Secret, error) {
	if err := priv.check(f); err != nil {
		return nil, nil, err
	}
	sigma, secrets, err := p.build()
	if err != nil {
		return nil, nil, err
	}
	env.ReportSkipped(p.read)
	return sigma, secrets, nil
}

func (p *cipPriorFlags) build() (*mat.SymDense, []cip.Secret, error) {
	if !slices.Contains(gp.KernelNames, p.kernel) {
		return nil, nil, usageErrorf("--kernel: %q is not one of %s", p.kernel, strings.Join(gp.KernelNames, ", "))
	}
	k, err := gp.NewKernel(p.kernel, p.variance, p.lengthscale, p.period)
	if err != nil {
		return nil, nil, fmt.Errorf("--kernel %s: %w (set --variance, --lengthscale and, for periodic, --period)", p.kernel, err)
	}
	ts, err := p.axis()
	if err != nil {
		return nil, nil, err
	}
	secrets, err := p.parseSecrets(len(ts))
	if err != nil {
		return nil, nil, err
	}
	return gp.Gram(k, ts), secrets, nil
}

func (p *cipPriorFlags) axis() ([]float64, error) {
	given := 0
	for _, b := range []bool{p.n != 0, p.times != "", p.traceFile != ""} {
		if b {
			given++
		}
	}
	switch {
	case given != 1:
		return nil, usageErrorf("give exactly one of --n, --times and --trace")
	case p.n != 0:
		if p.n < 1 {
			return nil, usageErrorf("--n: must be positive, got %d", p.n)
		}
		return gp.Indices(p.n), nil
	case p.times != "":
		ts, err := cip.ParseTimes(p.times)
		if pe := (*param.Error)(nil); errors.As(err, &pe) {
			return nil, usageErrorf("--times: %s", pe.Why)
		}
		return ts, err
	}
	if st, err := os.Stat(p.traceFile); err == nil && st.IsDir() {
		return nil, usageErrorf("--trace %s is a directory; give one trace file", p.traceFile)
	}
	trs, rep, err := p.rf.Read(p.traceFile)
	p.read = rep
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	if len(trs) != 1 {
		return nil, usageErrorf("--trace %s: holds %d traces; give a file with one", p.traceFile, len(trs))
	}
	times := make([]time.Time, len(trs[0].Points))
	for i, pt := range trs[0].Points {
		times[i] = pt.Time
	}
	ts, err := gp.Seconds(times)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.traceFile, err)
	}
	return ts, nil
}

// parseSecrets reads --secret values ("24" basic, "24,25" compound) or
// --all-secrets.
func (p *cipPriorFlags) parseSecrets(n int) ([]cip.Secret, error) {
	if p.allSecrets == (len(p.secrets) > 0) {
		return nil, usageErrorf("give --secret (one or more) or --all-secrets")
	}
	if p.allSecrets {
		return cip.EveryPoint(n), nil
	}
	out := make([]cip.Secret, len(p.secrets))
	for k, spec := range p.secrets {
		var err error
		out[k], err = cip.ParseSecret(spec, n)
		if pe := (*param.Error)(nil); errors.As(err, &pe) {
			return nil, usageErrorf("--secret %q: %s", spec, pe.Why)
		} else if err != nil {
			return nil, fmt.Errorf("--secret %q: %w", spec, err)
		}
	}
	return out, nil
}

// output is the --json of "cip loss" and "cip design": the library's
// report and the rows skipped or merged reading --trace, whose indices the
// secrets refer to (absent without --trace).
func (p *cipPriorFlags) output(rep *cip.Report) any {
	if p.read == nil {
		return rep
	}
	in := p.read.Summary()
	return struct {
		*cip.Report
		*trace.InputSummary
	}{rep, &in}
}

// privacyFlags are the (lambda, r, delta) that turn loss factors into
// epsilons.
type privacyFlags struct {
	lambda, radius, delta float64
}

func (p *privacyFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&p.lambda, "lambda", 0, "Rényi order lambda > 1 (with --radius: report epsilon)")
	f.Float64Var(&p.radius, "radius", 0, "secret radius r, in the units of the values (with --lambda)")
	f.Float64Var(&p.delta, "delta", 0, "also report the prior-posterior gap of Theorem 3.1 at this delta")
}

func (p *privacyFlags) check(f *pflag.FlagSet) error {
	if f.Changed("lambda") != f.Changed("radius") {
		return usageErrorf("--lambda and --radius go together")
	}
	if f.Changed("lambda") {
		if _, err := cip.TargetLossFactor(1, p.lambda, p.radius, 1); err != nil {
			var pe *param.Error
			if errors.As(err, &pe) {
				return usageErrorf("--%s %v: %s", pe.Name, pe.Value, pe.Why)
			}
			return usageErrorf("--lambda/--radius: need lambda > 1 and radius > 0, got %v and %v", p.lambda, p.radius)
		}
	}
	if f.Changed("delta") && (!f.Changed("lambda") || !(p.delta > 0 && p.delta < 1)) {
		return usageErrorf("--delta needs --lambda and --radius and a value in (0, 1)")
	}
	return nil
}

// options are the flags' cip.AssessOptions (checked by check).
func (p *privacyFlags) options(f *pflag.FlagSet) cip.AssessOptions {
	var o cip.AssessOptions
	if f.Changed("lambda") {
		o.Lambda, o.Radius = p.lambda, p.radius
	}
	if f.Changed("delta") {
		o.Delta = p.delta
	}
	return o
}

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
	prior     cipPriorFlags
	priv      privacyFlags
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
	c.prior.register(f)
	c.priv.register(f)
	f.StringVar(&c.noiseFile, "noise", "", "noise covariance SigmaG as a matrix file (rows of comma- or space-separated numbers)")
	f.Float64Var(&c.iid, "iid", 0, "independent noise of this variance on every point")
	f.StringArrayVar(&c.rigid, "rigid", nil, "a window FIRST:LAST (0-based point indices, inclusive) moved rigidly, a place: its loss against the prior's adversary conditioning on it and against one who believes the person stood still there; repeat for several")
	f.BoolVar(&c.route, "route", false, "also the whole trace moved rigidly (the route)")
	return cmd
}

func (c *cipLossCmd) run(f *pflag.FlagSet) error {
	start := time.Now()
	sigma, secrets, err := c.prior.load(c.env, &c.priv, f)
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
	opt := c.priv.options(f)
	opt.BlockDiagonalBound = true
	a, err := cip.Assess(sigma, g, secrets, opt)
	if err != nil {
		return fmt.Errorf("cip loss: %w", err)
	}
	rep := &cip.Report{Kernel: c.prior.kernel, Assessment: a}
	if rep.Rigid, err = c.rigidWindows(sigma, g, opt.Lambda); err != nil {
		return fmt.Errorf("cip loss: %w", err)
	}
	rep.Seconds = time.Since(start).Seconds()
	return c.env.Emit(c.prior.output(rep), rep.WriteText)
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
		r, err := cip.AssessRigid(sigma, g, i, j, lambda, c.priv.radius)
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
	prior                  cipPriorFlags
	priv                   privacyFlags
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
	c.prior.register(f)
	c.priv.register(f)
	f.StringVar(&c.method, "method", string(cip.MethodE3), "e3 (tracepriv's exact optimum; also optimal), paper (Meehan & Chaudhuri's SDPs), paper-sdp-a or paper-multiple-secrets")
	f.Float64Var(&c.budget, "budget", 0, "budget mode: total noise variance tr(SigmaG)")
	f.Float64Var(&c.targetEp, "target-epsilon", 0, "target mode: the least noise with epsilon <= E for every secret at --lambda, --radius")
	f.Float64Var(&c.stab, "stab", 1, "with --method paper: the authors' stabilisation factor (1 = exact solve)")
	f.StringVar(&c.noiseOut, "noise-out", "", "write the noise covariance as a CSV matrix")
	return cmd
}

func (c *cipDesignCmd) run(f *pflag.FlagSet) error {
	start := time.Now()
	sigma, secrets, err := c.prior.load(c.env, &c.priv, f)
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
		if req.Targets, err = cip.TargetLossFactors(secrets, c.targetEp, c.priv.lambda, c.priv.radius); err != nil {
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
	a, err := d.Assess(sigma, secrets, c.priv.options(f))
	if err != nil {
		return fmt.Errorf("cip design: %w", err)
	}
	rep := &cip.Report{Method: d.Method, Solver: d.Solver, Kernel: c.prior.kernel, Assessment: a}
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
	return c.env.Emit(c.prior.output(rep), rep.WriteText)
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
