// Figure 2 of Meehan and Chaudhuri (AISTATS 2021) with the cip package:
// the posterior uncertainty that a Gaussian-process adversary keeps about
// a secret under the paper's SDP mechanisms and the Approach C baselines,
// across a sweep of prior dependence. The settings are the authors'
// (figure_2.py): unit prior variance, kernel on sample indices, a total
// noise budget of 0.02 n, and their stabilisation factors.

package repro

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// CIPKind is what a panel protects and measures.
type CIPKind int

const (
	// BasicSecret: SDP_A for one location; metric 2 sqrt(posterior variance).
	BasicSecret CIPKind = iota
	// CompoundSecret: SDP_A for several locations; metric
	// 2 sqrt(lambda_min(posterior block)).
	CompoundSecret
	// AllBasic: Multiple Secrets over every location; metric
	// 2 sqrt(mean posterior variance).
	AllBasic
	// Misspecified: SDP_A for a basic secret designed at lengthscale l,
	// scored by adversaries whose true lengthscale is l, 0.5 l and 1.5 l.
	Misspecified
)

// CIPFigure is one panel of Figure 2 of Meehan and Chaudhuri.
type CIPFigure struct {
	ID, Title string
	// Kernel is "rbf" or "periodic" (period Period), on indices 0..N-1.
	Kernel string
	N      int
	Period float64
	// L2 are the squared lengthscales swept (the paper's linspace).
	L2     []float64
	Kind   CIPKind
	Secret cip.Secret
	// Stab is the authors' stabilisation factor for this panel.
	Stab float64
}

// Budget is the total noise of the panel: 0.02 n, the effective budget of
// every panel (per secret for Multiple Secrets).
func (f CIPFigure) Budget() float64 { return 0.02 * float64(f.N) }

// Prior returns the unit-variance prior covariance at lengthscale l.
func (f CIPFigure) Prior(l float64) *mat.SymDense {
	var k gp.Kernel = gp.RBF{Variance: 1, Lengthscale: l}
	if f.Kernel == "periodic" {
		k = gp.Periodic{Variance: 1, Lengthscale: l, Period: f.Period}
	}
	return gp.Gram(k, gp.Indices(f.N))
}

// AdversaryPrior returns the prior at lengthscale l with a nugget of rel
// times its mean diagonal (the prior variance) added to the diagonal. It
// also returns that absolute nugget.
func (f CIPFigure) AdversaryPrior(l, rel float64) (*mat.SymDense, float64) {
	s := f.Prior(l)
	if rel == 0 {
		return s, 0
	}
	n := s.SymmetricDim()
	mean := 0.0
	for i := range n {
		mean += s.At(i, i)
	}
	j := rel * mean / float64(n)
	for i := range n {
		s.SetSym(i, i, s.At(i, i)+j)
	}
	return s, j
}

// CIPFigures returns the eight panels 2a-2h.
func CIPFigures() []CIPFigure {
	rbfL2 := floats.Span(make([]float64, 20), 1, 100)
	perL2 := floats.Span(make([]float64, 20), 0.25, 2.25)
	rbf := func(id, title string, kind CIPKind, s cip.Secret, stab float64) CIPFigure {
		return CIPFigure{ID: id, Title: title, Kernel: "rbf", N: 50, L2: rbfL2, Kind: kind, Secret: s, Stab: stab}
	}
	per := func(id, title string, kind CIPKind, s cip.Secret, stab float64) CIPFigure {
		return CIPFigure{ID: id, Title: title, Kernel: "periodic", N: 48, Period: 24, L2: perL2, Kind: kind, Secret: s, Stab: stab}
	}
	return []CIPFigure{
		rbf("2a", "RBF, basic secret {24}", BasicSecret, cip.Basic(24), 10),
		rbf("2b", "RBF, compound secret {24, 25}", CompoundSecret, cip.Compound(24, 25), 1000),
		rbf("2c", "RBF, all 50 basic secrets", AllBasic, cip.Secret{}, 1e4),
		rbf("2d", "RBF, basic secret {24}, misspecified prior", Misspecified, cip.Basic(24), 10),
		per("2e", "periodic, basic secret {24}", BasicSecret, cip.Basic(24), 10),
		per("2f", "periodic, compound secret {16, 32}", CompoundSecret, cip.Compound(16, 32), 10),
		per("2g", "periodic, all 48 basic secrets", AllBasic, cip.Secret{}, 1e4),
		per("2h", "periodic, basic secret {24}, misspecified prior", Misspecified, cip.Basic(24), 10),
	}
}

// LookupCIPFigure returns the panel with the given ID ("2a".."2h").
func LookupCIPFigure(id string) (CIPFigure, error) {
	for _, f := range CIPFigures() {
		if f.ID == id {
			return f, nil
		}
	}
	return CIPFigure{}, fmt.Errorf("repro: no figure %q (want one of 2a, 2b, ..., 2h)", id)
}

// CIPFigurePoint is one lengthscale of a panel. Metrics are posterior 2-sigma
// intervals (higher is more private); loss factors are the exact (E1)
// loss factors of the same designs (lower is more private), the worst
// over the secrets for AllBasic. Fields a panel does not compute are nil.
type CIPFigurePoint struct {
	LEff float64 `json:"l_eff"`
	// Budget is the total noise tr(SigmaG) of the SDP design, which every
	// compared mechanism shares.
	Budget float64 `json:"budget"`

	SDP             *float64 `json:"sdp,omitempty"`
	IndUniform      *float64 `json:"ind_uniform,omitempty"`
	IndConcentrated *float64 `json:"ind_concentrated,omitempty"`
	// SDPExact is SDP_A solved without the authors' stabilisation factor
	// (compound panels, where the optimum is not unique).
	SDPExact *float64 `json:"sdp_exact_solve,omitempty"`
	// Optimal is tracepriv's optimal design (cip-math.md (E2)/(E3)) at the
	// same total noise, when computed.
	Optimal *float64 `json:"optimal,omitempty"`

	GoodPrior *float64 `json:"good_prior,omitempty"`
	OverCorr  *float64 `json:"over_corr,omitempty"`
	UnderCorr *float64 `json:"under_corr,omitempty"`
	// AdversaryJitter is the largest diagonal jitter (absolute) that
	// factorising an adversary's prior plus the noise needed, counted as
	// extra noise; zero when the nugget makes every factorisation succeed
	// as given (misspecified panels only).
	AdversaryJitter *float64 `json:"adversary_jitter,omitempty"`

	LossSDP             *Num `json:"sdp_loss_factor,omitempty"`
	LossIndUniform      *Num `json:"ind_uniform_loss_factor,omitempty"`
	LossIndConcentrated *Num `json:"ind_concentrated_loss_factor,omitempty"`
	LossSDPExact        *Num `json:"sdp_exact_solve_loss_factor,omitempty"`
	LossOptimal         *Num `json:"optimal_loss_factor,omitempty"`

	// Seconds is the time spent designing and scoring this point.
	Seconds float64 `json:"seconds"`
}

// CIPFigureResult is a computed panel.
type CIPFigureResult struct {
	Figure string  `json:"figure"`
	Title  string  `json:"title"`
	Kernel string  `json:"kernel"`
	N      int     `json:"n"`
	Period float64 `json:"period,omitempty"`
	// Secret is "basic {24}", "compound {24, 25}", "all basic" or
	// "basic {24}, misspecified".
	Secret        string  `json:"secret"`
	BudgetPerUnit float64 `json:"budget"`
	Stabilisation float64 `json:"stabilisation"`
	// AdversaryNugget is the nugget of the adversaries' priors in the
	// misspecified panels (2d, 2h), relative to the prior variance; nil for
	// the other panels.
	AdversaryNugget *float64         `json:"adversary_nugget,omitempty"`
	Points          []CIPFigurePoint `json:"points"`
	Seconds         float64          `json:"seconds"`
}

// CIPFigureOptions tunes RunCIPFigure.
type CIPFigureOptions struct {
	// Workers is the number of lengthscales computed in parallel (0 means
	// GOMAXPROCS); the result does not depend on it.
	Workers int
	// Progress, if set, is called after each point with the count done.
	Progress func(done, total int)
	// Optimal also computes tracepriv's optimal design at equal total
	// noise: (E2) for a basic secret, (E3) in budget mode otherwise.
	Optimal bool
	// AdversaryNugget is added to the diagonal of every adversary's prior
	// in the misspecified panels, relative to the prior variance (mean
	// diagonal): the adversary models a white component of that variance
	// on top of the smooth kernel. Zero means DefaultAdversaryNugget;
	// NoNugget (any negative value) scores the bare kernel, whose
	// posterior is not determined in double precision for the 1.5 l
	// adversary (docs/reproduction-cip.md). The design is always made
	// from the bare kernel at l, as the paper's is.
	AdversaryNugget float64
}

// DefaultAdversaryNugget is the adversaries' default relative nugget:
// the ridge of 1e-6 times the mean diagonal that the authors' code
// (figure_2.py, get_posterior_cov) adds to the prior before scoring, and
// the smallest of the nuggets studied (1e-10 ... 1e-4) at which the
// misspecified panels' posterior is determined to DeterminedTol at every
// lengthscale studied: the same in float64, at 80 digits and for the
// exact problem, whichever of three solves of the design is scored
// (CIPSensitivity; docs/reproduction-cip.md).
const DefaultAdversaryNugget = 1e-6

// NoNugget, as CIPFigureOptions.AdversaryNugget, scores the adversaries' bare
// kernel priors.
const NoNugget = -1.0

// adversaryNugget resolves CIPFigureOptions.AdversaryNugget.
func (o CIPFigureOptions) adversaryNugget() float64 {
	switch {
	case o.AdversaryNugget == 0:
		return DefaultAdversaryNugget
	case o.AdversaryNugget < 0:
		return 0
	}
	return o.AdversaryNugget
}

// RunCIPFigure computes every point of the panel.
func RunCIPFigure(f CIPFigure, opt CIPFigureOptions) (*CIPFigureResult, error) {
	start := time.Now()
	res := &CIPFigureResult{Figure: f.ID, Title: f.Title, Kernel: f.Kernel, N: f.N, Period: f.Period,
		Secret: secretLabel(f), BudgetPerUnit: f.Budget(), Stabilisation: f.Stab,
		Points: make([]CIPFigurePoint, len(f.L2))}
	if math.IsNaN(opt.AdversaryNugget) || math.IsInf(opt.AdversaryNugget, 1) {
		return nil, fmt.Errorf("repro: adversary nugget %v is not a finite number", opt.AdversaryNugget)
	}
	if f.Kind == Misspecified {
		nug := opt.adversaryNugget()
		res.AdversaryNugget = &nug
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu   sync.Mutex
		done int
		errs = make([]error, len(f.L2))
		jobs = make(chan int)
		wg   sync.WaitGroup
	)
	for range min(workers, len(f.L2)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				t0 := time.Now()
				p, err := point(f, math.Sqrt(f.L2[i]), opt)
				p.Seconds = time.Since(t0).Seconds()
				res.Points[i], errs[i] = p, err
				mu.Lock()
				done++
				if opt.Progress != nil {
					opt.Progress(done, len(f.L2))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range f.L2 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("repro: figure %s, l_eff %.4g: %w", f.ID, math.Sqrt(f.L2[i]), err)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func secretLabel(f CIPFigure) string {
	switch f.Kind {
	case AllBasic:
		return "all basic"
	case Misspecified:
		return fmt.Sprintf("basic %v, misspecified", f.Secret.Indices)
	case CompoundSecret:
		return fmt.Sprintf("compound %v", f.Secret.Indices)
	}
	return fmt.Sprintf("basic %v", f.Secret.Indices)
}

// scorer measures designs against one prior and one secret set.
type scorer struct {
	sigma   *mat.SymDense
	secrets []cip.Secret
	kind    CIPKind
}

// score returns the panel's posterior metric and the worst (E1) loss
// factor of noise g.
func (s scorer) score(g *mat.SymDense) (metric, loss float64, err error) {
	post, err := cip.NewPosterior(s.sigma, g)
	if err != nil {
		return 0, 0, err
	}
	if s.kind == AllBasic {
		metric = post.MeanTwoSigma(nil)
	} else if metric, err = post.TwoSigma(s.secrets[0]); err != nil {
		return 0, 0, err
	}
	ls, err := cip.LossFactors(s.sigma, g, s.secrets)
	if err != nil {
		return 0, 0, err
	}
	return metric, floats.Max(ls), nil
}

// twoSigma returns the posterior 2-sigma of a basic secret for an
// adversary with prior sigma who sees noise g, and the jitter that
// factorising sigma + g needed.
func twoSigma(sigma, g *mat.SymDense, s cip.Secret) (float64, float64, error) {
	post, err := cip.NewPosterior(sigma, g)
	if err != nil {
		return 0, 0, err
	}
	m, err := post.TwoSigma(s)
	return m, post.Jitter, err
}

func point(f CIPFigure, l float64, opt CIPFigureOptions) (CIPFigurePoint, error) {
	p := CIPFigurePoint{LEff: l}
	sigma := f.Prior(l)
	paper := &cip.PaperOptions{Stabilisation: f.Stab}
	sc := scorer{sigma: sigma, secrets: []cip.Secret{f.Secret}, kind: f.Kind}
	var g *mat.SymDense
	switch f.Kind {
	case Misspecified:
		d, err := cip.PaperSDPA(sigma, f.Secret, f.Budget(), paper)
		if err != nil {
			return p, err
		}
		p.Budget = d.Budget
		jitter := 0.0
		for _, a := range []struct {
			scale float64
			dst   **float64
		}{{1, &p.GoodPrior}, {0.5, &p.OverCorr}, {1.5, &p.UnderCorr}} {
			adv, _ := f.AdversaryPrior(a.scale*l, opt.adversaryNugget())
			m, j, err := twoSigma(adv, d.SigmaG, f.Secret)
			if err != nil {
				return p, err
			}
			*a.dst = &m
			jitter = math.Max(jitter, j)
		}
		p.AdversaryJitter = &jitter
		return p, nil
	case AllBasic:
		sc.secrets = cip.EveryPoint(f.N)
		d, _, err := cip.PaperMultipleSecrets(sigma, sc.secrets, f.Budget(), paper)
		if err != nil {
			return p, err
		}
		g = d.SigmaG
	default:
		d, err := cip.PaperSDPA(sigma, f.Secret, f.Budget(), paper)
		if err != nil {
			return p, err
		}
		g = d.SigmaG
		if f.Kind == CompoundSecret {
			exact, err := cip.PaperSDPA(sigma, f.Secret, f.Budget(), nil)
			if err != nil {
				return p, err
			}
			if err := setScore(sc, exact.SigmaG, &p.SDPExact, &p.LossSDPExact); err != nil {
				return p, err
			}
		}
	}
	p.Budget = mat.Trace(g)
	if err := setScore(sc, g, &p.SDP, &p.LossSDP); err != nil {
		return p, err
	}
	uni, err := cip.IndependentUniform(f.N, p.Budget)
	if err != nil {
		return p, err
	}
	if err := setScore(sc, uni, &p.IndUniform, &p.LossIndUniform); err != nil {
		return p, err
	}
	// For all basic secrets the sensitive set is every point, so the
	// concentrated baseline (the budget split evenly over the sensitive
	// set) is the uniform one.
	conc := uni
	if f.Kind != AllBasic {
		if conc, err = cip.IndependentConcentrated(f.N, f.Secret, p.Budget); err != nil {
			return p, err
		}
	}
	if err := setScore(sc, conc, &p.IndConcentrated, &p.LossIndConcentrated); err != nil {
		return p, err
	}
	if opt.Optimal {
		var og *mat.SymDense
		if f.Kind == BasicSecret {
			d, err := cip.OptimalBasic(sigma, f.Secret.Indices[0], p.Budget)
			if err != nil {
				return p, err
			}
			og = d.SigmaG
		} else {
			d, err := cip.OptimalBudget(sigma, sc.secrets, p.Budget, nil)
			if err != nil {
				return p, err
			}
			og = d.SigmaG
		}
		if err := setScore(sc, og, &p.Optimal, &p.LossOptimal); err != nil {
			return p, err
		}
	}
	return p, nil
}

func setScore(sc scorer, g *mat.SymDense, metric **float64, loss **Num) error {
	m, l, err := sc.score(g)
	if err != nil {
		return err
	}
	ln := Num(l)
	*metric, *loss = &m, &ln
	return nil
}

// Num is a float64 whose JSON form is a number, or the string "+Inf" for
// an infinite loss factor (noise that leaves a secret unprotected), which
// JSON numbers cannot express.
type Num float64

// MarshalJSON implements json.Marshaler.
func (x Num) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(x), 1) {
		return []byte(`"+Inf"`), nil
	}
	return json.Marshal(float64(x))
}

// UnmarshalJSON implements json.Unmarshaler.
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == `"+Inf"` {
		*x = Num(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*x = Num(f)
	return nil
}
