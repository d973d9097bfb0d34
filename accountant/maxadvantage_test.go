package accountant

import (
	"math"
	"testing"
)

// MaxAdvantage over a sub-range: for pure ε-DP the free maximiser of
// 1 − f(α) − α is α = 1/(1 + e^ε); below it the maximum sits at hi, where
// the objective is (e^ε − 1)·hi.
func TestMaxAdvantage(t *testing.T) {
	f := EpsilonDeltaTradeOff{Epsilon: 1}
	e := math.E
	v, a := MaxAdvantage(f, 0, 1)
	if math.Abs(v-(e-1)/(e+1)) > 1e-12 || math.Abs(a-1/(1+e)) > 1e-6 {
		t.Errorf("over [0, 1]: %v at %v", v, a)
	}
	v, a = MaxAdvantage(f, 0, 0.1)
	if a != 0.1 || math.Abs(v-(e-1)*0.1) > 1e-15 {
		t.Errorf("over [0, 0.1]: %v at %v, want %v at 0.1", v, a, (e-1)*0.1)
	}
	// A range outside [0, 1] is clipped.
	if v, a := MaxAdvantage(f, -1, 2); math.Abs(v-(e-1)/(e+1)) > 1e-12 || a < 0 || a > 1 {
		t.Errorf("over [-1, 2]: %v at %v", v, a)
	}
}

// The closed-form TVs stay defined where e^ε overflows.
func TestTVLargeEpsilon(t *testing.T) {
	for _, tv := range []float64{
		EpsilonDeltaTradeOff{Epsilon: 1000, Delta: 1e-5}.TV(),
		GRRTradeOff{Epsilon: 1000, Categories: 4}.TV(),
		LaplaceTradeOff{Epsilon: 1000}.TV(),
		GaussianTradeOff{Mu: 1e6}.TV(),
	} {
		if tv != 1 {
			t.Errorf("TV at huge ε = %v, want 1", tv)
		}
	}
	// erf form: no cancellation at small μ (2Φ(μ/2) − 1 ≈ μ/√(2π)).
	if got, want := (GaussianTradeOff{Mu: 1e-12}).TV(), 1e-12/math.Sqrt(2*math.Pi); math.Abs(got-want) > 1e-15*want {
		t.Errorf("TV at μ = 1e-12: %g, want %g", got, want)
	}
}
