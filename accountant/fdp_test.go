package accountant

import (
	"math"
	"strings"
	"testing"
)

// isTradeOff checks the characterisation of thesis L622: f(0) ≤ 1,
// non-increasing, convex, f(α) ≤ 1 − α.
func isTradeOff(t *testing.T, name string, f TradeOff) {
	t.Helper()
	const n = 2000
	prev := math.Inf(1)
	for i := 0; i <= n; i++ {
		a := float64(i) / n
		b := f.Beta(a)
		if b > prev+1e-15 || b > 1-a+1e-12 || b < 0 {
			t.Fatalf("%s: f(%g) = %g (previous %g)", name, a, b, prev)
		}
		prev = b
		if i > 0 && i < n {
			h := 1.0 / n
			if mid, avg := b, (f.Beta(a-h)+f.Beta(a+h))/2; mid > avg+1e-12 {
				t.Fatalf("%s: not convex at %g: %g > %g", name, a, mid, avg)
			}
		}
	}
}

func TestTradeOffsAreValid(t *testing.T) {
	isTradeOff(t, "G_1", GaussianTradeOff{Mu: 1})
	isTradeOff(t, "Laplace 1", LaplaceTradeOff{Epsilon: 1})
	isTradeOff(t, "f_{1,0.1}", EpsilonDeltaTradeOff{Epsilon: 1, Delta: 0.1})
	isTradeOff(t, "GRR 1,5", GRRTradeOff{Epsilon: 1, Categories: 5})
}

func TestTradeOffKnownValues(t *testing.T) {
	// Gaussian TV at μ = 1: 2Φ(1/2) − 1 (anchors C.6).
	if got := (GaussianTradeOff{Mu: 1}).TV(); !near(got, 0.38292492254802624, 1e-15) {
		t.Errorf("G_1 TV = %.17g", got)
	}
	// G_μ(α) = Φ(Φ⁻¹(1−α) − μ): at α = 1/2 it is Φ(−μ); G_0 is 1 − α.
	if got := (GaussianTradeOff{Mu: 2}).Beta(0.5); !near(got, phi(-2), 1e-15) {
		t.Errorf("G_2(1/2) = %g", got)
	}
	for _, a := range []float64{0, 0.1, 0.7, 1} {
		if got := (GaussianTradeOff{}).Beta(a); !near(got, 1-a, 1e-15) {
			t.Errorf("G_0(%g) = %g", a, got)
		}
	}
	// Binary randomized response is exactly f_{ε,0}.
	for _, a := range []float64{0, 0.05, 0.2689, 0.5, 0.9, 1} {
		g := GRRTradeOff{Epsilon: 1, Categories: 2}.Beta(a)
		f := EpsilonDeltaTradeOff{Epsilon: 1}.Beta(a)
		if !near(g, f, 1e-15) {
			t.Errorf("GRR k=2 at %g: %g vs f_{1,0} %g", a, g, f)
		}
	}
}

// Every closed-form TV agrees with the numerical max_α(1 − f(α) − α), and
// the pure-DP TV is (e^ε − 1)/(e^ε + 1) attained at α = 1/(1 + e^ε).
func TestTVClosedFormsMatchNumeric(t *testing.T) {
	cases := []struct {
		name string
		f    TradeOff
		tv   float64
	}{
		{"gauss", GaussianTradeOff{Mu: 1}, GaussianTradeOff{Mu: 1}.TV()},
		{"gauss3", GaussianTradeOff{Mu: 3}, GaussianTradeOff{Mu: 3}.TV()},
		{"laplace", LaplaceTradeOff{Epsilon: 1}, LaplaceTradeOff{Epsilon: 1}.TV()},
		{"epsdelta", EpsilonDeltaTradeOff{Epsilon: 1, Delta: 0.1}, EpsilonDeltaTradeOff{Epsilon: 1, Delta: 0.1}.TV()},
		{"grr", GRRTradeOff{Epsilon: 2, Categories: 7}, GRRTradeOff{Epsilon: 2, Categories: 7}.TV()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TV(c.f); math.Abs(got-c.tv) > 1e-9 {
				t.Errorf("%s: numeric TV %.12g vs closed form %.12g", c.name, got, c.tv)
			}
		})
	}
	e := math.E
	if got := (EpsilonDeltaTradeOff{Epsilon: 1}).TV(); !near(got, (e-1)/(e+1), 1e-15) {
		t.Errorf("pure TV = %g", got)
	}
	// Laplace's exact TV 1 − e^{−ε/2} is below the pure-DP bound.
	if l, p := (LaplaceTradeOff{Epsilon: 1}).TV(), (EpsilonDeltaTradeOff{Epsilon: 1}).TV(); l >= p {
		t.Errorf("Laplace TV %g ≥ pure-DP bound %g", l, p)
	}
	if got := TVCompose(0.1, 3); !near(got, 1-0.9*0.9*0.9, 1e-15) {
		t.Errorf("TVCompose = %g", got)
	}
}

// G_a ⊗ G_b = G_{√(a²+b²)} (Dong, Roth & Su, used by thesis Thm. 4.16): the
// tensor product of two Gaussian tests, evaluated by Neyman–Pearson on the
// sum of the two shifted coordinates, matches ComposeGDP.
func TestGaussianTradeOffComposition(t *testing.T) {
	a, b := 0.6, 0.8
	mu, _ := ComposeGDP(a, b)
	// The optimal test for N(0,I) vs N((a,b),I) thresholds (a x + b y)/‖(a,b)‖,
	// which is N(0,1) under the null and N(‖(a,b)‖,1) under the alternative.
	for _, alpha := range []float64{0.01, 0.1, 0.5} {
		thr := -phiInv(alpha) // reject when the statistic exceeds thr
		beta := phi(thr - math.Hypot(a, b))
		if got := (GaussianTradeOff{Mu: mu}).Beta(alpha); !near(got, beta, 1e-14) {
			t.Errorf("α=%g: G_{%g} = %g, NP test %g", alpha, mu, got, beta)
		}
	}
}

// PureBestGuess is e^ε/(1+e^ε), computed here directly; GuessRate never
// rounds a bound to certainty.
func TestPureBestGuess(t *testing.T) {
	for _, eps := range []float64{0, 0.1, 1, math.Ln10, 5} {
		want := math.Exp(eps) / (1 + math.Exp(eps))
		if got := PureBestGuess(eps); math.Abs(got-want) > 1e-15 {
			t.Errorf("PureBestGuess(%g) = %.17g, want %.17g", eps, got, want)
		}
	}
	if got := PureBestGuess(math.Inf(1)); got != 1 {
		t.Errorf("PureBestGuess(+Inf) = %g, want 1", got)
	}
	if got := GuessRate(PureBestGuess(1)); got != "at most 73.1 % of the time" {
		t.Errorf("GuessRate(e/(1+e)) = %q", got)
	}
	if got := GuessRate(PureBestGuess(23)); !strings.Contains(got, "exceeds 99.9 %") {
		t.Errorf("GuessRate near 1 = %q, want it not to read as 100 %%", got)
	}
}
