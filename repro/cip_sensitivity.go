package repro

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/sdp"
)

// The sensitivity study of the misspecified panels (2d, 2h). An adversary
// whose prior is smoother than the design's (1.5 l) has a Gram matrix
// whose condition number far exceeds 1/eps, and its posterior about the
// secret then depends on digits of the noise design and of the prior that
// double precision does not hold. The study scores the panel's design
// (and two interior-point solves of the same SDP that differ from it in
// the last digits) over a range of adversary nuggets, in float64 through
// the production code path and, by the embedded mpmath script, at 80
// digits from the very same float64 matrices and for the exact problem,
// so that what is determined can be told from what is not.

//go:embed mpposterior.py
var mpScript []byte

// DefaultSensitivityNuggets are the relative adversary nuggets studied.
var DefaultSensitivityNuggets = []float64{0, 1e-10, 1e-8, 1e-6, 1e-4}

// DeterminedTol is the largest spread of a posterior 2-sigma over
// designs, arithmetics and the exact problem for which the study calls
// it determined: a thousandth, the resolution of the published figure
// and of the numbers the reproduction quotes.
const DeterminedTol = 1e-3

// CIPSensitivityOptions tunes CIPSensitivity. Zero values mean the defaults.
type CIPSensitivityOptions struct {
	// Nuggets are the adversary nuggets, relative to the prior variance
	// (DefaultSensitivityNuggets).
	Nuggets []float64
	// Scales are the adversaries' lengthscales as multiples of the
	// design's (1, 0.5, 1.5: the panel's three curves).
	Scales []float64
	// Points are indices into the panel's sweep (default: the first two,
	// the one nearest the median fitted l_eff and the last for RBF; the
	// first, the median and the last for periodic).
	Points []int
	// Tolerances are the interior-point tolerances (FeasTol = GapTol) of
	// the generic SDP_A solves compared with the closed form (1e-8, the
	// solver's default, and 1e-6).
	Tolerances []float64
	// Progress, if set, is called after each point with the count done.
	Progress func(done, total int)
}

// CIPSensitivityDesign is one noise design for the panel's secret at one
// lengthscale.
type CIPSensitivityDesign struct {
	Name string `json:"name"`
	// Tolerance is the interior-point tolerance (0 for the closed form).
	Tolerance  float64 `json:"tolerance,omitempty"`
	Iterations int     `json:"iterations,omitempty"`
	Trace      float64 `json:"trace"`
	// Distance is the Frobenius distance to the closed-form design.
	Distance float64 `json:"frobenius_distance_to_closed_form"`
	g        *mat.SymDense
}

// CIPSensitivityAdversary describes one adversary prior (bare kernel at
// Scale times the design's lengthscale).
type CIPSensitivityAdversary struct {
	Scale       float64 `json:"scale"`
	Lengthscale float64 `json:"lengthscale"`
	// ExactEigMin/Max are the extreme eigenvalues of the kernel matrix
	// computed at high precision, StoredEigMin/Max those of the float64
	// matrix the Go code uses (exact arithmetic on the rounded entries;
	// rounding can make the smallest negative). Nil without mpmath.
	ExactEigMin  *float64 `json:"exact_eig_min,omitempty"`
	ExactEigMax  *float64 `json:"exact_eig_max,omitempty"`
	StoredEigMin *float64 `json:"stored_eig_min,omitempty"`
	StoredEigMax *float64 `json:"stored_eig_max,omitempty"`
	// ExactCondition is ExactEigMax/ExactEigMin (+Inf when singular).
	ExactCondition *Num `json:"exact_condition,omitempty"`
	sigma          *mat.SymDense
}

// CIPSensitivityValue is the posterior 2-sigma of the secret for one
// adversary, nugget and design.
type CIPSensitivityValue struct {
	Scale  float64 `json:"scale"`
	Nugget float64 `json:"nugget"`
	Design string  `json:"design"`
	// Float64 is what the reproduction's code path computes
	// (cip.NewPosterior on the prior plus nugget), with the jitter that
	// its factorisation needed (counted as noise).
	Float64 float64 `json:"float64"`
	Jitter  float64 `json:"float64_jitter"`
	// HighPrecision is the same quantity at 80 digits from the same
	// float64 matrices, and HighPrecisionVariance the posterior variance
	// behind it (its 2-sigma is nil when that is negative: the rounded
	// matrices are then not a valid prior-plus-noise pair).
	HighPrecision         *float64 `json:"high_precision,omitempty"`
	HighPrecisionVariance *float64 `json:"high_precision_variance,omitempty"`
	nuggetAbs             float64
	prior, design         int
}

// CIPSensitivitySummary sums up one adversary and nugget over the designs.
type CIPSensitivitySummary struct {
	Scale  float64 `json:"scale"`
	Nugget float64 `json:"nugget"`
	// Condition is the exact condition number of the adversary's prior
	// with this nugget (nil without mpmath).
	Condition *Num `json:"condition,omitempty"`
	// Float64Min/Max span the float64 values over the designs;
	// HighPrecisionMin/Max the 80-digit values from the same matrices.
	Float64Min       float64  `json:"float64_min"`
	Float64Max       float64  `json:"float64_max"`
	HighPrecisionMin *float64 `json:"high_precision_min,omitempty"`
	HighPrecisionMax *float64 `json:"high_precision_max,omitempty"`
	// Exact is the value of the exact problem (kernel and SDP_A optimum at
	// high precision), ExactDigits the precision it needed, and
	// ExactPseudoInverse whether the prior is singular (the limit of a
	// vanishing nugget is then taken).
	Exact              *float64 `json:"exact,omitempty"`
	ExactDigits        int      `json:"exact_digits,omitempty"`
	ExactPseudoInverse bool     `json:"exact_pseudo_inverse,omitempty"`
	// Spread is the largest difference between any two of the values
	// above (a negative variance counts as an infinite spread), and
	// Determined whether it is at most DeterminedTol. Without mpmath both
	// cover the float64 values only.
	Spread     Num  `json:"spread"`
	Determined bool `json:"determined"`
}

// CIPSensitivityPoint is the study at one lengthscale of the sweep.
type CIPSensitivityPoint struct {
	LEff        float64                   `json:"l_eff"`
	Designs     []CIPSensitivityDesign    `json:"designs"`
	Adversaries []CIPSensitivityAdversary `json:"adversaries"`
	Values      []CIPSensitivityValue     `json:"values"`
	Summary     []CIPSensitivitySummary   `json:"summary"`
	// Authors is the authors' own scoring (figure_2.py get_posterior_cov:
	// a ridge of 1e-6 x mean diagonal on the prior and on the noise) of
	// the closed-form design at high precision, per adversary scale.
	Authors  map[string]*float64 `json:"authors_ridges,omitempty"`
	exact    []exactCase
	exactOut []*mpExact
}

type exactCase struct {
	Scale  float64 `json:"scale"`
	Nugget float64 `json:"nugget"`
}

// HighPrecisionRun records how the high-precision values were obtained.
type HighPrecisionRun struct {
	Tool   string `json:"tool,omitempty"`
	Python string `json:"python,omitempty"`
	Digits int    `json:"digits,omitempty"`
	// Error says why there are none (python3 or mpmath missing).
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// CIPSensitivityResult is the study of one misspecified panel.
type CIPSensitivityResult struct {
	Figure        string                `json:"figure"`
	Title         string                `json:"title"`
	Kernel        string                `json:"kernel"`
	N             int                   `json:"n"`
	Period        float64               `json:"period,omitempty"`
	Secret        int                   `json:"secret"`
	Budget        float64               `json:"budget"`
	Nuggets       []float64             `json:"nuggets"`
	NuggetBasis   string                `json:"nugget_basis"`
	DeterminedTol float64               `json:"determined_tolerance"`
	HighPrecision *HighPrecisionRun     `json:"high_precision"`
	Points        []CIPSensitivityPoint `json:"points"`
	Seconds       float64               `json:"seconds"`
}

// DesignClosedForm names the production design (cip.PaperSDPA's closed
// form for a basic secret).
const DesignClosedForm = "closed form"

func ipmName(tol float64) string { return fmt.Sprintf("interior point, tol %g", tol) }

func (o CIPSensitivityOptions) fill(f CIPFigure) CIPSensitivityOptions {
	if o.Nuggets == nil {
		o.Nuggets = DefaultSensitivityNuggets
	}
	if o.Scales == nil {
		o.Scales = []float64{1, 0.5, 1.5}
	}
	if o.Tolerances == nil {
		o.Tolerances = []float64{1e-8, 1e-6}
	}
	if o.Points == nil {
		last := len(f.L2) - 1
		if f.Kernel == "periodic" {
			o.Points = []int{0, last / 2, last}
		} else {
			o.Points = []int{0, 1, 7, last}
		}
	}
	return o
}

// CIPSensitivity runs the float64 part of the study for a misspecified panel.
// Call RunHighPrecision on the result for the 80-digit values.
func CIPSensitivity(f CIPFigure, opt CIPSensitivityOptions) (*CIPSensitivityResult, error) {
	if f.Kind != Misspecified {
		return nil, fmt.Errorf("repro: sensitivity: figure %s is not a misspecified-prior panel (2d, 2h)", f.ID)
	}
	start := time.Now()
	opt = opt.fill(f)
	for _, nu := range opt.Nuggets {
		if !(nu >= 0) || math.IsInf(nu, 1) {
			return nil, fmt.Errorf("repro: sensitivity: nugget %v is not a finite number >= 0", nu)
		}
	}
	for _, i := range opt.Points {
		if i < 0 || i >= len(f.L2) {
			return nil, fmt.Errorf("repro: sensitivity: point %d outside the sweep of %d", i, len(f.L2))
		}
	}
	res := &CIPSensitivityResult{Figure: f.ID, Title: f.Title, Kernel: f.Kernel, N: f.N, Period: f.Period,
		Secret: f.Secret.Indices[0], Budget: f.Budget(), Nuggets: opt.Nuggets,
		NuggetBasis:   "relative to the prior variance (mean diagonal of the adversary's kernel matrix), added to its diagonal",
		DeterminedTol: DeterminedTol}
	for k, i := range opt.Points {
		p, err := sensitivityPoint(f, math.Sqrt(f.L2[i]), opt)
		if err != nil {
			return nil, fmt.Errorf("repro: sensitivity %s, l_eff %.4g: %w", f.ID, math.Sqrt(f.L2[i]), err)
		}
		res.Points = append(res.Points, *p)
		if opt.Progress != nil {
			opt.Progress(k+1, len(opt.Points))
		}
	}
	res.summarise()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func sensitivityPoint(f CIPFigure, l float64, opt CIPSensitivityOptions) (*CIPSensitivityPoint, error) {
	p := &CIPSensitivityPoint{LEff: l}
	sigma := f.Prior(l)
	cf, err := cip.PaperSDPA(sigma, f.Secret, f.Budget(), &cip.PaperOptions{Stabilisation: f.Stab})
	if err != nil {
		return nil, err
	}
	p.Designs = append(p.Designs, CIPSensitivityDesign{Name: DesignClosedForm, Trace: mat.Trace(cf.SigmaG), g: cf.SigmaG})
	for _, tol := range opt.Tolerances {
		d, err := cip.PaperSDPA(sigma, f.Secret, f.Budget(), &cip.PaperOptions{Stabilisation: f.Stab, Generic: true,
			Settings: &sdp.Settings{FeasTol: tol, GapTol: tol}})
		if err != nil {
			return nil, fmt.Errorf("SDP_A at tolerance %g: %w", tol, err)
		}
		var diff mat.SymDense
		diff.ScaleSym(-1, cf.SigmaG)
		diff.AddSym(&diff, d.SigmaG)
		p.Designs = append(p.Designs, CIPSensitivityDesign{Name: ipmName(tol), Tolerance: tol, Iterations: d.Iterations,
			Trace: mat.Trace(d.SigmaG), Distance: mat.Norm(&diff, 2), g: d.SigmaG})
	}
	for a, sc := range opt.Scales {
		adv := CIPSensitivityAdversary{Scale: sc, Lengthscale: sc * l, sigma: f.Prior(sc * l)}
		p.Adversaries = append(p.Adversaries, adv)
		for _, nu := range opt.Nuggets {
			prior, abs := f.AdversaryPrior(sc*l, nu)
			for d, des := range p.Designs {
				m, j, err := twoSigma(prior, des.g, f.Secret)
				if err != nil {
					return nil, fmt.Errorf("adversary at %g l, nugget %g, design %q: %w", sc, nu, des.Name, err)
				}
				p.Values = append(p.Values, CIPSensitivityValue{Scale: sc, Nugget: nu, Design: des.Name,
					Float64: m, Jitter: j, nuggetAbs: abs, prior: a, design: d})
			}
			p.exact = append(p.exact, exactCase{Scale: sc, Nugget: nu})
		}
	}
	return p, nil
}

// summarise fills the summaries from the values present.
func (r *CIPSensitivityResult) summarise() {
	for pi := range r.Points {
		p := &r.Points[pi]
		p.Summary = p.Summary[:0]
		for ei, ec := range p.exact {
			s := CIPSensitivitySummary{Scale: ec.Scale, Nugget: ec.Nugget, Float64Min: math.Inf(1), Float64Max: math.Inf(-1)}
			lo, hi, invalid := math.Inf(1), math.Inf(-1), false
			for _, v := range p.Values {
				if v.Scale != ec.Scale || v.Nugget != ec.Nugget {
					continue
				}
				s.Float64Min, s.Float64Max = math.Min(s.Float64Min, v.Float64), math.Max(s.Float64Max, v.Float64)
				lo, hi = math.Min(lo, v.Float64), math.Max(hi, v.Float64)
				if v.HighPrecisionVariance != nil {
					if v.HighPrecision == nil {
						invalid = true
						continue
					}
					h := *v.HighPrecision
					if s.HighPrecisionMin == nil {
						s.HighPrecisionMin, s.HighPrecisionMax = ptr(h), ptr(h)
					}
					*s.HighPrecisionMin, *s.HighPrecisionMax = math.Min(*s.HighPrecisionMin, h), math.Max(*s.HighPrecisionMax, h)
					lo, hi = math.Min(lo, h), math.Max(hi, h)
				}
			}
			if ei < len(p.exactOut) && p.exactOut[ei] != nil {
				e := p.exactOut[ei]
				s.ExactDigits, s.ExactPseudoInverse = e.Digits, e.PseudoInverse
				if e.TwoSigma != nil {
					s.Exact = ptr(*e.TwoSigma)
					lo, hi = math.Min(lo, *e.TwoSigma), math.Max(hi, *e.TwoSigma)
				} else {
					invalid = true
				}
				s.Condition = condition(e.EigMin, e.EigMax)
			}
			s.Spread = Num(hi - lo)
			if invalid {
				s.Spread = Num(math.Inf(1))
			}
			s.Determined = float64(s.Spread) <= DeterminedTol
			p.Summary = append(p.Summary, s)
		}
	}
}

func ptr(x float64) *float64 { return &x }

// condition is the condition number from the extreme eigenvalues, +Inf
// for a singular matrix.
func condition(lo, hi float64) *Num {
	c := Num(math.Inf(1))
	if lo > 0 {
		c = Num(hi / lo)
	}
	return &c
}

// mpInput is what the script reads.
type mpInput struct {
	Digits int       `json:"dps"`
	Kernel string    `json:"kernel"`
	N      int       `json:"n"`
	Period float64   `json:"period"`
	Secret int       `json:"secret"`
	Budget float64   `json:"budget"`
	Points []mpPoint `json:"points"`
}

type mpMatrix struct {
	Scale  float64     `json:"scale,omitempty"`
	Name   string      `json:"name,omitempty"`
	Matrix [][]float64 `json:"matrix"`
}

type mpCase struct {
	Prior     int     `json:"prior"`
	Design    int     `json:"design"`
	NuggetAbs float64 `json:"nugget_abs"`
}

type mpAuthors struct {
	Prior      int     `json:"prior"`
	Design     int     `json:"design"`
	PriorRidge float64 `json:"prior_ridge"`
	NoiseRidge float64 `json:"noise_ridge"`
}

type mpPoint struct {
	L       float64     `json:"l"`
	Priors  []mpMatrix  `json:"priors"`
	Designs []mpMatrix  `json:"designs"`
	Cases   []mpCase    `json:"cases"`
	Exact   []exactCase `json:"exact"`
	Authors []mpAuthors `json:"authors"`
}

type mpValue struct {
	TwoSigma *float64 `json:"two_sigma"`
	Variance *float64 `json:"variance"`
}

type mpExact struct {
	TwoSigma      *float64 `json:"two_sigma"`
	Digits        int      `json:"dps"`
	EigMin        float64  `json:"eig_min"`
	EigMax        float64  `json:"eig_max"`
	PseudoInverse bool     `json:"pseudo_inverse"`
}

type mpOutput struct {
	Mpmath string `json:"mpmath"`
	Python string `json:"python"`
	Digits int    `json:"dps"`
	Points []struct {
		Cases   []mpValue `json:"cases"`
		Exact   []mpExact `json:"exact"`
		Authors []mpValue `json:"authors"`
		Priors  []struct {
			Min float64 `json:"stored_eig_min"`
			Max float64 `json:"stored_eig_max"`
		} `json:"priors"`
	} `json:"points"`
}

// HighPrecisionDigits is the working precision of the cross-check.
const HighPrecisionDigits = 80

// ErrNoHighPrecision is returned (wrapped) when no Python with mpmath is
// found.
var ErrNoHighPrecision = errors.New("no python3 with mpmath")

// FindPython returns the first of the candidates (default: python3 on
// PATH, then /usr/bin/python3) that imports mpmath.
func FindPython(candidates ...string) (string, error) {
	if len(candidates) == 0 {
		candidates = []string{"python3", "/usr/bin/python3"}
	}
	var tried []string
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			tried = append(tried, c+": not found")
			continue
		}
		if out, err := exec.Command(path, "-c", "import mpmath").CombinedOutput(); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %s", path, firstLine(out, err)))
			continue
		}
		return path, nil
	}
	return "", fmt.Errorf("%w (%s)", ErrNoHighPrecision, strings.Join(tried, "; "))
}

func firstLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if s := strings.TrimSpace(lines[len(lines)-1]); s != "" {
		return s
	}
	return err.Error()
}

// WriteHighPrecisionInput writes the study's matrices as the script's
// input (float64 values in their shortest exact decimal form).
func (r *CIPSensitivityResult) WriteHighPrecisionInput(path string) error {
	in := mpInput{Digits: HighPrecisionDigits, Kernel: r.Kernel, N: r.N, Period: r.Period, Secret: r.Secret, Budget: r.Budget}
	for _, p := range r.Points {
		mp := mpPoint{L: p.LEff, Exact: p.exact}
		for _, a := range p.Adversaries {
			mp.Priors = append(mp.Priors, mpMatrix{Scale: a.Scale, Matrix: rows(a.sigma)})
		}
		for _, d := range p.Designs {
			mp.Designs = append(mp.Designs, mpMatrix{Name: d.Name, Matrix: rows(d.g)})
		}
		for _, v := range p.Values {
			mp.Cases = append(mp.Cases, mpCase{Prior: v.prior, Design: v.design, NuggetAbs: v.nuggetAbs})
		}
		for a := range p.Adversaries {
			mp.Authors = append(mp.Authors, mpAuthors{Prior: a, Design: 0, PriorRidge: 1e-6, NoiseRidge: 1e-6})
		}
		in.Points = append(in.Points, mp)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func rows(a mat.Symmetric) [][]float64 {
	n := a.SymmetricDim()
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			out[i][j] = a.At(i, j)
		}
	}
	return out
}

// RunHighPrecision runs the embedded mpmath script with the given Python
// (FindPython's choice if empty) on the study's matrices and adds its
// values. Without a Python with mpmath it records why in
// r.HighPrecision and returns an error wrapping ErrNoHighPrecision.
func (r *CIPSensitivityResult) RunHighPrecision(python string) error {
	start := time.Now()
	r.HighPrecision = &HighPrecisionRun{}
	fail := func(err error) error {
		r.HighPrecision.Error = err.Error()
		return err
	}
	if python == "" {
		var err error
		if python, err = FindPython(); err != nil {
			return fail(err)
		}
	} else if _, err := FindPython(python); err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "tracepriv-mp-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	script, in, out := filepath.Join(dir, "mpposterior.py"), filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(script, mpScript, 0o644); err != nil {
		return fail(err)
	}
	if err := r.WriteHighPrecisionInput(in); err != nil {
		return fail(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(python, script, in, out)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("repro: %s mpposterior.py: %v: %s", python, err, strings.TrimSpace(stderr.String())))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return fail(err)
	}
	if err := r.addHighPrecision(b); err != nil {
		return fail(err)
	}
	r.HighPrecision.Python = python
	r.HighPrecision.Seconds = time.Since(start).Seconds()
	return nil
}

// addHighPrecision merges the script's output.
func (r *CIPSensitivityResult) addHighPrecision(b []byte) error {
	var o mpOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("repro: high-precision output: %w", err)
	}
	if len(o.Points) != len(r.Points) {
		return fmt.Errorf("repro: high-precision output has %d points, want %d", len(o.Points), len(r.Points))
	}
	r.HighPrecision.Tool = "mpmath " + o.Mpmath
	r.HighPrecision.Digits = o.Digits
	for pi := range r.Points {
		p, q := &r.Points[pi], o.Points[pi]
		if len(q.Cases) != len(p.Values) || len(q.Exact) != len(p.exact) || len(q.Authors) != len(p.Adversaries) || len(q.Priors) != len(p.Adversaries) {
			return fmt.Errorf("repro: high-precision output for l_eff %.4g does not match the input", p.LEff)
		}
		for i, c := range q.Cases {
			p.Values[i].HighPrecision, p.Values[i].HighPrecisionVariance = c.TwoSigma, c.Variance
		}
		p.exactOut = make([]*mpExact, len(q.Exact))
		for i := range q.Exact {
			p.exactOut[i] = &q.Exact[i]
		}
		p.Authors = map[string]*float64{}
		for a := range p.Adversaries {
			adv := &p.Adversaries[a]
			adv.StoredEigMin, adv.StoredEigMax = ptr(q.Priors[a].Min), ptr(q.Priors[a].Max)
			p.Authors[fmt.Sprintf("%g", adv.Scale)] = q.Authors[a].TwoSigma
			// The exact kernel's eigenvalues are those of the nugget-0 case.
			for i, ec := range p.exact {
				if ec.Scale == adv.Scale && ec.Nugget == 0 {
					e := q.Exact[i]
					adv.ExactEigMin, adv.ExactEigMax = ptr(e.EigMin), ptr(e.EigMax)
					adv.ExactCondition = condition(e.EigMin, e.EigMax)
				}
			}
		}
	}
	r.summarise()
	return nil
}
