package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// CIPPriorFlags are the flags that describe a GP prior on the time axis of
// a trace: a kernel and where it is evaluated.
type CIPPriorFlags struct {
	Kernel                        string
	variance, lengthscale, period float64
	n                             int
	times, traceFile              string
	secrets                       []string
	allSecrets                    bool
	rf                            ReadFlags
	// read reports what reading --trace skipped (nil without --trace).
	read *trace.Report
}

// Register adds the flags to f.
func (p *CIPPriorFlags) Register(f *pflag.FlagSet) {
	f.StringVar(&p.Kernel, "kernel", "rbf", "kernel: rbf, periodic, matern32 or matern52")
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

// Load checks the privacy flags, builds the prior's covariance and
// secrets, and reports what reading the input skipped: the start that
// cip loss and cip design share.
func (p *CIPPriorFlags) Load(env *Env, priv *PrivacyFlags, f *pflag.FlagSet) (*mat.SymDense, []cip.Secret, error) {
	if err := priv.Check(f); err != nil {
		return nil, nil, err
	}
	sigma, secrets, err := p.build()
	if err != nil {
		return nil, nil, err
	}
	env.ReportSkipped(p.read)
	return sigma, secrets, nil
}

func (p *CIPPriorFlags) build() (*mat.SymDense, []cip.Secret, error) {
	if !slices.Contains(gp.KernelNames, p.Kernel) {
		return nil, nil, usagef("--kernel: %q is not one of %s", p.Kernel, strings.Join(gp.KernelNames, ", "))
	}
	k, err := gp.NewKernel(p.Kernel, p.variance, p.lengthscale, p.period)
	if err != nil {
		return nil, nil, usagef("--kernel %s: %w (set --variance, --lengthscale and, for periodic, --period)", p.Kernel, err)
	}
	ts, err := p.axis()
	if err != nil {
		return nil, nil, err
	}
	// Checked before the n x n prior is formed: --n 1e11 ran out of memory.
	if err := checkDense(len(ts)); err != nil {
		return nil, nil, err
	}
	secrets, err := p.parseSecrets(len(ts))
	if err != nil {
		return nil, nil, err
	}
	return gp.Gram(k, ts), secrets, nil
}

// checkDense refuses more points than the dense path holds
// (sanitize.DefaultMaxDensePoints).
func checkDense(n int) error {
	if n > sanitize.DefaultMaxDensePoints {
		return usagef("%d points (--n, --times or --trace): the exact loss is dense, its matrices grow as the square of the points; give at most %d (sanitize --path linear releases longer traces)", n, sanitize.DefaultMaxDensePoints)
	}
	return nil
}

func (p *CIPPriorFlags) axis() ([]float64, error) {
	given := 0
	for _, b := range []bool{p.n != 0, p.times != "", p.traceFile != ""} {
		if b {
			given++
		}
	}
	switch {
	case given != 1:
		return nil, usagef("give exactly one of --n, --times and --trace")
	case p.n != 0:
		if p.n < 1 {
			return nil, usagef("--n: must be positive, got %d", p.n)
		}
		if err := checkDense(p.n); err != nil {
			return nil, err // before --n 1e11 points are allocated
		}
		return gp.Indices(p.n), nil
	case p.times != "":
		ts, err := cip.ParseTimes(p.times)
		if pe := (*param.Error)(nil); errors.As(err, &pe) {
			return nil, usagef("--times: %s", pe.Why)
		}
		return ts, err
	}
	if st, err := os.Stat(p.traceFile); err == nil && st.IsDir() {
		return nil, usagef("--trace %s is a directory; give one trace file", p.traceFile)
	}
	trs, rep, err := p.rf.Read(p.traceFile)
	p.read = rep
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	if len(trs) != 1 {
		return nil, usagef("--trace %s: holds %d traces; give a file with one", p.traceFile, len(trs))
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
func (p *CIPPriorFlags) parseSecrets(n int) ([]cip.Secret, error) {
	if p.allSecrets == (len(p.secrets) > 0) {
		return nil, usagef("give --secret (one or more) or --all-secrets")
	}
	if p.allSecrets {
		return cip.EveryPoint(n), nil
	}
	out := make([]cip.Secret, len(p.secrets))
	for k, spec := range p.secrets {
		var err error
		out[k], err = cip.ParseSecret(spec, n)
		if pe := (*param.Error)(nil); errors.As(err, &pe) {
			return nil, usagef("--secret %q: %s", spec, pe.Why)
		} else if err != nil {
			return nil, fmt.Errorf("--secret %q: %w", spec, err)
		}
	}
	return out, nil
}

// Output is the --json of "cip loss" and "cip design": the library's
// report and the rows skipped or merged reading --trace, whose indices the
// secrets refer to (absent without --trace).
func (p *CIPPriorFlags) Output(rep *cip.Report) any {
	if p.read == nil {
		return rep
	}
	in := p.read.Summary()
	return struct {
		*cip.Report
		*trace.InputSummary
	}{rep, &in}
}

// PrivacyFlags are the (lambda, r, delta) that turn loss factors into
// epsilons.
type PrivacyFlags struct {
	Lambda, Radius, delta float64
}

// Register adds the flags to f.
func (p *PrivacyFlags) Register(f *pflag.FlagSet) {
	f.Float64Var(&p.Lambda, "lambda", 0, "Rényi order lambda > 1 (with --radius: report epsilon)")
	f.Float64Var(&p.Radius, "radius", 0, "secret radius r, in the units of the values (with --lambda)")
	f.Float64Var(&p.delta, "delta", 0, "also report the prior-posterior gap of Theorem 3.1 at this delta")
}

// Check refuses flags that do not go together or are out of range.
func (p *PrivacyFlags) Check(f *pflag.FlagSet) error {
	if f.Changed("lambda") != f.Changed("radius") {
		return usagef("--lambda and --radius go together")
	}
	if f.Changed("lambda") {
		if _, err := cip.TargetLossFactor(1, p.Lambda, p.Radius, 1); err != nil {
			var pe *param.Error
			if errors.As(err, &pe) {
				return usagef("--%s %v: %s", pe.Name, pe.Value, pe.Why)
			}
			return usagef("--lambda/--radius: need lambda > 1 and radius > 0, got %v and %v", p.Lambda, p.Radius)
		}
	}
	if f.Changed("delta") && (!f.Changed("lambda") || !(p.delta > 0 && p.delta < 1)) {
		return usagef("--delta needs --lambda and --radius and a value in (0, 1)")
	}
	return nil
}

// Options are the flags' cip.AssessOptions (checked by Check).
func (p *PrivacyFlags) Options(f *pflag.FlagSet) cip.AssessOptions {
	var o cip.AssessOptions
	if f.Changed("lambda") {
		o.Lambda, o.Radius = p.Lambda, p.Radius
	}
	if f.Changed("delta") {
		o.Delta = p.delta
	}
	return o
}
