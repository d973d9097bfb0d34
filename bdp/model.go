package bdp

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// ErrBelowFloor is returned when a target ε is at or below the smallest
// leakage a model's bound can certify (the Markov bound's 4 ln γ).
var ErrBelowFloor = errors.New("bdp: target epsilon is at or below the model's leakage floor")

// A Calibrator is a correlation model with a BDP leakage bound for τ-DP
// mechanisms. Epsilon always names the BDP target and Tau the DP parameter
// fed to the mechanism; keeping them apart is the point of this interface.
type Calibrator interface {
	// Name identifies the model in reports.
	Name() string
	// Tau returns the largest per-record DP parameter τ for which a τ-DP
	// mechanism is ε-BDP under the model.
	Tau(epsilon float64) (float64, error)
	// Leakage returns the model's upper bound on the BDP leakage of a
	// τ-DP mechanism.
	Leakage(tau float64) (float64, error)
}

func checkEpsilon(eps float64) error { return param.Positive("epsilon", eps) }

func checkTau(tau float64) error { return param.NonNegative("tau", tau) }

// Groups is Theorem 6.3, the general bound: the records split into
// independent groups of at most M correlated records (Def 6.2), with nothing
// else assumed about the distribution. Any τ-DP mechanism (bounded DP) is
// then Mτ-BDP. A fully correlated series, such as a Markov chain without
// further structure, has M = n.
type Groups struct{ M int }

// Name implements Calibrator.
func (g Groups) Name() string { return fmt.Sprintf("groups(m=%d)", g.M) }

func (g Groups) check() error {
	return param.AtLeastInt("m", g.M, 1)
}

// Tau implements Calibrator: τ = ε/m.
func (g Groups) Tau(eps float64) (float64, error) {
	if err := errors.Join(g.check(), checkEpsilon(eps)); err != nil {
		return 0, err
	}
	return eps / float64(g.M), nil
}

// Leakage implements Calibrator: mτ.
func (g Groups) Leakage(tau float64) (float64, error) {
	if err := errors.Join(g.check(), checkTau(tau)); err != nil {
		return 0, err
	}
	return float64(g.M) * tau, nil
}

// Gaussian is Theorem 6.14: the data are N(μ, Σ) with at most M correlated
// records per independent block, a constant diagonal σ² and
// |Σ_ij| ≤ Rho·σ² off the diagonal (Def 6.9), with Rho·(M−2) < 1. It applies
// to clipped (εℓ₁)-private mechanisms, such as the Laplace mechanism on a
// clipped sum (ClippedSum), whose DP parameter is τ; the bound does not
// depend on μ or σ².
type Gaussian struct {
	M   int
	Rho float64
}

// Name implements Calibrator.
func (g Gaussian) Name() string { return fmt.Sprintf("gaussian(m=%d,rho=%g)", g.M, g.Rho) }

func (g Gaussian) check() error {
	if err := param.First(param.AtLeastInt("m", g.M, 1), param.InRightOpen("rho", g.Rho, 0, 1)); err != nil {
		return err
	}
	if g.Rho*float64(g.M-2) >= 1 {
		return param.Invalid("rho", g.Rho, fmt.Sprintf("the Gaussian bound needs rho·(m−2) < 1, got %v·%d = %v", g.Rho, g.M-2, g.Rho*float64(g.M-2)))
	}
	return nil
}

// Factor is h(m, ρ) = m²/(4(1/ρ − m + 2)) + 1, the factor by which the
// leakage of a τ-DP clipped mechanism exceeds τ (Thm 6.14). It is 1 when
// m = 1 or ρ = 0, and 1 + ρ when m = 2.
func (g Gaussian) Factor() (float64, error) {
	if err := g.check(); err != nil {
		return 0, err
	}
	if g.M == 1 || g.Rho == 0 {
		return 1, nil
	}
	m := float64(g.M)
	return m*m/(4*(1/g.Rho-m+2)) + 1, nil
}

// Tau implements Calibrator: τ = ε/h, Eq. (6.42).
func (g Gaussian) Tau(eps float64) (float64, error) {
	h, err := g.Factor()
	if err != nil {
		return 0, err
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	return eps / h, nil
}

// Leakage implements Calibrator: hτ.
func (g Gaussian) Leakage(tau float64) (float64, error) {
	h, err := g.Factor()
	if err != nil {
		return 0, err
	}
	if err := checkTau(tau); err != nil {
		return 0, err
	}
	return h * tau, nil
}

// BeatsGroups reports whether the Gaussian bound is tighter than the general
// bound for the same m, Eq. (6.43): h ≤ m ⇔ ρ ≤ (m−1)/((5/4)m² − 3m + 2).
func (g Gaussian) BeatsGroups() bool {
	h, err := g.Factor()
	return err == nil && h < float64(g.M)
}

// RhoThreshold is the ρ of Eq. (6.43) at which h(m, ρ) = m.
func RhoThreshold(m int) float64 {
	fm := float64(m)
	return (fm - 1) / (1.25*fm*fm - 3*fm + 2)
}

// Markov is Theorem 6.20: the records are a finite, time-homogeneous Markov
// chain started from its stationary distribution (H2) whose transition
// probabilities are all positive (H1); Gamma = max P / min P. Any τ-DP
// mechanism is then (τ + 4 ln γ)-BDP, whatever the chain's length. Build it
// with NewMarkov to check a transition matrix.
type Markov struct{ Gamma float64 }

// Name implements Calibrator.
func (mk Markov) Name() string { return fmt.Sprintf("markov(gamma=%.4g)", mk.Gamma) }

func (mk Markov) check() error {
	return param.AtLeast("gamma", mk.Gamma, 1)
}

// Floor is 4 ln γ, the leakage the bound charges even at τ = 0: only BDP
// targets above it can be certified.
func (mk Markov) Floor() float64 { return 4 * math.Log(mk.Gamma) }

// Tau implements Calibrator: τ = ε − 4 ln γ, or ErrBelowFloor.
func (mk Markov) Tau(eps float64) (float64, error) {
	if err := errors.Join(mk.check(), checkEpsilon(eps)); err != nil {
		return 0, err
	}
	tau := eps - mk.Floor()
	if tau <= 0 {
		return 0, fmt.Errorf("%w: epsilon %v ≤ 4 ln γ = %v", ErrBelowFloor, eps, mk.Floor())
	}
	return tau, nil
}

// Leakage implements Calibrator: τ + 4 ln γ.
func (mk Markov) Leakage(tau float64) (float64, error) {
	if err := errors.Join(mk.check(), checkTau(tau)); err != nil {
		return 0, err
	}
	return tau + mk.Floor(), nil
}

// Calibration is the outcome of BestOf, ready to serialise.
type Calibration struct {
	Epsilon float64 `json:"epsilon"`
	Tau     float64 `json:"tau"`
	// Factor is ε/τ: how much larger the Laplace noise (and the (α, β)
	// accuracy α) is than for plain ε-DP (Cor 6.5, 6.15, 6.21).
	Factor float64 `json:"factor"`
	// Model names the calibrator that gave τ.
	Model      string      `json:"model"`
	Candidates []Candidate `json:"candidates"`
}

// Candidate is one model's answer in a Calibration.
type Candidate struct {
	Model string  `json:"model"`
	Tau   float64 `json:"tau,omitempty"`
	Error string  `json:"error,omitempty"`
}

// BestOf returns the largest τ over the models that apply, and which model
// gave it. Each model's bound is a valid upper bound on the leakage, so the
// best of them is too. Models that do not apply (for example the Markov bound
// below its floor) are listed with their reason; it is an error only if none
// applies.
func BestOf(eps float64, models ...Calibrator) (Calibration, error) {
	if err := checkEpsilon(eps); err != nil {
		return Calibration{}, err
	}
	if len(models) == 0 {
		return Calibration{}, errors.New("bdp: no correlation model given")
	}
	c := Calibration{Epsilon: eps}
	var errs []error
	for _, m := range models {
		tau, err := m.Tau(eps)
		if err != nil {
			c.Candidates = append(c.Candidates, Candidate{Model: m.Name(), Error: err.Error()})
			errs = append(errs, err)
			continue
		}
		c.Candidates = append(c.Candidates, Candidate{Model: m.Name(), Tau: tau})
		if tau > c.Tau {
			c.Tau, c.Model = tau, m.Name()
		}
	}
	if c.Model == "" {
		return c, fmt.Errorf("bdp: no model gives a valid budget: %w", errors.Join(errs...))
	}
	c.Factor = eps / c.Tau
	return c, nil
}
