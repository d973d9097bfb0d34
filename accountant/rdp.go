package accountant

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// DefaultOrders returns dp_accounting's default grid of Rényi orders:
// 1.1, 1.2, …, 10.9, then 11, 12, …, 63, then 128, 256, 512 and 1024.
func DefaultOrders() []float64 {
	orders := make([]float64, 0, 99+53+4)
	for x := 1; x < 100; x++ {
		orders = append(orders, 1+float64(x)/10)
	}
	for a := 11; a < 64; a++ {
		orders = append(orders, float64(a))
	}
	return append(orders, 128, 256, 512, 1024)
}

// RDP returns an upper bound on the Rényi divergence of order α > 1 between
// the outputs of ev on neighbouring inputs: the event's Rényi-DP curve.
// Composite events add their parts' curves. Events without a Rényi curve
// (EpsilonDelta with δ > 0, metric events) give an error matching
// ErrUnsupported.
func RDP(ev Event, order float64) (float64, error) {
	if !(order > 1) || math.IsNaN(order) {
		return 0, &param.Error{Name: "order", Value: order, Why: "must be > 1"}
	}
	if err := ev.Validate(); err != nil {
		return 0, err
	}
	return rdp(ev, order)
}

// rdp is RDP for an already validated event.
func rdp(ev Event, a float64) (float64, error) {
	switch e := ev.(type) {
	case Gaussian:
		return a * e.Rho(), nil
	case DiscreteGaussian:
		// Canonne, Kamath & Steinke (2020), Prop. 5: the Rényi divergence
		// between integer shifts of a discrete Gaussian is at most that of
		// the continuous one, with equality when (α−1)Δ is an integer.
		return a * e.Rho(), nil
	case ZCDP:
		return a * e.Rho, nil
	case RDPCurve:
		return e.At(a), nil
	case Laplace:
		return laplaceRDP(e.Epsilon(), a), nil
	case DiscreteLaplace:
		return discreteLaplaceRDP(1/e.Scale, e.Sensitivity, a), nil
	case GRR:
		return grrRDP(e.Epsilon, e.Categories, a), nil
	case EpsilonDelta:
		if e.Delta > 0 {
			return 0, fmt.Errorf("%v: an (ε, δ) guarantee with δ > 0 has no Rényi curve: %w", e, ErrUnsupported)
		}
		// Every ε-DP pair of output distributions is a post-processing of
		// binary randomized response with the same ε (Kairouz, Oh &
		// Viswanath 2015), so by data processing RR's divergence is the
		// tight bound.
		return grrRDP(e.Epsilon, 2, a), nil
	case SelfComposed:
		if e.Count == 0 {
			return 0, nil
		}
		r, err := rdp(e.Event, a)
		return float64(e.Count) * r, err
	case Composed:
		total := 0.0
		for _, inner := range e.Events {
			r, err := rdp(inner, a)
			if err != nil {
				return 0, err
			}
			total += r
		}
		return total, nil
	case MetricEvent:
		return 0, fmt.Errorf("%v: metric privacy bounds the loss per unit of distance, not per neighbouring pair; compose it with MetricEvent rules: %w", e, ErrUnsupported)
	}
	return 0, fmt.Errorf("%v (%T): %w", ev, ev, ErrUnsupported)
}

// laplaceRDP is Mironov (2017), Prop. 6, for a Laplace mechanism that is
// ε-DP: D_α = ε + log1p((α−1)·expm1(ε(1−2α))/(2α−1))/(α−1). Written as
// g·log1p(x)/x with x = (α−1)g, the ratio's Taylor series takes over near
// α = 1, where the limit is the KL divergence ε + e^{−ε} − 1.
func laplaceRDP(eps, a float64) float64 {
	if math.IsInf(a, 1) {
		return eps
	}
	g := math.Expm1(eps*(1-2*a)) / (2*a - 1)
	return eps + g*log1pOverX((a-1)*g)
}

// log1pOverX returns log1p(x)/x, continuous at x = 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) < 1e-4 {
		return 1 - x/2 + x*x/3 - x*x*x/4
	}
	return math.Log1p(x) / x
}

// grrRDP is the exact Rényi divergence of k-ary randomized response between
// two different true values. With p = e^ε/(e^ε+k−1) and q = 1/(e^ε+k−1),
// Σ_y P(y)^α Q(y)^{1−α} = q (e^{αε} + e^{(1−α)ε} + k − 2).
func grrRDP(eps float64, k int, a float64) float64 {
	if eps == 0 {
		return 0
	}
	km1 := float64(k - 1)
	if a*eps < 500 {
		// The ratio to its α = 1 value (1), minus one, in a form that keeps
		// precision as α → 1.
		num := math.Exp(eps)*math.Expm1((a-1)*eps) + math.Expm1(-(a-1)*eps)
		return math.Log1p(num/(math.Exp(eps)+km1)) / (a - 1)
	}
	// Large αε: factor out e^{αε} to avoid overflow.
	logSum := a*eps + math.Log1p(math.Exp((1-2*a)*eps)+(km1-1)*math.Exp(-a*eps))
	logNorm := eps + math.Log1p(km1*math.Exp(-eps))
	return (logSum - logNorm) / (a - 1)
}

// discreteLaplaceRDP is the exact Rényi divergence between the discrete
// Laplace P(z) ∝ e^{−t|z|} and its shift by the integer Δ. Summing the
// geometric series over z ≤ 0, 0 < z < Δ and z ≥ Δ gives
// D_α = tΔ + log(B)/(α−1), with r = e^{t(1−2α)} and
// B = (1 + e^{−t(2α−1)Δ})/(1+e^{−t}) + tanh(t/2)·r(1−r^{Δ−1})/(1−r).
func discreteLaplaceRDP(t float64, delta int, a float64) float64 {
	d := float64(delta)
	b := (1 + math.Exp(-t*(2*a-1)*d)) / (1 + math.Exp(-t))
	if delta > 1 {
		r := math.Exp(t * (1 - 2*a))
		b += math.Tanh(t/2) * r * -math.Expm1(t*(1-2*a)*(d-1)) / -math.Expm1(t*(1-2*a))
	}
	return t*d + math.Log(b)/(a-1)
}

// RDPAccountant accumulates a Rényi-DP curve on a fixed grid of orders, in
// the manner of dp_accounting's RdpAccountant. The zero value is not
// usable; create one with NewRDPAccountant.
type RDPAccountant struct {
	orders []float64
	curve  []float64
}

// NewRDPAccountant returns an empty accountant on the given orders, or on
// DefaultOrders when orders is empty. Orders must be finite and > 1.
func NewRDPAccountant(orders []float64) (*RDPAccountant, error) {
	if len(orders) == 0 {
		orders = DefaultOrders()
	}
	for i, a := range orders {
		if err := param.Greater(fmt.Sprintf("orders[%d]", i), a, 1); err != nil {
			return nil, err
		}
	}
	return &RDPAccountant{
		orders: append([]float64(nil), orders...),
		curve:  make([]float64, len(orders)),
	}, nil
}

// Supports reports whether ev has a Rényi curve this accountant can add.
func (acc *RDPAccountant) Supports(ev Event) bool {
	_, err := rdp(ev, 2)
	return err == nil
}

// Compose adds count runs of ev to the event log. On error the accountant is
// unchanged.
func (acc *RDPAccountant) Compose(ev Event, count int) error {
	if count < 0 {
		return &param.Error{Name: "count", Value: float64(count), Why: "must be non-negative"}
	}
	if err := ev.Validate(); err != nil {
		return err
	}
	if _, err := rdp(ev, 2); err != nil || count == 0 {
		// Zero runs cost nothing (and 0·∞ must not poison the curve),
		// but an unsupported event is still reported.
		return err
	}
	add := make([]float64, len(acc.orders))
	for i, a := range acc.orders {
		r, err := rdp(ev, a)
		if err != nil {
			return err
		}
		add[i] = float64(count) * r
	}
	for i := range acc.curve {
		acc.curve[i] += add[i]
	}
	return nil
}

// Curve returns copies of the orders and of the accumulated Rényi curve.
func (acc *RDPAccountant) Curve() (orders, eps []float64) {
	return append([]float64(nil), acc.orders...), append([]float64(nil), acc.curve...)
}

// Epsilon returns the smallest ε such that the composition is (ε, δ)-DP,
// and the order that attains it.
func (acc *RDPAccountant) Epsilon(delta float64) (eps, order float64, err error) {
	return RDPToEpsilon(acc.orders, acc.curve, delta)
}

// Delta returns the smallest δ such that the composition is (ε, δ)-DP, and
// the order that attains it (0 when the KL bound wins).
func (acc *RDPAccountant) Delta(eps float64) (delta, order float64, err error) {
	return RDPToDelta(acc.orders, acc.curve, eps)
}

func checkCurve(orders, curve []float64) error {
	if len(orders) != len(curve) || len(orders) == 0 {
		return fmt.Errorf("accountant: %d orders and %d curve values", len(orders), len(curve))
	}
	for i, a := range orders {
		if err := param.Greater(fmt.Sprintf("orders[%d]", i), a, 1); err != nil {
			return err
		}
		if !(curve[i] >= 0) {
			return &param.Error{Name: fmt.Sprintf("rdp[%d]", i), Value: curve[i], Why: "must be non-negative"}
		}
	}
	return nil
}

// RDPToEpsilon converts a Rényi curve to (ε, δ)-DP with the conversion of
// Canonne, Kamath & Steinke (2020, arXiv:2004.00010, Prop. 12), as
// dp_accounting's compute_epsilon does: at each order,
// ε = r + log1p(−1/α) − log(δα)/(α−1), or 0 when δ exceeds the KL bound
// √(1 − e^{−r}) on the total variation. Orders up to 1.01 are skipped
// because the bound is numerically unstable there. It returns the minimum
// over orders and the order attaining it; ε is +Inf (with order 0) if no
// order gives a finite bound.
func RDPToEpsilon(orders, curve []float64, delta float64) (eps, order float64, err error) {
	if err := checkCurve(orders, curve); err != nil {
		return 0, 0, err
	}
	if err := param.InLeftOpen("delta", delta, 0, 1); err != nil {
		return 0, 0, err
	}
	eps = math.Inf(1)
	for i, a := range orders {
		r := curve[i]
		var e float64
		switch {
		case delta*delta+math.Expm1(-r) > 0:
			// δ ≥ TV ≥ δ(0): the mechanism is (0, δ)-DP.
			e = 0
		case a > 1.01:
			e = r + math.Log1p(-1/a) - math.Log(delta*a)/(a-1)
		default:
			e = math.Inf(1)
		}
		if e < eps {
			eps, order = e, a
		}
	}
	return math.Max(0, eps), order, nil
}

// RDPToDelta is the counterpart of RDPToEpsilon (dp_accounting's
// compute_delta): at each order the smaller of the KL bound
// log δ ≤ ½ log(1 − e^{−r}) and Prop. 12's
// log δ ≤ (α−1)(r − ε + log1p(−1/α)) − log α. It returns min(δ, 1) and the
// order that attains it.
func RDPToDelta(orders, curve []float64, eps float64) (delta, order float64, err error) {
	if err := checkCurve(orders, curve); err != nil {
		return 0, 0, err
	}
	if err := param.NonNegative("epsilon", eps); err != nil {
		return 0, 0, err
	}
	best := math.Inf(1)
	for i, a := range orders {
		r := curve[i]
		ld := math.Inf(-1)
		if r > 0 {
			ld = 0.5 * math.Log1p(-math.Exp(-r))
		}
		if a > 1.01 {
			ld = math.Min(ld, (a-1)*(r-eps+math.Log1p(-1/a))-math.Log(a))
		}
		if ld < best {
			best, order = ld, a
		}
	}
	return math.Min(math.Exp(best), 1), order, nil
}
