package geoind

import (
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// testSensitivity is S, the resolution (metres) below which the secure
// lattice Laplace of the test stops being exactly metric-private: for
// d(x, x') >= S the test is ε_θ·d-private, for closer secrets its
// log-ratio is at most ε_θ·S (see Test).
const testSensitivity = 0x1p-10

// Test is the private test Θ(ε_θ, l, z̃) of the paper, eq. (2):
//
//	Θ(ε_θ, l, z̃)(x) = easy  if d(x, z̃) <= l + Lap(ε_θ),  hard otherwise.
//
// It is evaluated as "Lap release of d(x, z̃) - l is <= 0", which has the
// same distribution (the noise is symmetric) and is post-processing of a
// Laplace release of a 1-Lipschitz function of x: hence ε_θ·d-privacy
// (Fact 1). The Laplace is noise.Laplace, the secure lattice sampler; with
// sensitivity S = 2^-10 m and parameter ε_θ·S its noise has scale 1/ε_θ,
// and its guarantee e^{ε_θ S (Δ+g)/(S+g)} for inputs Δ apart (g the lattice
// step) is at most e^{ε_θ·max(Δ, S)}.
type Test struct {
	Epsilon   float64 // ε_θ, per metre
	Threshold float64 // l, metres
}

// Validate checks ε_θ > 0 and a finite l >= 0.
func (t Test) Validate() error {
	if err := checkEpsilon("test epsilon", t.Epsilon); err != nil {
		return err
	}
	if !(t.Threshold >= 0) || math.IsInf(t.Threshold, 1) {
		return paramErr("threshold", t.Threshold, "finite and >= 0 metres")
	}
	return nil
}

// Easy runs the test on the secret x against the prediction pred and
// reports whether the prediction is accepted (the step is easy).
func (t Test) Easy(x, pred Vec, src noise.Source) (bool, error) {
	if err := t.Validate(); err != nil {
		return false, err
	}
	return t.EasyDist(Dist(x, pred), src), nil
}

// EasyDist is Easy for a precomputed distance d(x, z̃); parameters must be
// valid.
func (t Test) EasyDist(d float64, src noise.Source) bool {
	lap := noise.Laplace{Epsilon: t.Epsilon * testSensitivity, Sensitivity: testSensitivity, Src: src}
	return lap.Add(d-t.Threshold) <= 0
}

// PassProbability returns P(easy) = P(Lap(ε_θ) >= d - l) for the continuous
// Laplace the lattice sampler approximates: 1 - ½e^{-ε(l-d)} for d <= l,
// ½e^{-ε(d-l)} otherwise. It is the oracle of the tests and of Stronati's
// delta_of_alpha.
func (t Test) PassProbability(d float64) float64 {
	s := d - t.Threshold
	if s <= 0 {
		return 1 - 0.5*math.Exp(t.Epsilon*s)
	}
	return 0.5 * math.Exp(-t.Epsilon*s)
}
