package risk

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/accountant"
)

func laplaceDensity(values []float64, b float64) func(float64, int) float64 {
	return func(t float64, x int) float64 { return math.Exp(-math.Abs(t-values[x])/b) / (2 * b) }
}

func gaussDensity(values []float64, s float64) func(float64, int) float64 {
	return func(t float64, x int) float64 {
		z := (t - values[x]) / s
		return math.Exp(-z*z/2) / (s * math.Sqrt(2*math.Pi))
	}
}

// locationKnots returns the values, their midpoints and a range of w scales
// beyond them.
func locationKnots(values []float64, w float64) []float64 {
	k := append([]float64(nil), values...)
	lo, hi := values[0], values[0]
	for i, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		for _, u := range values[i+1:] {
			k = append(k, (u+v)/2)
		}
	}
	return append(k, lo-w, hi+w)
}

// Quadrature of Theorem 5.3 reproduces the closed forms (A.15) and (A.10)
// for unequal gaps.
func TestExactDensityMatchesClosedForms(t *testing.T) {
	values := []float64{0, 0.3, 0.5, 1}
	for _, b := range []float64{0.1, 0.4, 2} {
		q := must(t)(ExactDensity(laplaceDensity(values, b), 4, Setting{}, locationKnots(values, 45*b), 0))
		near(t, "Laplace quadrature", q, must(t)(LaplaceValues(b, values)), 1e-10)
	}
	for _, s := range []float64{0.1, 0.4, 2} {
		q := must(t)(ExactDensity(gaussDensity(values, s), 4, Setting{}, locationKnots(values, 40*s), 0))
		near(t, "Gaussian quadrature", q, must(t)(GaussianValues(s, values)), 1e-10)
	}
}

// Two candidates under any prior: max_x wπ = π₀π₁|p₀ − p₁|, so RAD =
// 2π₀π₁·TV = TV·(1−κ_π): Theorem 5.2 is attained.
func TestExactDensityTwoPointPrior(t *testing.T) {
	values := []float64{0, 1}
	prior := []float64{0.3, 0.7}
	for _, eps := range []float64{0.5, 2} {
		b := 1 / eps
		// The maximiser changes where 0.3·p₀ − … changes sign, i.e. where
		// p₀ = p₁, at the midpoint: the default knots suffice.
		q := must(t)(ExactDensity(laplaceDensity(values, b), 2, Setting{Prior: prior}, locationKnots(values, 45*b), 0))
		near(t, "two-point", q, TVBound(accountant.LaplaceTradeOff{Epsilon: eps}.TV(), Kappa(prior)), 1e-10)
	}
}

// A piecewise-constant density is a finite mechanism in disguise: with the
// bin edges as knots, ExactDensity must equal Exact on the bin
// probabilities, for any prior, auxiliary labelling and tolerance η.
func TestExactDensityMatchesExactOnHistograms(t *testing.T) {
	lik := [][]float64{
		{0.5, 0.2, 0.1, 0.1, 0.1},
		{0.1, 0.5, 0.2, 0.1, 0.1},
		{0.1, 0.1, 0.4, 0.3, 0.1},
		{0.05, 0.05, 0.1, 0.3, 0.5},
	}
	edges := []float64{0, 0.5, 1.5, 2, 3.5, 4}
	dens := func(th float64, x int) float64 {
		for b := 0; b < 5; b++ {
			if th >= edges[b] && th < edges[b+1] {
				return lik[x][b] / (edges[b+1] - edges[b])
			}
		}
		return 0
	}
	within1 := func(g, x int) bool { return g-x <= 1 && x-g <= 1 }
	for _, s := range []Setting{
		{},
		{Prior: []float64{0.1, 0.2, 0.3, 0.4}},
		{Prior: []float64{0.4, 0.3, 0.2, 0.1}, Aux: []int{0, 0, 1, 1}},
		{Prior: []float64{0.25, 0.25, 0.25, 0.25}, Aux: []int{0, 1, 2, 3}},
		{Success: within1},
		{Prior: []float64{0.1, 0.2, 0.3, 0.4}, Aux: []int{7, 7, 9, 7}, Success: within1},
	} {
		want := must(t)(Exact(lik, s))
		// Gauss–Legendre nodes never sit on the edges, so each panel sees
		// one constant: the quadrature is exact up to rounding.
		got := must(t)(ExactDensity(dens, 4, s, edges, 4))
		near(t, "histogram", got, want, 1e-13)
	}
}

// With η covering the whole range every guess reconstructs every candidate,
// so RAD is 0; against a membership adversary RAD stays below Theorem 5.2.
func TestExactDensityEtaAndMIA(t *testing.T) {
	values := []float64{0, 0.25, 0.5, 1}
	const b = 0.5
	all := func(g, x int) bool { return true }
	near(t, "η = range", must(t)(ExactDensity(laplaceDensity(values, b), 4, Setting{Success: all}, locationKnots(values, 45*b), 0)), 0, 1e-12)
	mia := must(t)(ExactDensity(laplaceDensity(values, b), 4, Setting{Aux: []int{0, 1, 2, 3}}, locationKnots(values, 45*b), 0))
	exact0 := must(t)(LaplaceValues(b, values))
	tv := TVBound(accountant.LaplaceTradeOff{Epsilon: 1 / b}.TV(), 0.25) // ε-DP with ε = range/b
	if !(mia >= exact0-1e-12 && mia <= tv+1e-12) {
		t.Errorf("MIA RAD %v outside [aux-free %v, Thm 5.2 %v]", mia, exact0, tv)
	}
}
