package geoind

import (
	"errors"
	"math"
	"time"
)

// ErrExhausted is returned when the budget left cannot pay for another step
// (the STOP of the paper's Figs 6-7).
var ErrExhausted = errors.New("geoind: privacy budget exhausted")

// Manager is an ε-bounded budget manager β: a deterministic function of the
// public run and the public time of the next query returning the step's
// configuration. It must never let ε(r) exceed Budget().
type Manager interface {
	Decide(r Run, t time.Time) (Decision, error)
	// Budget returns the global ε (per metre) the manager is bounded by.
	Budget() float64
}

// lastScale is the factor by which a last, scaled-down step stays below the
// remaining budget, so that rounding in the running sum never lets ε(r)
// exceed ε.
const lastScale = 1 - 1e-9

// fit enforces ε-boundedness. A step whose worst-case cost (the hard case)
// fits in the remaining budget is returned unchanged. Otherwise, if scale
// is allowed and at least half of it fits, every ε is scaled to fit
// (the test threshold keeps its noise ratio γ); else the run stops.
func fit(d Decision, spent, budget float64, scale bool, rethreshold func(Decision) Decision) (Decision, error) {
	need := d.EpsTheta + d.EpsN
	rem := budget - spent
	if need <= rem {
		return d, nil
	}
	if !scale || !(rem >= need/2) || need == 0 {
		return Decision{}, ErrExhausted
	}
	f := rem / need * lastScale
	d.EpsTheta *= f
	d.EpsN *= f
	if rethreshold != nil {
		d = rethreshold(d)
	}
	return d, nil
}

// Params are the configuration of the predictive budget managers of the
// paper's section IV-C.
type Params struct {
	// Epsilon is the global budget ε per metre (ε*/r*, e.g. ln 10 / 100 m).
	Epsilon float64 `json:"epsilon"`
	// Confidence is the δ of the accuracies α_N(δ), α_θ(δ); 0 means 0.9.
	Confidence float64 `json:"confidence,omitempty"`
	// Eta (η in [0, 1]) scales down the accuracy bound of the predictive
	// component, eq. (10); the paper uses 0.5. 0 means 0.5.
	Eta float64 `json:"eta,omitempty"`
	// Gamma (γ in (0, 1]) is α_θ/l, eq. (11); the paper uses 0.8. 0 means 0.8.
	Gamma float64 `json:"gamma,omitempty"`
	// PR0 is the initial prediction rate, used until the run has its own
	// estimate; it is blended with the observed rate as
	// (w·PR0 + easy)/(w + tested) with w = PRWeight.
	PR0 float64 `json:"pr0,omitempty"`
	// PRWeight is w above; 0 means 5 pseudo-steps.
	PRWeight float64 `json:"pr_weight,omitempty"`
	// MaxSpeed (m/s), when > 0, enables the elapsed-time skip strategy:
	// if MaxSpeed × (time since the last hard point) <= l, the prediction
	// is reported without testing.
	MaxSpeed float64 `json:"max_speed,omitempty"`
}

func (p Params) withDefaults() Params {
	if p.Confidence == 0 {
		p.Confidence = 0.9
	}
	if p.Eta == 0 {
		p.Eta = 0.5
	}
	if p.Gamma == 0 {
		p.Gamma = 0.8
	}
	if p.PRWeight == 0 {
		p.PRWeight = 5
	}
	return p
}

func (p Params) validate() error {
	if err := checkEpsilon("epsilon", p.Epsilon); err != nil {
		return err
	}
	if err := checkConfidence(p.Confidence); err != nil {
		return err
	}
	if !(p.Eta > 0 && p.Eta <= 1) {
		return paramErr("eta", p.Eta, "in (0, 1]")
	}
	if !(p.Gamma > 0 && p.Gamma <= 1) {
		return paramErr("gamma", p.Gamma, "in (0, 1]")
	}
	if !(p.PR0 >= 0 && p.PR0 < 1) {
		return paramErr("pr0", p.PR0, "in [0, 1)")
	}
	if !(p.PRWeight > 0) || math.IsInf(p.PRWeight, 1) {
		return paramErr("pr_weight", p.PRWeight, "finite and > 0")
	}
	if !(p.MaxSpeed >= 0) || math.IsInf(p.MaxSpeed, 1) {
		return paramErr("max_speed", p.MaxSpeed, "finite and >= 0 m/s")
	}
	return nil
}

// TestShare returns k = η (c_θ/c_N)(1 + 1/γ), the ratio ε_θ/ε_N that gives
// the test and the noise the same accuracy (eqs. 10-11). It is also the
// break-even prediction rate of section IV-C: the predictive mechanism
// beats the independent one iff PR >= k (0.46 in the paper, with c_θ ≈ 1.6
// and c_N ≈ 3.9 rounded; 0.4655 with the exact constants).
func (p Params) TestShare() float64 {
	p = p.withDefaults()
	return p.Eta * CTheta(p.Confidence) / CN(p.Confidence) * (1 + 1/p.Gamma)
}

// PredictionRate returns the manager's estimate of PR on run r.
func (p Params) PredictionRate(r Run) float64 {
	p = p.withDefaults()
	st := r.Stats()
	return (p.PRWeight*p.PR0 + float64(st.Easy)) / (p.PRWeight + float64(st.Tested))
}

// threshold sets l = c_θ/(γ ε_θ) (eq. 11 with α_θ = c_θ/ε_θ).
func (p Params) threshold(d Decision) Decision {
	d.Threshold = CTheta(p.Confidence) / (p.Gamma * d.EpsTheta)
	return d
}

// skip applies the elapsed-time strategy to a ModeTest decision.
func (p Params) skip(d Decision, r Run, t time.Time) Decision {
	if p.MaxSpeed <= 0 || d.Mode != ModeTest {
		return d
	}
	i := r.lastHard()
	if i < 0 {
		return d
	}
	if el := t.Sub(r[i].Time).Seconds(); el >= 0 && p.MaxSpeed*el <= d.Threshold {
		return Decision{Mode: ModePredict}
	}
	return d
}

// FixedUtility is the budget manager of the paper's Fig. 6: every step is
// configured for accuracy α (α_N = η(l + α_θ) = α), and the run stops when
// the budget left cannot pay for a hard step.
//
//	ε_θ = η c_θ (1 + 1/γ)/α,  ε_N = c_N/α,  l = c_θ/(γ ε_θ).
type FixedUtility struct {
	Params
	Accuracy float64 `json:"accuracy"` // α in metres
}

// Budget returns ε.
func (m FixedUtility) Budget() float64 { return m.Epsilon }

// Decide returns β(r) for a query at time t.
func (m FixedUtility) Decide(r Run, t time.Time) (Decision, error) {
	p := m.Params.withDefaults()
	if err := p.validate(); err != nil {
		return Decision{}, err
	}
	if !(m.Accuracy > 0) || math.IsInf(m.Accuracy, 1) {
		return Decision{}, paramErr("accuracy", m.Accuracy, "finite and > 0 metres")
	}
	d := Decision{
		Mode:     ModeTest,
		EpsTheta: p.Eta * CTheta(p.Confidence) * (1 + 1/p.Gamma) / m.Accuracy,
		EpsN:     CN(p.Confidence) / m.Accuracy,
	}
	d = p.threshold(d)
	if _, err := fit(d, r.Spent(), p.Epsilon, false, nil); err != nil {
		return Decision{}, err
	}
	return p.skip(d, r, t), nil
}

// FixedRate is the budget manager of the paper's Fig. 7: the expected
// cost per step is the rate ρ, eq. (9), and the accuracy follows.
//
//	ε_N = ρ / ((1-s)((1-PR) + k)),  ε_θ = k ε_N,  l = c_θ/(γ ε_θ),
//
// with k = TestShare(), PR the run's prediction-rate estimate and s the
// fraction of steps skipped by the elapsed-time strategy (s = 0 without
// it, which is exactly Fig. 7; with it the budget skipped steps save is
// reinvested in the others, as the paper describes; 1-s is floored at 1/4
// so that a long skipping streak cannot spend the budget on one step).
// The last step is scaled down to fit the budget left when at least half
// of it fits.
type FixedRate struct {
	Params
	Rate float64 `json:"rate"` // ρ per metre per step
}

// Budget returns ε.
func (m FixedRate) Budget() float64 { return m.Epsilon }

// Decide returns β(r) for a query at time t.
func (m FixedRate) Decide(r Run, t time.Time) (Decision, error) {
	p := m.Params.withDefaults()
	if err := p.validate(); err != nil {
		return Decision{}, err
	}
	if !(m.Rate > 0 && m.Rate <= p.Epsilon) {
		return Decision{}, paramErr("rate", m.Rate, "in (0, epsilon]")
	}
	k := p.TestShare()
	pr := p.PredictionRate(r)
	s := 0.0
	if len(r) > 0 {
		s = float64(r.Stats().Skipped) / float64(len(r))
	}
	s = math.Min(s, 0.75)
	en := m.Rate / ((1 - s) * ((1 - pr) + k))
	d := p.threshold(Decision{Mode: ModeTest, EpsTheta: k * en, EpsN: en})
	d, err := fit(d, r.Spent(), p.Epsilon, true, p.threshold)
	if err != nil {
		return Decision{}, err
	}
	return p.skip(d, r, t), nil
}

// Independent is the budget manager of the independent mechanism IM
// (Fig. 1): fresh noise at every step with ε_N = PerStep, no test.
type Independent struct {
	Epsilon float64 `json:"epsilon"`  // global budget per metre
	PerStep float64 `json:"per_step"` // ε_N per metre
	// ScaleLast lets the last step use the budget left if at least half of
	// PerStep is left (fixed rate); otherwise the run stops (fixed utility).
	ScaleLast bool `json:"scale_last,omitempty"`
}

// IndependentRate is IM with a fixed rate ρ: ε_N = ρ.
func IndependentRate(eps, rate float64) Independent {
	return Independent{Epsilon: eps, PerStep: rate, ScaleLast: true}
}

// IndependentUtility is IM with accuracy α at the given confidence:
// ε_N = c_N(δ)/α.
func IndependentUtility(eps, accuracy, confidence float64) Independent {
	return Independent{Epsilon: eps, PerStep: CN(confidence) / accuracy}
}

// Budget returns ε.
func (m Independent) Budget() float64 { return m.Epsilon }

// Decide returns (0, ε_N, -∞).
func (m Independent) Decide(r Run, _ time.Time) (Decision, error) {
	if err := checkEpsilon("epsilon", m.Epsilon); err != nil {
		return Decision{}, err
	}
	if err := checkEpsilon("per-step epsilon", m.PerStep); err != nil {
		return Decision{}, err
	}
	return fit(Decision{Mode: ModeNoise, EpsN: m.PerStep}, r.Spent(), m.Epsilon, m.ScaleLast, nil)
}
