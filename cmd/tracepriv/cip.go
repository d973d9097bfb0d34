package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
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
	rf                            readFlags
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
	p.rf.addTo(f)
	f.StringArrayVar(&p.secrets, "secret", nil, "a secret: one 0-based index (basic) or several comma-separated (compound); repeat for several secrets")
	f.BoolVar(&p.allSecrets, "all-secrets", false, "every point is a basic secret")
}

// build returns the prior covariance, the time axis and the secrets.
func (p *cipPriorFlags) build() (*mat.SymDense, []float64, []cip.Secret, error) {
	if !slices.Contains(gp.KernelNames, p.kernel) {
		return nil, nil, nil, usageErrorf("--kernel: %q is not one of %s", p.kernel, strings.Join(gp.KernelNames, ", "))
	}
	k, err := gp.NewKernel(p.kernel, p.variance, p.lengthscale, p.period)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--kernel %s: %w (set --variance, --lengthscale and, for periodic, --period)", p.kernel, err)
	}
	ts, err := p.axis()
	if err != nil {
		return nil, nil, nil, err
	}
	secrets, err := parseSecrets(p.secrets, p.allSecrets, len(ts))
	if err != nil {
		return nil, nil, nil, err
	}
	return gp.Gram(k, ts), ts, secrets, nil
}

func (p *cipPriorFlags) axis() ([]float64, error) {
	given := 0
	for _, b := range []bool{p.n != 0, p.times != "", p.traceFile != ""} {
		if b {
			given++
		}
	}
	if given != 1 {
		return nil, usageErrorf("give exactly one of --n, --times and --trace")
	}
	switch {
	case p.n != 0:
		if p.n < 1 {
			return nil, usageErrorf("--n: must be positive, got %d", p.n)
		}
		return gp.Indices(p.n), nil
	case p.times != "":
		var ts []float64
		for i, f := range strings.Split(p.times, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, usageErrorf("--times: item %d (%q) is not a finite number", i+1, f)
			}
			if i > 0 && !(v > ts[i-1]) {
				return nil, usageErrorf("--times: item %d (%v) is not after item %d (%v)", i+1, v, i, ts[i-1])
			}
			ts = append(ts, v)
		}
		return ts, nil
	default:
		if st, err := os.Stat(p.traceFile); err == nil && st.IsDir() {
			return nil, usageErrorf("--trace %s is a directory; give one trace file", p.traceFile)
		}
		trs, rep, err := p.rf.read(p.traceFile)
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
}

// inputSummary is the --json block about --trace, nil without it.
func (p *cipPriorFlags) inputSummary() *trace.InputSummary {
	if p.read == nil {
		return nil
	}
	in := p.read.Summary()
	return &in
}

// parseSecrets reads --secret values ("24" basic, "24,25" compound).
func parseSecrets(specs []string, all bool, n int) ([]cip.Secret, error) {
	if all == (len(specs) > 0) {
		return nil, usageErrorf("give --secret (one or more) or --all-secrets")
	}
	if all {
		return cip.EveryPoint(n), nil
	}
	out := make([]cip.Secret, len(specs))
	for k, spec := range specs {
		for _, f := range strings.Split(spec, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, usageErrorf("--secret %q: %q is not an index", spec, f)
			}
			out[k].Indices = append(out[k].Indices, i)
		}
		if err := out[k].Validate(n); err != nil {
			return nil, fmt.Errorf("--secret %q: %w", spec, err)
		}
	}
	return out, nil
}

// cipReport is the JSON of "cip loss" and "cip design": the library's
// Assessment with what the command adds around it.
type cipReport struct {
	// Method is the designer that ran (cip.Method's canonical string) and
	// Solver how it solved its program ("cip design" only).
	Method cip.Method `json:"method,omitempty"`
	Solver string     `json:"solver,omitempty"`
	Kernel string     `json:"kernel"`
	*cip.Assessment
	// The rows skipped or merged reading --trace, whose indices the
	// secrets refer to (absent without --trace).
	*trace.InputSummary
	// LowerBound is the (E3) designer's proven lower bound on the least
	// budget that meets the target (target mode).
	LowerBound *float64 `json:"budget_lower_bound,omitempty"`
	NoiseFile  string   `json:"noise_file,omitempty"`
	// Rigid are the windows moved rigidly ("cip loss --rigid", --route).
	Rigid   []rigidReport `json:"rigid,omitempty"`
	Seconds float64       `json:"seconds"`
}

// rigidReport is the loss of a window of points moved rigidly (a place,
// or with every point the route): against the prior's adversary who
// conditions on the window (cip.RigidLossFactor), and against one who
// believes the person stood still there (cip.StillLossFactor).
type rigidReport struct {
	First           int      `json:"first"`
	Last            int      `json:"last"`
	Points          int      `json:"points"`
	LossFactor      float64  `json:"loss_factor"`
	StillLossFactor float64  `json:"stood_still_loss_factor"`
	Epsilon         *float64 `json:"epsilon,omitempty"`
	StillEpsilon    *float64 `json:"stood_still_epsilon,omitempty"`
}

// rigidWindows evaluates --rigid A:B windows (0-based, inclusive) and
// --route.
func rigidWindows(specs []string, route bool, sigma, g mat.Symmetric, priv privacyFlags, withEps bool) ([]rigidReport, error) {
	n := sigma.SymmetricDim()
	if route {
		specs = append(specs, fmt.Sprintf("0:%d", n-1))
	}
	var out []rigidReport
	for _, spec := range specs {
		a, b, ok := strings.Cut(spec, ":")
		i, err1 := strconv.Atoi(strings.TrimSpace(a))
		j, err2 := strconv.Atoi(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil || i < 0 || j < i || j >= n {
			return nil, usageErrorf("--rigid %q: want FIRST:LAST, 0-based point indices with 0 <= FIRST <= LAST < %d", spec, n)
		}
		s := cip.Secret{Indices: make([]int, 0, j-i+1)}
		for k := i; k <= j; k++ {
			s.Indices = append(s.Indices, k)
		}
		r := rigidReport{First: i, Last: j, Points: j - i + 1}
		var err error
		if r.LossFactor, err = cip.RigidLossFactor(sigma, g, s); err != nil {
			return nil, fmt.Errorf("--rigid %q: %w", spec, err)
		}
		if r.StillLossFactor, err = cip.StillLossFactor(g, s); err != nil {
			return nil, fmt.Errorf("--rigid %q: %w", spec, err)
		}
		if withEps {
			// A rigid move of up to r in the plane: lambda/2 r^2 L.
			e, es := cip.Epsilon(r.LossFactor, priv.lambda, priv.radius, 1), cip.Epsilon(r.StillLossFactor, priv.lambda, priv.radius, 1)
			r.Epsilon, r.StillEpsilon = &e, &es
		}
		out = append(out, r)
	}
	return out, nil
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

func init() {
	register(func(env *cli.Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "cip",
			Short: "Conditional inferential privacy: exact loss of Gaussian noise, and noise design",
			Long: `Conditional inferential privacy (Meehan & Chaudhuri, AISTATS 2021) under a
Gaussian-process prior on one dimension of a trace. The prior is a kernel
evaluated at the points' times (--n for the paper's sample indices, --times,
or --trace for a trace's timestamps); secrets are sets of point indices.

The loss factor L of a secret is lambda_max(At^T (Ct + SigmaG)^-1 At), the
exact Rényi loss of any Gaussian noise N(0, SigmaG) ((E1) of docs/cip-math.md);
epsilon(lambda) = lambda/2 * k * r^2 * L for a secret of k locations each
within r.`,
			Example: `  tracepriv cip loss --kernel rbf --lengthscale 6 --n 50 --iid 0.02 --secret 24 --lambda 2 --radius 1
  tracepriv cip design --kernel rbf --lengthscale 6 --n 50 --secret 24 --budget 1
  tracepriv cip envelope --prior internal/sample/prior.json`,
		}
		cmd.AddCommand(cipLossCmd(env), cipDesignCmd(env), cipEnvelopeCmd(env))
		return cmd
	})
}

func cipLossCmd(env *cli.Env) *cobra.Command {
	var (
		prior     cipPriorFlags
		priv      privacyFlags
		noiseFile string
		iid       float64
		rigid     []string
		route     bool
	)
	c := &cobra.Command{
		Use:   "loss (--noise FILE.csv | --iid VAR) [prior flags] (--secret I[,J...] | --all-secrets) [--rigid FIRST:LAST] [--route]",
		Short: "Certify the exact CIP loss of a Gaussian noise covariance",
		Long: `Certify the exact CIP loss (E1) of adding N(0, SigmaG) to a trace, for each
secret, from one factorisation. SigmaG is a matrix file (--noise; n rows of n
numbers separated by commas or spaces, # comment lines allowed, symmetric to
1e-9 of its largest entry, as "cip design --noise-out" writes) or independent
noise of variance VAR on every point (--iid). Also prints Theorem 3.4's bound
when SigmaG has no cross terms between a secret and the rest.`,
		Example: `  tracepriv cip loss --kernel rbf --lengthscale 6 --n 50 --iid 0.02 --secret 24 --lambda 2 --radius 1
  tracepriv cip design --kernel rbf --lengthscale 6 --n 50 --secret 24 --budget 1 --noise-out noise.csv
  tracepriv cip loss --kernel rbf --lengthscale 6 --n 50 --noise noise.csv --secret 24 --secret 20,21 --json
  tracepriv cip loss --kernel rbf --variance 100 --lengthscale 20 --trace internal/sample/synth-1/commute.plt --iid 400 --all-secrets --lambda 2 --radius 100
  # a place (points 100-199 moved rigidly) and the route, from the noise a release used
  tracepriv sanitize --in internal/sample/synth-1/commute.plt --out place.plt --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100 --noise-out place-noise.csv --force
  tracepriv cip loss --kernel matern32 --variance 100 --lengthscale 600 --trace internal/sample/synth-1/commute.plt --noise place-noise.csv --secret 0 --rigid 100:199 --route --lambda 2 --radius 100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			f := cmd.Flags()
			if err := priv.check(f); err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			sigma, _, secrets, err := prior.build()
			if err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			reportSkipped(env, prior.read)
			n := sigma.SymmetricDim()
			var g *mat.SymDense
			switch {
			case f.Changed("noise") == f.Changed("iid"):
				return usageErrorf("cip loss: give --noise FILE or --iid VAR")
			case f.Changed("iid"):
				if g, err = cip.IndependentUniform(n, iid*float64(n)); err != nil {
					return fmt.Errorf("cip loss: --iid: %w", err)
				}
			default:
				if g, err = readNoise(noiseFile, n); err != nil {
					return fmt.Errorf("cip loss: %w", err)
				}
			}
			opt := priv.options(f)
			opt.BlockDiagonalBound = true
			a, err := cip.Assess(sigma, g, secrets, opt)
			if err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			rep := cipReport{Kernel: prior.kernel, Assessment: a, InputSummary: prior.inputSummary()}
			if rep.Rigid, err = rigidWindows(rigid, route, sigma, g, priv, f.Changed("lambda")); err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			rep.Seconds = time.Since(start).Seconds()
			return env.Emit(rep, func(w io.Writer) error { return cipText(w, &rep) })
		},
	}
	prior.register(c.Flags())
	priv.register(c.Flags())
	c.Flags().StringVar(&noiseFile, "noise", "", "noise covariance SigmaG as a matrix file (rows of comma- or space-separated numbers)")
	c.Flags().Float64Var(&iid, "iid", 0, "independent noise of this variance on every point")
	c.Flags().StringArrayVar(&rigid, "rigid", nil, "a window FIRST:LAST (0-based point indices, inclusive) moved rigidly, a place: its loss against the prior's adversary conditioning on it and against one who believes the person stood still there; repeat for several")
	c.Flags().BoolVar(&route, "route", false, "also the whole trace moved rigidly (the route)")
	return c
}

func cipDesignCmd(env *cli.Env) *cobra.Command {
	var (
		prior     cipPriorFlags
		priv      privacyFlags
		method    string
		budget    float64
		stab      float64
		targetEps float64
		noiseOut  string
	)
	c := &cobra.Command{
		Use:   "design [prior flags] (--secret I[,J...] | --all-secrets) (--budget B | --target-epsilon E --lambda L --radius R) [--method e3|paper]",
		Short: "Design Gaussian noise for CIP and certify its loss",
		Long: `Design the noise covariance SigmaG of total variance --budget (tr SigmaG, the
summed mean squared error) that protects the secrets, and certify its exact
loss (E1) for every secret. The design is cip.DesignNoise's; the report
names the method that ran as certificates do (see "go doc cip.Method").

--method e3 (default; "optimal" is its older name): the exact optimum
(docs/cip-math.md): the closed form (E2) for one basic secret (solver e2),
the program (E3) for anything else (compound secrets, several secrets,
--all-secrets; solver e3-barrier, or proportional when noise shaped like the
prior is optimal). Budget mode (--budget B) minimises the worst epsilon at
total noise B; target mode (--target-epsilon E --lambda L --radius R) finds
the least total noise with epsilon <= E for every secret (a secret of k
locations within R each), and reports (E3)'s proven lower bound on that
least noise.
--method paper: Meehan & Chaudhuri's SDP_A for one secret (method
paper-sdp-a; solved exactly, --stab sets the authors' stabilisation factor)
and Algorithm 1, Multiple Secrets (method paper-multiple-secrets: SDP_A per
secret with --budget each, then SDP_B), for several; the total noise of
Multiple Secrets is then what SDP_B returns.
The kernel designs for prior families (proportional, envelope) are
sanitize's --design.

--noise-out FILE writes SigmaG as a CSV matrix for "cip loss --noise"
(rows of comma-separated values; see "cip loss --help").`,
		Example: `  tracepriv cip design --kernel rbf --lengthscale 6 --n 50 --secret 24 --budget 1
  tracepriv cip design --kernel rbf --lengthscale 6 --n 50 --secret 24 --budget 1 --method paper
  tracepriv cip design --kernel rbf --lengthscale 3 --n 20 --all-secrets --target-epsilon 1 --lambda 2 --radius 0.5 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			f := cmd.Flags()
			if err := priv.check(f); err != nil {
				return fmt.Errorf("cip design: %w", err)
			}
			sigma, _, secrets, err := prior.build()
			if err != nil {
				return fmt.Errorf("cip design: %w", err)
			}
			reportSkipped(env, prior.read)
			target := f.Changed("target-epsilon")
			if target == f.Changed("budget") {
				return usageErrorf("cip design: give --budget B (least loss at that noise) or --target-epsilon E with --lambda and --radius (least noise for that loss)")
			}
			if target && (!f.Changed("lambda") || !(targetEps > 0)) {
				return usageErrorf("cip design: --target-epsilon needs a positive value, --lambda and --radius")
			}
			m, err := cip.ParseMethod(method)
			if err != nil {
				return fmt.Errorf("cip design: --method: %w", err)
			}
			if m.Kernel() {
				return usageErrorf("cip design: --method %s designs noise for a prior family: use tracepriv sanitize --design %s (tracepriv cip envelope shows its noise kernel)", m, m)
			}
			req := cip.DesignRequest{Method: m, Sigma: sigma, Secrets: secrets, Paper: &cip.PaperOptions{Stabilisation: stab}}
			if target {
				if req.Targets, err = cip.TargetLossFactors(secrets, targetEps, priv.lambda, priv.radius); err != nil {
					return fmt.Errorf("cip design: %w", err)
				}
			} else {
				req.Budget = budget
			}
			finish := func() {}
			req.Progress = func(stage string) {
				finish()
				bar := env.Progress(1, stage)
				finish = func() { bar.Finish() }
			}
			d, err := cip.DesignNoise(req)
			finish()
			if err != nil {
				return fmt.Errorf("cip design: %w", err)
			}
			g := d.SigmaG
			a, err := d.Assess(sigma, secrets, priv.options(f))
			if err != nil {
				return fmt.Errorf("cip design: %w", err)
			}
			rep := cipReport{Method: d.Method, Solver: d.Solver, Kernel: prior.kernel, Assessment: a, InputSummary: prior.inputSummary()}
			if target && d.Set != nil {
				rep.LowerBound = ptr(d.LowerBound)
			}
			if noiseOut != "" {
				if err := matfile.WriteFile(noiseOut, g); err != nil {
					return fmt.Errorf("cip design: %w", err)
				}
				rep.NoiseFile = noiseOut
			}
			rep.Seconds = time.Since(start).Seconds()
			return env.Emit(rep, func(w io.Writer) error { return cipText(w, &rep) })
		},
	}
	prior.register(c.Flags())
	priv.register(c.Flags())
	c.Flags().StringVar(&method, "method", string(cip.MethodE3), "e3 (tracepriv's exact optimum; also optimal), paper (Meehan & Chaudhuri's SDPs), paper-sdp-a or paper-multiple-secrets")
	c.Flags().Float64Var(&budget, "budget", 0, "budget mode: total noise variance tr(SigmaG)")
	c.Flags().Float64Var(&targetEps, "target-epsilon", 0, "target mode: the least noise with epsilon <= E for every secret at --lambda, --radius")
	c.Flags().Float64Var(&stab, "stab", 1, "with --method paper: the authors' stabilisation factor (1 = exact solve)")
	c.Flags().StringVar(&noiseOut, "noise-out", "", "write the noise covariance as a CSV matrix")
	return c
}

func cipText(w io.Writer, rep *cipReport) error {
	if rep.Method != "" {
		fmt.Fprintf(w, "method %s", rep.Method)
		if rep.Solver != "" {
			fmt.Fprintf(w, " (solver %s)", rep.Solver)
		}
		fmt.Fprint(w, ", ")
	}
	fmt.Fprintf(w, "kernel %s, n = %d, total noise tr(SigmaG) = %.6g\n", rep.Kernel, rep.N, rep.Budget)
	fmt.Fprintf(w, "worst loss factor %.6g", rep.LossFactor)
	if rep.Epsilon != nil {
		fmt.Fprintf(w, ", epsilon %.6g at lambda %g, r %g", *rep.Epsilon, *rep.Lambda, *rep.Radius)
	}
	fmt.Fprintf(w, "; posterior 2-sigma %.4g\n", rep.Posterior2Sigma)
	if len(rep.Secrets) <= 20 {
		for i, s := range rep.Secrets {
			fmt.Fprintf(w, "  secret %v: loss factor %.6g", s.Indices, s.LossFactor)
			if s.Epsilon != nil {
				fmt.Fprintf(w, ", epsilon %.6g", *s.Epsilon)
			}
			if s.Gap != nil {
				fmt.Fprintf(w, ", prior-posterior gap %.6g at delta %g", *s.Gap, *rep.Delta)
			}
			if i < len(rep.BlockDiagonalBound) {
				fmt.Fprintf(w, " (Theorem 3.4 bound %.6g)", rep.BlockDiagonalBound[i])
			}
			fmt.Fprintln(w)
		}
	}
	for _, r := range rep.Rigid {
		fmt.Fprintf(w, "  points %d-%d moved rigidly: loss factor %.6g conditioned, %.6g stood still", r.First, r.Last, r.LossFactor, r.StillLossFactor)
		if r.Epsilon != nil {
			fmt.Fprintf(w, "; epsilon %.6g and %.6g", *r.Epsilon, *r.StillEpsilon)
		}
		fmt.Fprintln(w)
	}
	if rep.Jitter > 0 {
		fmt.Fprintf(w, "  factorisation jitter %.3g (certified for SigmaG + jitter I)\n", rep.Jitter)
	}
	if rep.NoiseFile != "" {
		fmt.Fprintf(w, "  wrote %s\n", rep.NoiseFile)
	}
	return nil
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
