package geoind

import (
	"math"
	"sync/atomic"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// Constants of the floating-point analysis of the grid mechanism (see the
// package documentation, "Discretisation").
const (
	// TailProb is τ, the probability that the noise radius exceeds R_max.
	// Outside that event the implemented sampler stays within Δ of the
	// ideal one; the event itself is charged as the additive term δ.
	TailProb = 0x1p-64
	// coordBound bounds |x| in metres: tangent-plane coordinates of points
	// in the origin's hemisphere are below the Earth's radius.
	coordBound = 1e7
	// relErr bounds the relative error of the sampled offset and of the
	// coordinate additions: the angle 2πU and the radius (E₁+E₂)/ε are
	// within a few ulps (2^-52) of their ideal values; 2^-46 leaves a
	// factor 64 of margin.
	relErr = 0x1p-46
)

// TailRadius returns R_max(ε), the radius exceeded by planar Laplace noise
// with probability TailProb: -(W₋₁(-τ/e) + 1)/ε ≈ 48.7/ε.
func TailRadius(eps float64) float64 {
	return -(numeric.LambertWm1(-TailProb/math.E) + 1) / eps
}

// gridEta returns η(ε, u), the relative error bound of a grid cell's
// probability under the implemented sampler:
//
//	η = (4Δ/u)(1 + Δ/u)·e^{√2·ε(u+Δ)},  Δ = (R_max(ε) + 10^7 m)·2^-46.
func gridEta(eps, u float64) float64 { return gridEtaOver(eps, eps, u) }

// gridEtaOver bounds η(ε, u) for every ε in [lo, hi]: Δ decreases with ε
// (through R_max) while the exponential increases, so take each at its
// worst end.
func gridEtaOver(lo, hi, u float64) float64 {
	delta := (TailRadius(lo) + coordBound) * relErr
	return 4 * delta / u * (1 + delta/u) * math.Exp(math.Sqrt2*hi*(u+delta))
}

func correction(eta, u float64) float64 {
	if !(eta < 0.5) {
		return math.Inf(1)
	}
	return (math.Log1p(eta) - math.Log1p(-eta)) / u
}

// GridCorrection returns ε' - ε, the privacy cost of floating point for the
// grid mechanism with step u sampled at ε:
//
//	ε' = ε + (1/u)·ln((1+η)/(1-η)).
//
// It returns +Inf when η >= 1/2, where the bound is useless (the grid is too
// coarse for ε: ε·u is large).
func GridCorrection(eps, u float64) float64 { return correction(gridEta(eps, u), u) }

// EffectiveEpsilon returns ε', the geo-indistinguishability level (per
// metre, between grid points) of the grid mechanism with step u sampling
// planar Laplace noise at es.
func EffectiveEpsilon(es, u float64) float64 { return es + GridCorrection(es, u) }

// SamplingEpsilon returns the ε_s at which the grid mechanism samples so
// that its release is eps-private between grid points: ε_s = eps - c̄ with
// c̄ the correction bound over [eps/2, eps] (gridEtaOver). It requires
// ε_s >= eps/2, so that EffectiveEpsilon(ε_s, u) <= ε_s + c̄ = eps.
func SamplingEpsilon(eps, u float64) (float64, error) {
	if err := checkEpsilon("epsilon", eps); err != nil {
		return 0, err
	}
	if !(u > 0) || math.IsInf(u, 1) {
		return 0, paramErr("grid", u, "finite and > 0 metres")
	}
	if m := lastSampling.Load(); m != nil && m.eps == eps && m.u == u {
		return m.es, nil
	}
	es, err := samplingEpsilon(eps, u)
	if err == nil {
		lastSampling.Store(&samplingMemo{eps: eps, u: u, es: es})
	}
	return es, err
}

// lastSampling remembers SamplingEpsilon's last answer: a trace's releases
// ask for the same (ε, u) at every fix, and the answer costs a Lambert W
// evaluation (TailRadius), more than the draw itself. Keyed by both inputs
// exactly (TestSamplingEpsilonRemembered).
var lastSampling atomic.Pointer[samplingMemo]

type samplingMemo struct{ eps, u, es float64 }

// samplingEpsilon is SamplingEpsilon's computation, on validated inputs.
func samplingEpsilon(eps, u float64) (float64, error) {
	c := correction(gridEtaOver(eps/2, eps, u), u)
	if !(c <= eps/2) {
		return 0, paramErr("grid", u, "fine enough that the floating-point correction is at most ε/2 (reduce the step or ε)")
	}
	return eps - c, nil
}
