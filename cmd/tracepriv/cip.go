package main

import (
	"encoding/csv"
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
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
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
		return nil, nil, nil, fmt.Errorf("--kernel: %q is not one of %s", p.kernel, strings.Join(gp.KernelNames, ", "))
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
		return nil, errors.New("give exactly one of --n, --times and --trace")
	}
	switch {
	case p.n != 0:
		if p.n < 1 {
			return nil, fmt.Errorf("--n: must be positive, got %d", p.n)
		}
		return gp.Indices(p.n), nil
	case p.times != "":
		var ts []float64
		for i, f := range strings.Split(p.times, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("--times: item %d (%q) is not a finite number", i+1, f)
			}
			if i > 0 && !(v > ts[i-1]) {
				return nil, fmt.Errorf("--times: item %d (%v) is not after item %d (%v)", i+1, v, i, ts[i-1])
			}
			ts = append(ts, v)
		}
		return ts, nil
	default:
		if st, err := os.Stat(p.traceFile); err == nil && st.IsDir() {
			return nil, fmt.Errorf("--trace %s is a directory; give one trace file", p.traceFile)
		}
		trs, rep, err := p.rf.read(p.traceFile)
		p.read = rep
		if err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		if len(trs) != 1 {
			return nil, fmt.Errorf("--trace %s: holds %d traces; give a file with one", p.traceFile, len(trs))
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

// inputJSON is the --json block about --trace, nil without it.
func (p *cipPriorFlags) inputJSON() *inputJSON {
	if p.read == nil {
		return nil
	}
	in := inputSummary(p.read)
	return &in
}

// parseSecrets reads --secret values ("24" basic, "24,25" compound).
func parseSecrets(specs []string, all bool, n int) ([]cip.Secret, error) {
	if all == (len(specs) > 0) {
		return nil, errors.New("give --secret (one or more) or --all-secrets")
	}
	if all {
		return cip.EveryPoint(n), nil
	}
	out := make([]cip.Secret, len(specs))
	for k, spec := range specs {
		for _, f := range strings.Split(spec, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("--secret %q: %q is not an index", spec, f)
			}
			out[k].Indices = append(out[k].Indices, i)
		}
		if err := out[k].Validate(n); err != nil {
			return nil, fmt.Errorf("--secret %q: %w", spec, err)
		}
	}
	return out, nil
}

// cipSecretReport is one secret's line of a loss or design report.
type cipSecretReport struct {
	Indices    []int    `json:"indices"`
	LossFactor float64  `json:"loss_factor"`
	Epsilon    *float64 `json:"epsilon,omitempty"`
	// Gap is the prior-posterior gap of Theorem 3.1 at --delta.
	Gap *float64 `json:"prior_posterior_gap,omitempty"`
}

// cipReport is the JSON of "cip loss" and "cip design".
type cipReport struct {
	Method string `json:"method,omitempty"`
	Kernel string `json:"kernel"`
	N      int    `json:"n"`
	// Budget is tr(SigmaG), the total noise variance (mean squared error
	// summed over the points).
	Budget float64 `json:"budget"`
	// LossFactor is the worst exact (E1) loss factor over the secrets.
	LossFactor float64 `json:"loss_factor"`
	// Epsilon is the worst epsilon(lambda) over the secrets, with --lambda
	// and --radius.
	Epsilon *float64 `json:"epsilon,omitempty"`
	Lambda  *float64 `json:"lambda,omitempty"`
	Radius  *float64 `json:"radius,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	// Posterior2Sigma is the paper's posterior metric for the secret set:
	// 2 sqrt(posterior variance) for one basic secret, 2 sqrt(lambda_min)
	// of the posterior block for one compound secret, 2 sqrt(mean
	// posterior variance over the secrets' points) otherwise.
	Posterior2Sigma float64           `json:"posterior_2sigma"`
	Secrets         []cipSecretReport `json:"secrets"`
	// The rows skipped or merged reading --trace, whose indices the
	// secrets refer to (absent without --trace).
	*inputJSON
	// Theorem34 is the paper's bound, for noise without cross terms
	// between a secret and the rest ("cip loss" only).
	Theorem34 []float64 `json:"theorem_3_4_bound,omitempty"`
	// LowerBound is the (E3) designer's proven lower bound on the least
	// budget that meets the target (target mode).
	LowerBound *float64 `json:"budget_lower_bound,omitempty"`
	Jitter     float64  `json:"jitter"`
	NoiseFile  string   `json:"noise_file,omitempty"`
	Seconds    float64  `json:"seconds"`
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
		return errors.New("--lambda and --radius go together")
	}
	if f.Changed("lambda") {
		if _, err := cip.TargetLossFactor(1, p.lambda, p.radius, 1); err != nil {
			return fmt.Errorf("--lambda/--radius: need lambda > 1 and radius > 0, got %v and %v", p.lambda, p.radius)
		}
	}
	if f.Changed("delta") && (!f.Changed("lambda") || !(p.delta > 0 && p.delta < 1)) {
		return errors.New("--delta needs --lambda and --radius and a value in (0, 1)")
	}
	return nil
}

// fill completes rep from the design's noise and per-secret loss factors.
func (p *privacyFlags) fill(f *pflag.FlagSet, rep *cipReport, sigma, g *mat.SymDense, secrets []cip.Secret, losses []float64) error {
	rep.N = sigma.SymmetricDim()
	rep.Budget = mat.Trace(g)
	withEps := f.Changed("lambda")
	if withEps {
		rep.Lambda, rep.Radius = ptr(p.lambda), ptr(p.radius)
	}
	if f.Changed("delta") {
		rep.Delta = ptr(p.delta)
	}
	for i, s := range secrets {
		sr := cipSecretReport{Indices: s.Indices, LossFactor: losses[i]}
		rep.LossFactor = math.Max(rep.LossFactor, losses[i])
		if withEps {
			e := cip.Epsilon(losses[i], p.lambda, p.radius, s.Locations())
			sr.Epsilon = &e
			if rep.Epsilon == nil || e > *rep.Epsilon {
				rep.Epsilon = ptr(e)
			}
			if rep.Delta != nil && !math.IsInf(e, 1) {
				gap, err := cip.PriorPosteriorGap(e, p.lambda, p.delta)
				if err != nil {
					return err
				}
				sr.Gap = &gap
			}
		}
		rep.Secrets = append(rep.Secrets, sr)
	}
	post, err := cip.NewPosterior(sigma, g)
	if err != nil {
		return err
	}
	switch {
	case len(secrets) == 1:
		rep.Posterior2Sigma, err = post.TwoSigma(secrets[0])
	default:
		var idx []int
		seen := map[int]bool{}
		for _, s := range secrets {
			for _, i := range s.Indices {
				if !seen[i] {
					seen[i] = true
					idx = append(idx, i)
				}
			}
		}
		rep.Posterior2Sigma = post.MeanTwoSigma(idx)
	}
	return err
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
	)
	c := &cobra.Command{
		Use:   "loss (--noise FILE.csv | --iid VAR) [prior flags] (--secret I[,J...] | --all-secrets)",
		Short: "Certify the exact CIP loss of a Gaussian noise covariance",
		Long: `Certify the exact CIP loss (E1) of adding N(0, SigmaG) to a trace, for each
secret, from one factorisation. SigmaG is a CSV matrix (--noise; n rows of n
comma-separated numbers, as "cip design --noise-out" writes) or independent
noise of variance VAR on every point (--iid). Also prints Theorem 3.4's bound
when SigmaG has no cross terms between a secret and the rest.`,
		Example: `  tracepriv cip loss --kernel rbf --lengthscale 6 --n 50 --iid 0.02 --secret 24 --lambda 2 --radius 1
  tracepriv cip design --kernel rbf --lengthscale 6 --n 50 --secret 24 --budget 1 --noise-out noise.csv
  tracepriv cip loss --kernel rbf --lengthscale 6 --n 50 --noise noise.csv --secret 24 --secret 20,21 --json
  tracepriv cip loss --kernel rbf --variance 100 --lengthscale 20 --trace internal/sample/geolife-000-20081024020959.plt --iid 400 --all-secrets --lambda 2 --radius 100`,
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
				return errors.New("cip loss: give --noise FILE or --iid VAR")
			case f.Changed("iid"):
				if g, err = cip.IndependentUniform(n, iid*float64(n)); err != nil {
					return fmt.Errorf("cip loss: --iid: %w", err)
				}
			default:
				if g, err = readNoiseCSV(noiseFile, n); err != nil {
					return fmt.Errorf("cip loss: %w", err)
				}
			}
			ev, err := cip.NewEvaluator(sigma, g)
			if err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			losses, err := ev.LossFactors(secrets)
			if err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			rep := cipReport{Kernel: prior.kernel, Jitter: ev.Jitter(), inputJSON: prior.inputJSON()}
			if err := priv.fill(f, &rep, sigma, g, secrets, losses); err != nil {
				return fmt.Errorf("cip loss: %w", err)
			}
			for _, s := range secrets {
				b, err := cip.Theorem34Bound(sigma, g, s)
				if err != nil {
					rep.Theorem34 = nil // cross terms: the bound does not apply
					break
				}
				rep.Theorem34 = append(rep.Theorem34, b)
			}
			rep.Seconds = time.Since(start).Seconds()
			return env.Emit(rep, func(w io.Writer) error { return cipText(w, &rep) })
		},
	}
	prior.register(c.Flags())
	priv.register(c.Flags())
	c.Flags().StringVar(&noiseFile, "noise", "", "noise covariance SigmaG as a CSV matrix")
	c.Flags().Float64Var(&iid, "iid", 0, "independent noise of this variance on every point")
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
		Use:   "design [prior flags] (--secret I[,J...] | --all-secrets) (--budget B | --target-epsilon E --lambda L --radius R) [--method optimal|paper]",
		Short: "Design Gaussian noise for CIP and certify its loss",
		Long: `Design the noise covariance SigmaG of total variance --budget (tr SigmaG, the
summed mean squared error) that protects the secrets, and certify its exact
loss (E1) for every secret.

--method optimal (default): the exact optimum (docs/cip-math.md): the closed form
(E2) for one basic secret, the program (E3) for anything else (compound
secrets, several secrets, --all-secrets). Budget mode (--budget B) minimises
the worst epsilon at total noise B; target mode (--target-epsilon E --lambda
L --radius R) finds the least total noise with epsilon <= E for every secret
(a secret of k locations within R each), and reports (E3)'s proven lower
bound on that least noise.
--method paper: Meehan & Chaudhuri's SDP_A for one secret (solved exactly;
--stab sets the authors' stabilisation factor) and Algorithm 1, Multiple
Secrets (SDP_A per secret with --budget each, then SDP_B), for several; the
total noise of Multiple Secrets is then what SDP_B returns.

--noise-out FILE writes SigmaG as a CSV matrix for "cip loss --noise".`,
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
				return errors.New("cip design: give --budget B (least loss at that noise) or --target-epsilon E with --lambda and --radius (least noise for that loss)")
			}
			if target && (!f.Changed("lambda") || !(targetEps > 0)) {
				return errors.New("cip design: --target-epsilon needs a positive value, --lambda and --radius")
			}
			if target && method == "paper" {
				return errors.New("cip design: the paper's mechanisms have no target mode; use --budget")
			}
			var g *mat.SymDense
			rep := cipReport{Method: method, Kernel: prior.kernel, inputJSON: prior.inputJSON()}
			switch method {
			case "paper":
				opts := &cip.PaperOptions{Stabilisation: stab}
				if len(secrets) == 1 {
					d, err := cip.PaperSDPA(sigma, secrets[0], budget, opts)
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					g, rep.Jitter = d.SigmaG, d.Jitter
				} else {
					bar := env.Progress(len(secrets)+1, "Multiple Secrets")
					d, _, err := cip.PaperMultipleSecrets(sigma, secrets, budget, opts)
					bar.Finish()
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					g, rep.Jitter = d.SigmaG, d.Jitter
				}
			case "optimal":
				basic := len(secrets) == 1 && len(secrets[0].Indices) == 1
				switch {
				case target && basic:
					t, err := cip.TargetLossFactor(targetEps, priv.lambda, priv.radius, 1)
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					d, err := cip.OptimalBasicTarget(sigma, secrets[0].Indices[0], t)
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					g, rep.Jitter = d.SigmaG, d.Jitter
				case target:
					ts := make([]float64, len(secrets))
					for i, s := range secrets {
						if ts[i], err = cip.TargetLossFactor(targetEps, priv.lambda, priv.radius, s.Locations()); err != nil {
							return fmt.Errorf("cip design: %w", err)
						}
					}
					bar := env.Progress(1, "(E3) target mode")
					d, err := cip.OptimalTarget(sigma, secrets, ts, nil)
					bar.Finish()
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					g, rep.Jitter, rep.LowerBound, rep.Method = d.SigmaG, d.Jitter, ptr(d.LowerBound), "optimal ("+d.Method+")"
				case basic:
					d, err := cip.OptimalBasic(sigma, secrets[0].Indices[0], budget)
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					g, rep.Jitter = d.SigmaG, d.Jitter
				default:
					bar := env.Progress(1, "(E3) budget mode")
					d, err := cip.OptimalBudget(sigma, secrets, budget, nil)
					bar.Finish()
					if err != nil {
						return fmt.Errorf("cip design: %w", err)
					}
					g, rep.Jitter, rep.Method = d.SigmaG, d.Jitter, "optimal ("+d.Method+")"
				}
			default:
				return fmt.Errorf("cip design: --method: %q is not optimal or paper", method)
			}
			losses, err := cip.LossFactors(sigma, g, secrets)
			if err != nil {
				return fmt.Errorf("cip design: %w", err)
			}
			if err := priv.fill(f, &rep, sigma, g, secrets, losses); err != nil {
				return fmt.Errorf("cip design: %w", err)
			}
			if noiseOut != "" {
				if err := writeNoiseCSV(noiseOut, g); err != nil {
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
	c.Flags().StringVar(&method, "method", "optimal", "optimal (tracepriv's exact optimum) or paper (Meehan & Chaudhuri's SDPs)")
	c.Flags().Float64Var(&budget, "budget", 0, "budget mode: total noise variance tr(SigmaG)")
	c.Flags().Float64Var(&targetEps, "target-epsilon", 0, "target mode: the least noise with epsilon <= E for every secret at --lambda, --radius")
	c.Flags().Float64Var(&stab, "stab", 1, "with --method paper: the authors' stabilisation factor (1 = exact solve)")
	c.Flags().StringVar(&noiseOut, "noise-out", "", "write the noise covariance as a CSV matrix")
	return c
}

func cipText(w io.Writer, rep *cipReport) error {
	if rep.Method != "" {
		fmt.Fprintf(w, "method %s, ", rep.Method)
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
			if i < len(rep.Theorem34) {
				fmt.Fprintf(w, " (Theorem 3.4 bound %.6g)", rep.Theorem34[i])
			}
			fmt.Fprintln(w)
		}
	}
	if rep.Jitter > 0 {
		fmt.Fprintf(w, "  factorisation jitter %.3g (certified for SigmaG + jitter I)\n", rep.Jitter)
	}
	if rep.NoiseFile != "" {
		fmt.Fprintf(w, "  wrote %s\n", rep.NoiseFile)
	}
	return nil
}

// writeNoiseCSV writes g as n rows of n comma-separated values, with
// enough digits to read back exactly.
func writeNoiseCSV(path string, g mat.Symmetric) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		n := g.SymmetricDim()
		var b []byte
		for i := range n {
			b = b[:0]
			for j := range n {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, g.At(i, j), 'g', -1, 64)
			}
			b = append(b, '\n')
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// readNoiseCSV reads an n x n noise covariance written as CSV rows. It
// must be symmetric (to 1e-9 relative) and positive semidefinite (to
// rounding), as a covariance is.
func readNoiseCSV(path string, n int) (*mat.SymDense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = n
	r.ReuseRecord = true
	data := make([]float64, 0, n*n)
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			if line-1 != n {
				return nil, fmt.Errorf("%s: %d rows, the prior has %d points", path, line-1, n)
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (the prior has %d points)", path, err, n)
		}
		if line > n {
			return nil, fmt.Errorf("%s:%d: more than %d rows", path, line, n)
		}
		for j, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: column %d: %q is not a finite number", path, line, j+1, s)
			}
			data = append(data, v)
		}
	}
	scale := 0.0
	for _, v := range data {
		scale = math.Max(scale, math.Abs(v))
	}
	g := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			a, b := data[i*n+j], data[j*n+i]
			if math.Abs(a-b) > 1e-9*scale {
				return nil, fmt.Errorf("%s: not symmetric: row %d column %d is %v, row %d column %d is %v", path, i+1, j+1, a, j+1, i+1, b)
			}
			g.SetSym(i, j, (a+b)/2)
		}
	}
	var e mat.EigenSym
	if !e.Factorize(g, false) {
		return nil, fmt.Errorf("%s: eigendecomposition failed", path)
	}
	if lo := e.Values(nil)[0]; lo < -1e-9*math.Max(scale, 1e-300)*float64(n) {
		return nil, fmt.Errorf("%s: not positive semidefinite (smallest eigenvalue %v): not a covariance", path, lo)
	}
	return g, nil
}
