package accountant

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracepriv/tracepriv/param"
)

// Event is one privacy-relevant release: a mechanism run once on the
// protected data. Events are immutable values; accountants read them and
// never change them. Validate reports the first invalid parameter as a
// *param.Error.
type Event interface {
	Validate() error
	String() string
}

// Laplace is the Laplace mechanism: noise with density ∝ exp(−|z|/Scale)
// added to a query with ℓ₁ sensitivity Sensitivity. It is ε-DP with
// ε = Sensitivity/Scale.
type Laplace struct {
	Scale       float64
	Sensitivity float64
}

// LaplaceForEpsilon returns the Laplace event with the scale Sensitivity/ε.
func LaplaceForEpsilon(epsilon, sensitivity float64) Laplace {
	return Laplace{Scale: sensitivity / epsilon, Sensitivity: sensitivity}
}

// Epsilon returns the pure-DP parameter Sensitivity/Scale.
func (l Laplace) Epsilon() float64 { return l.Sensitivity / l.Scale }

// Validate checks that the scale and sensitivity are positive and finite.
func (l Laplace) Validate() error {
	if err := param.Positive("scale", l.Scale); err != nil {
		return err
	}
	return param.Positive("sensitivity", l.Sensitivity)
}

func (l Laplace) String() string {
	return fmt.Sprintf("Laplace(scale=%g, sensitivity=%g)", l.Scale, l.Sensitivity)
}

// Gaussian is the Gaussian mechanism: N(0, Sigma²) noise on each coordinate
// of a query with ℓ₂ sensitivity Sensitivity. It is μ-GDP with
// μ = Sensitivity/Sigma and ρ-zCDP with ρ = μ²/2.
type Gaussian struct {
	Sigma       float64
	Sensitivity float64
}

// Mu returns the Gaussian-DP parameter Sensitivity/Sigma.
func (g Gaussian) Mu() float64 { return g.Sensitivity / g.Sigma }

// Rho returns the zCDP parameter Sensitivity²/(2 Sigma²).
func (g Gaussian) Rho() float64 { m := g.Mu(); return m * m / 2 }

// Validate checks that sigma and the sensitivity are positive and finite.
func (g Gaussian) Validate() error {
	if err := param.Positive("sigma", g.Sigma); err != nil {
		return err
	}
	return param.Positive("sensitivity", g.Sensitivity)
}

func (g Gaussian) String() string {
	return fmt.Sprintf("Gaussian(sigma=%g, sensitivity=%g)", g.Sigma, g.Sensitivity)
}

// DiscreteLaplace is the discrete Laplace (two-sided geometric) mechanism:
// integer noise with P(z) ∝ exp(−|z|/Scale) added to an integer query whose
// values move by at most Sensitivity. It is ε-DP with ε = Sensitivity/Scale.
type DiscreteLaplace struct {
	Scale       float64
	Sensitivity int
}

// Epsilon returns the pure-DP parameter Sensitivity/Scale.
func (l DiscreteLaplace) Epsilon() float64 { return float64(l.Sensitivity) / l.Scale }

// Validate checks the scale and that the sensitivity is a positive integer.
func (l DiscreteLaplace) Validate() error {
	if err := param.Positive("scale", l.Scale); err != nil {
		return err
	}
	if l.Sensitivity < 1 {
		return &param.Error{Name: "sensitivity", Value: float64(l.Sensitivity), Why: "must be a positive integer"}
	}
	return nil
}

func (l DiscreteLaplace) String() string {
	return fmt.Sprintf("DiscreteLaplace(scale=%g, sensitivity=%d)", l.Scale, l.Sensitivity)
}

// DiscreteGaussian is the discrete Gaussian mechanism (Canonne, Kamath &
// Steinke 2020): integer noise with P(z) ∝ exp(−z²/(2 Sigma²)) on an integer
// query with sensitivity Sensitivity. It is ρ-zCDP with
// ρ = Sensitivity²/(2 Sigma²).
type DiscreteGaussian struct {
	Sigma       float64
	Sensitivity int
}

// Rho returns the zCDP parameter Sensitivity²/(2 Sigma²).
func (g DiscreteGaussian) Rho() float64 {
	d := float64(g.Sensitivity) / g.Sigma
	return d * d / 2
}

// Validate checks sigma and that the sensitivity is a positive integer.
func (g DiscreteGaussian) Validate() error {
	if err := param.Positive("sigma", g.Sigma); err != nil {
		return err
	}
	if g.Sensitivity < 1 {
		return &param.Error{Name: "sensitivity", Value: float64(g.Sensitivity), Why: "must be a positive integer"}
	}
	return nil
}

func (g DiscreteGaussian) String() string {
	return fmt.Sprintf("DiscreteGaussian(sigma=%g, sensitivity=%d)", g.Sigma, g.Sensitivity)
}

// GRR is generalised randomized response over Categories values: the true
// value is reported with probability e^ε/(e^ε+k−1) and each other value with
// probability 1/(e^ε+k−1). Categories = 2 is Warner's randomized response.
// It is ε-DP (ε-LDP for a single record).
type GRR struct {
	Epsilon    float64
	Categories int
}

// Validate checks ε ≥ 0 and at least two categories.
func (r GRR) Validate() error {
	if err := param.NonNegative("epsilon", r.Epsilon); err != nil {
		return err
	}
	if r.Categories < 2 {
		return &param.Error{Name: "categories", Value: float64(r.Categories), Why: "must be at least 2"}
	}
	return nil
}

func (r GRR) String() string {
	return fmt.Sprintf("GRR(epsilon=%g, categories=%d)", r.Epsilon, r.Categories)
}

// EpsilonDelta is a black-box (ε, δ)-DP mechanism. With Delta = 0 it is
// pure ε-DP and every accountant supports it; with Delta > 0 it has no
// Rényi curve and the RDP accountant refuses it (the ledger then falls back
// to basic composition for it).
type EpsilonDelta struct {
	Epsilon float64
	Delta   float64
}

// Validate checks ε ≥ 0 and δ ∈ [0, 1].
func (e EpsilonDelta) Validate() error {
	if err := param.NonNegative("epsilon", e.Epsilon); err != nil {
		return err
	}
	return param.Probability("delta", e.Delta)
}

func (e EpsilonDelta) String() string {
	return fmt.Sprintf("EpsilonDelta(epsilon=%g, delta=%g)", e.Epsilon, e.Delta)
}

// ZCDP is a ρ-zero-concentrated-DP mechanism (Bun & Steinke 2016): its
// Rényi divergence of order α is at most α·Rho for every α > 1.
type ZCDP struct {
	Rho float64
}

// Validate checks ρ ≥ 0.
func (z ZCDP) Validate() error { return param.NonNegative("rho", z.Rho) }

func (z ZCDP) String() string { return fmt.Sprintf("zCDP(rho=%g)", z.Rho) }

// RDPCurve is a mechanism known only through its Rényi-DP curve ε(α).
// Either Rho > 0 gives the linear curve ε(α) = α·Rho — the CIP Gaussian
// mechanism's exact loss, α/2 · k r² L, has this form — or Orders and
// Epsilons tabulate the curve. A tabulated curve is read at any order α as
// the smallest tabulated ε at an order ≥ α (Rényi divergence is
// non-decreasing in α, so this is a valid upper bound) and is +Inf above
// the largest tabulated order.
type RDPCurve struct {
	Name     string
	Rho      float64
	Orders   []float64
	Epsilons []float64
}

// Validate checks that exactly one form is given and that the table is
// well formed.
func (c RDPCurve) Validate() error {
	if len(c.Orders) != len(c.Epsilons) {
		return &param.Error{Name: "epsilons", Value: float64(len(c.Epsilons)),
			Why: fmt.Sprintf("has %d values for %d orders", len(c.Epsilons), len(c.Orders))}
	}
	if c.Rho != 0 && len(c.Orders) > 0 {
		return &param.Error{Name: "rho", Value: c.Rho, Why: "give either rho or a table of orders and epsilons, not both"}
	}
	if len(c.Orders) == 0 {
		return param.Positive("rho", c.Rho)
	}
	for i, a := range c.Orders {
		if err := param.Greater(fmt.Sprintf("orders[%d]", i), a, 1); err != nil {
			return err
		}
		if err := param.NonNegative(fmt.Sprintf("epsilons[%d]", i), c.Epsilons[i]); err != nil {
			return err
		}
	}
	return nil
}

// At returns the curve's value (an upper bound on the Rényi divergence) at
// order α.
func (c RDPCurve) At(order float64) float64 {
	if len(c.Orders) == 0 {
		return order * c.Rho
	}
	best := math.Inf(1)
	for i, a := range c.Orders {
		if a >= order && c.Epsilons[i] < best {
			best = c.Epsilons[i]
		}
	}
	return best
}

func (c RDPCurve) String() string {
	name := c.Name
	if name == "" {
		name = "RDPCurve"
	}
	if len(c.Orders) == 0 {
		return fmt.Sprintf("%s(rho=%g)", name, c.Rho)
	}
	return fmt.Sprintf("%s(%d tabulated orders)", name, len(c.Orders))
}

// MetricEvent is a metric-privacy (d_X-privacy) mechanism: for all inputs
// x, x′ and output sets S, P[M(x) ∈ S] ≤ exp(Epsilon·d(x, x′)) P[M(x′) ∈ S],
// where d is the base metric named Metric (thesis Def. 2.5).
type MetricEvent struct {
	Epsilon float64
	Metric  string
}

// Validate checks ε ≥ 0 and that the metric is named.
func (m MetricEvent) Validate() error {
	if err := param.NonNegative("epsilon", m.Epsilon); err != nil {
		return err
	}
	if strings.TrimSpace(m.Metric) == "" {
		return &param.Error{Name: "metric", Value: math.NaN(), Why: "must name the base metric"}
	}
	return nil
}

func (m MetricEvent) String() string {
	return fmt.Sprintf("Metric(epsilon=%g per unit of %s)", m.Epsilon, m.Metric)
}

// PlanarLaplace returns the metric event of the planar Laplace mechanism
// (geo-indistinguishability) with ε per unit of Euclidean distance measured
// in unit (for instance "m"). Its metric is named "euclidean_"+unit, so
// releases measured in the same unit compose.
func PlanarLaplace(epsilon float64, unit string) MetricEvent {
	return MetricEvent{Epsilon: epsilon, Metric: "euclidean_" + unit}
}

// SelfComposed is Count independent or adaptive runs of Event.
type SelfComposed struct {
	Event Event
	Count int
}

// Validate checks the count and the inner event.
func (s SelfComposed) Validate() error {
	if s.Count < 0 {
		return &param.Error{Name: "count", Value: float64(s.Count), Why: "must be non-negative"}
	}
	if s.Event == nil {
		return &param.Error{Name: "event", Value: math.NaN(), Why: "is missing"}
	}
	return s.Event.Validate()
}

func (s SelfComposed) String() string { return fmt.Sprintf("%d × %v", s.Count, s.Event) }

// Composed is the adaptive sequential composition of Events.
type Composed struct {
	Events []Event
}

// Validate checks every inner event.
func (c Composed) Validate() error {
	for i, e := range c.Events {
		if e == nil {
			return &param.Error{Name: fmt.Sprintf("events[%d]", i), Value: math.NaN(), Why: "is missing"}
		}
		if err := e.Validate(); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
	}
	return nil
}

func (c Composed) String() string {
	parts := make([]string, len(c.Events))
	for i, e := range c.Events {
		parts[i] = e.String()
	}
	return "Composed(" + strings.Join(parts, ", ") + ")"
}
