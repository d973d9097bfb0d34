package risk

import (
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/accountant"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.8g, want %.8g (tol %g)", name, got, want, tol)
	}
}

// must(t)(f(...)) unwraps a (value, error) pair, failing the test on error.
func must(t *testing.T) func(float64, error) float64 {
	return func(v float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// The m = 11 regression table of thesis_part2.md §5.3 (computed there from
// the thesis's formulas, uniform prior, aux = {∅}, η = 0; five decimals).
func TestClosedFormsM11Table(t *testing.T) {
	const m = 11
	rows := []struct{ eps, grr, oue, ss, lap, thm52 float64 }{
		{0.5, 0.05063, 0.02923, 0.03037, 0.02245, 0.22265},
		{1, 0.12282, 0.07470, 0.09738, 0.04434, 0.42011},
		{2, 0.33402, 0.20880, 0.33402, 0.08651, 0.69236},
		{4, 0.75429, 0.40438, 0.75429, 0.16479, 0.87639},
		{8, 0.90575, 0.45356, 0.90575, 0.29971, 0.90848},
	}
	const tol = 5.01e-6
	for _, r := range rows {
		near(t, "GRR", must(t)(GRR(r.eps, m)), r.grr, tol)
		near(t, "OUE", must(t)(OUE(r.eps, m)), r.oue, tol)
		near(t, "SS", must(t)(SubsetSelection(r.eps, m)), r.ss, tol)
		near(t, "LaplaceUnitRange", must(t)(LaplaceUnitRange(r.eps, m)), r.lap, tol)
		near(t, "EpsDeltaBound", must(t)(EpsDeltaBound(r.eps, 0, m)), r.thm52, tol)
	}
}

// The Laplace m = 11 table of anchors.md §D.1, from the author's code. The
// first column is Theorem 5.3's closed form (A.18, the thesis's Th 4.3 in
// the paper's numbering); the second is Theorem 5.2 (the paper's Th 4.2)
// with the Laplace mechanism's own TV, 1 − e^{−ε/2}, not the generic
// (e^ε−1)/(e^ε+1) of the table above. Re-derived: (10/11)(1 − e^{−0.25}) =
// 0.201090 is both A.18 at ε = 5 and Th 5.2 at ε = 0.5, as the table shows.
func TestLaplaceM11AnchorTable(t *testing.T) {
	const m = 11
	rows := []struct{ eps, exact, tv float64 }{
		{0.5, 0.022446, 0.201090},
		{1, 0.044337, 0.357699},
		{2, 0.086511, 0.574655},
		{5, 0.201090, 0.834468},
	}
	for _, r := range rows {
		near(t, "A.18", must(t)(LaplaceUnitRange(r.eps, m)), r.exact, 5.01e-7)
		near(t, "Thm 5.2 Laplace", TVBound(accountant.LaplaceTradeOff{Epsilon: r.eps}.TV(), 1.0/m), r.tv, 5.01e-7)
		// The same TV from the Laplace trade-off function, numerically.
		near(t, "TV(f_laplace)", TVBound(accountant.TV(accountant.LaplaceTradeOff{Epsilon: r.eps}), 1.0/m), TVBound(accountant.LaplaceTradeOff{Epsilon: r.eps}.TV(), 1.0/m), 1e-9)
	}
}

func TestOUELimits(t *testing.T) {
	// aux = {∅} saturates at (m−1)/(2m); for m = 11 that is 0.454545.
	near(t, "OUE(60, 11)", must(t)(OUE(60, 11)), 5.0/11, 1e-12)
	near(t, "OUE(1000, 11)", must(t)(OUE(1000, 11)), 5.0/11, 1e-12)
	for _, eps := range []float64{0.1, 1, 5, 20, 40} {
		v := must(t)(OUEMIA(eps, Uniform(7)))
		if v >= 0.5 {
			t.Errorf("OUE MIA bound %v ≥ 1/2 at ε = %v", v, eps)
		}
		// OUE saturation: never above (m−1)/(2m), and increasing.
		if o := must(t)(OUE(eps, 11)); o > 5.0/11+1e-15 || o < must(t)(OUE(eps/2, 11)) {
			t.Errorf("OUE(%v, 11) = %v out of order", eps, o)
		}
	}
}

func TestLaplaceGaussianWorstCaseIsEqualGaps(t *testing.T) {
	// A.18 and A.12 are A.15 and A.10 at equal gaps, and any other spread of
	// the m values over a unit range gives less (Jensen).
	for _, m := range []int{2, 3, 5, 11} {
		eq := make([]float64, m)
		for i := range eq {
			eq[i] = float64(i) / float64(m-1)
		}
		for _, eps := range []float64{0.3, 1, 4} {
			near(t, "A.15 equal gaps", must(t)(LaplaceValues(1/eps, eq)), must(t)(LaplaceUnitRange(eps, m)), 1e-14)
		}
		for _, s := range []float64{0.2, 1, 3} {
			near(t, "A.10 equal gaps", must(t)(GaussianValues(s, eq)), must(t)(GaussianUnitRange(s, m)), 1e-14)
		}
		if m > 2 {
			uneq := append([]float64(nil), eq...)
			uneq[1] = eq[1] / 3
			if must(t)(LaplaceValues(1, uneq)) >= must(t)(LaplaceUnitRange(1, m)) {
				t.Errorf("m=%d: unequal gaps not below A.18", m)
			}
			if must(t)(GaussianValues(1, uneq)) >= must(t)(GaussianUnitRange(1, m)) {
				t.Errorf("m=%d: unequal gaps not below A.12", m)
			}
		}
	}
}

// Adult worst-case prior (thesis_part2 §5.3): two values 0 and 100, Laplace
// with sensitivity 100 and scale 100/ε, prior ½/½: RAD = ½(1 − e^{−ε/2}).
func TestLaplaceTwoPointAdult(t *testing.T) {
	for _, r := range []struct{ eps, want float64 }{{1, 0.19673}, {2, 0.31606}, {4, 0.43233}} {
		t.Run(fmt.Sprintf("eps=%g", r.eps), func(t *testing.T) {
			near(t, "Adult", must(t)(LaplaceValues(100/r.eps, []float64{100, 0})), r.want, 5.01e-6)
		})
	}
}

// Fig 5.3 setting (thesis_part2 §5.3): U[10], δ = 1e-5.
func TestBlackBoxFig53(t *testing.T) {
	const m = 10
	rows := []struct{ eps, prop, thm515, oue float64 }{
		{0.5, 0.06488, 0.05484, 0.03198},
		{1, 0.17184, 0.13198, 0.08079},
		{2, 0.63892, 0.35086, 0.21753},
		{4, 0.86763, 0.75849, 0.40388},
	}
	for _, r := range rows {
		k := 1.0 / m
		near(t, "Prop 5.13", must(t)(EpsDeltaBallBound(r.eps, 1e-5, k, k, k)), r.prop, 5.01e-6)
		b, _, err := EpsDeltaPrior(r.eps, 1e-5, Uniform(m))
		near(t, "Thm 5.15", must(t)(b, err), r.thm515, 5.01e-6)
		near(t, "Cor 5.16", must(t)(EpsDeltaUniform(r.eps, 1e-5, m)), r.thm515, 5.01e-6)
		near(t, "OUE", must(t)(OUE(r.eps, m)), r.oue, 5.01e-6)
	}
}

func TestTheorem515NonUniform(t *testing.T) {
	prior := []float64{0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.04, 0.03, 0.02, 0.01}
	b, k, err := EpsDeltaPrior(1, 1e-5, prior)
	near(t, "Thm 5.15 ε=1", must(t)(b, err), 0.25213, 5.01e-6)
	if k != 3 {
		t.Errorf("K = %d, want 3", k)
	}
	b, k, err = EpsDeltaPrior(2, 1e-5, prior)
	near(t, "Thm 5.15 ε=2", must(t)(b, err), 0.49530, 5.01e-6)
	if k != 5 {
		t.Errorf("K = %d, want 5", k)
	}
	near(t, "Thm 5.2", TVBound(accountant.EpsilonDeltaTradeOff{Epsilon: 1, Delta: 1e-5}.TV(), Kappa(prior)), 0.35676, 5.01e-6)
	// π = (½, ½) recovers Theorem 5.2 (l.2746).
	for _, eps := range []float64{0.5, 2, 6} {
		b, _, err := EpsDeltaPrior(eps, 1e-4, []float64{0.5, 0.5})
		near(t, "Thm 5.15 two-point", must(t)(b, err), TVBound(accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: 1e-4}.TV(), 0.5), 1e-12)
	}
}

func TestCor516EqualsGRR(t *testing.T) {
	for _, m := range []int{2, 3, 10, 3052} {
		for _, eps := range []float64{0.01, 0.5, 3, 12} {
			near(t, "Cor516=GRR", must(t)(EpsDeltaUniform(eps, 0, m)), must(t)(GRR(eps, m)), 1e-13)
		}
	}
}

func TestSubsetSelectionOmegaOneIsGRR(t *testing.T) {
	// ω = 1 whenever m/(e^ε+1) < 2.
	for _, m := range []int{2, 3, 5} {
		for _, eps := range []float64{0.5, 1, 3} {
			if SubsetOmega(eps, m) != 1 {
				continue
			}
			near(t, "SS=GRR", must(t)(SubsetSelection(eps, m)), must(t)(GRR(eps, m)), 1e-14)
		}
	}
}

// DP-SGD setting of thesis_part2 §5.3: m = 8, T = 100, δ = 1e-5, μ from the
// GDP curve. Columns: μ, σ, Thm 5.2, Thm 5.11, Hayes ReRo (four decimals).
func TestDPSGDTable(t *testing.T) {
	const m, steps = 8, 100
	rows := []struct{ eps, mu, sigma, thm52, thm511, hayes float64 }{
		{1, 0.2681, 37.31, 0.0933, 0.0605, 0.1888},
		{2, 0.5016, 19.94, 0.1733, 0.1250, 0.2582},
		{4, 0.9249, 10.81, 0.3117, 0.2629, 0.4108},
		{8, 1.6660, 6.00, 0.5208, 0.5096, 0.6970},
	}
	for _, r := range rows {
		// σ of one step at μ-GDP with T-fold composition: the composed
		// mechanism is √T/σ-GDP, so solve the GDP curve for μ directly.
		s := must(t)(accountant.GaussianSigma(r.eps, 1e-5, 1))
		mu := 1 / s
		near(t, "mu", mu, r.mu, 5.01e-5)
		sigma := math.Sqrt(steps) / mu
		near(t, "sigma", sigma, r.sigma, 5.01e-3)
		near(t, "Thm 5.2", must(t)(DPSGDTV(sigma, steps, m)), r.thm52, 5.01e-5)
		near(t, "Thm 5.11", must(t)(DPSGD(sigma, steps, m)), r.thm511, 5.01e-5)
		near(t, "Thm 5.11 numeric", FDPBoundDiscrete(accountant.GaussianTradeOff{Mu: mu}, 1.0/m, 1.0/m), r.thm511, 5.01e-5)
		near(t, "Hayes", HayesReRo(accountant.GaussianTradeOff{Mu: mu}, 1.0/m), r.hayes, 5.01e-5)
	}
}

func TestGDPDelta(t *testing.T) {
	near(t, "δ(1;1)", must(t)(accountant.GDPDelta(1, 1)), 0.126937, 5.01e-7)
	near(t, "δ(0.5;1)", must(t)(accountant.GDPDelta(1, 0.5)), 0.238422, 5.01e-7)
	// Analytic Gaussian (issue 7): σ = 10, ε = 0.1, sensitivity 1.
	near(t, "analytic Gaussian", must(t)(accountant.GDPDelta(0.1, 0.1)), 0.008751768145810, 1e-14)
	s := must(t)(accountant.GaussianSigma(0.1, 0.008751768145810, 1))
	near(t, "GaussianSigma", s, 10, 1e-8)
	// Far tail: finite, positive, decreasing.
	d1, d2 := must(t)(accountant.GDPDelta(1, 20)), must(t)(accountant.GDPDelta(1, 30))
	if !(d1 > d2 && d2 > 0) {
		t.Errorf("tail δ(20)=%v, δ(30)=%v not positive and decreasing", d1, d2)
	}
}

func TestGDPUniformMatchesNumericMax(t *testing.T) {
	for _, m := range []int{2, 5, 11} {
		for _, mu := range []float64{0.1, 0.7, 2, 5} {
			near(t, "Ex 5.12", must(t)(GDPUniform(mu, m)), FDPBoundDiscrete(accountant.GaussianTradeOff{Mu: mu}, 1/float64(m), 1/float64(m)), 1e-10)
		}
	}
}

func TestTradeOffTV(t *testing.T) {
	for _, eps := range []float64{0.1, 1, 3} {
		near(t, "TV eps-delta", accountant.TV(accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: 1e-3}), accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: 1e-3}.TV(), 1e-10)
		near(t, "TV laplace", accountant.TV(accountant.LaplaceTradeOff{Epsilon: eps}), accountant.LaplaceTradeOff{Epsilon: eps}.TV(), 1e-10)
		near(t, "TV GDP", accountant.TV(accountant.GaussianTradeOff{Mu: eps}), accountant.GaussianTradeOff{Mu: eps}.TV(), 1e-10)
	}
}

// The Theorem 5.3 closed forms lie below Theorem 5.2 for the same ε (Fig
// 5.1), and GRR ≥ SS ≥ OUE.
func TestOrdering(t *testing.T) {
	const m = 11
	for eps := 0.25; eps <= 14; eps += 0.25 {
		g, s, o := must(t)(GRR(eps, m)), must(t)(SubsetSelection(eps, m)), must(t)(OUE(eps, m))
		l := must(t)(LaplaceUnitRange(eps, m))
		tv := must(t)(EpsDeltaBound(eps, 0, m))
		if !(g <= tv+1e-15 && s <= g+1e-15 && o <= s+1e-15 && l <= tv) {
			t.Errorf("ε=%v: GRR %v SS %v OUE %v Laplace %v Thm5.2 %v out of order", eps, g, s, o, l, tv)
		}
		if eps < 13.5 && l >= o {
			t.Errorf("ε=%v: Laplace %v not below OUE %v", eps, l, o)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := GRR(-1, 3); err == nil {
		t.Error("negative ε accepted")
	}
	if _, err := OUE(1, 1); err == nil {
		t.Error("m = 1 accepted")
	}
	if _, err := GaussianUnitRange(0, 3); err == nil {
		t.Error("σ = 0 accepted")
	}
	if _, _, err := EpsDeltaPrior(1, 0, []float64{0.5, 0.6}); err == nil {
		t.Error("prior summing to 1.1 accepted")
	}
	if _, err := LaplaceValues(1, []float64{1}); err == nil {
		t.Error("one query value accepted")
	}
	if _, err := EpsDeltaUniform(math.NaN(), 0, 3); err == nil {
		t.Error("NaN ε accepted")
	}
}
