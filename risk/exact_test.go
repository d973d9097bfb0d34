package risk

import (
	"math"
	"math/bits"
	"testing"
)

// oueChannel enumerates OUE's 2^m outputs: the true bit is 1 w.p. ½, every
// other bit w.p. q = 1/(e^ε+1) (Eq. A.2).
func oueChannel(eps float64, m int) [][]float64 {
	q := 1 / (math.Exp(eps) + 1)
	return Channel(m, 1<<m, func(x, th int) float64 {
		p := 0.5
		for j := range m {
			if j == x {
				continue
			}
			if th>>j&1 == 1 {
				p *= q
			} else {
				p *= 1 - q
			}
		}
		return p
	})
}

// ssChannel enumerates subset selection's size-ω subsets (Eq. A.3).
func ssChannel(eps float64, m int) [][]float64 {
	w := SubsetOmega(eps, m)
	p := ssP(eps, m, w)
	var subsets []int
	for s := 0; s < 1<<m; s++ {
		if bits.OnesCount(uint(s)) == w {
			subsets = append(subsets, s)
		}
	}
	cIn, cOut := binom(m-1, w-1), binom(m-1, w)
	return Channel(m, len(subsets), func(x, t int) float64 {
		if subsets[t]>>x&1 == 1 {
			return p / cIn
		}
		return (1 - p) / cOut
	})
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func TestExactMatchesClosedForms(t *testing.T) {
	for _, m := range []int{2, 3, 5, 8} {
		for _, eps := range []float64{0.3, 1, 2.5, 6} {
			lik, _ := GRRChannel(eps, m)
			near(t, "exact GRR", must(t)(Exact(lik, Setting{})), must(t)(GRR(eps, m)), 1e-13)
			near(t, "exact OUE", must(t)(Exact(oueChannel(eps, m), Setting{})), must(t)(OUE(eps, m)), 1e-13)
			near(t, "exact SS", must(t)(Exact(ssChannel(eps, m), Setting{})), must(t)(SubsetSelection(eps, m)), 1e-13)
		}
	}
	// ω = 2, 3 exercised: m = 8 at ε = 0.3 has ω = 3.
	if SubsetOmega(0.3, 8) != 3 {
		t.Fatalf("ω(0.3, 8) = %d, want 3", SubsetOmega(0.3, 8))
	}
}

func TestExactNonUniformPriors(t *testing.T) {
	priors := [][]float64{
		{0.5, 0.3, 0.2},
		{0.05, 0.1, 0.15, 0.3, 0.4},
		{0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.04, 0.03, 0.02, 0.01},
	}
	for _, pi := range priors {
		m := len(pi)
		mia := make([]int, m)
		for i := range mia {
			mia[i] = i
		}
		for _, eps := range []float64{0.5, 1.5, 4} {
			// OUE, aux = {∅}, general prior (Example A.17, π ascending).
			near(t, "OUE prior", must(t)(Exact(oueChannel(eps, m), Setting{Prior: pi})), must(t)(OUEPrior(eps, pi)), 1e-13)
			// OUE and GRR against a membership adversary.
			near(t, "OUE MIA", must(t)(Exact(oueChannel(eps, m), Setting{Prior: pi, Aux: mia})), must(t)(OUEMIA(eps, pi)), 1e-13)
			lik, _ := GRRChannel(eps, m)
			near(t, "GRR MIA", must(t)(Exact(lik, Setting{Prior: pi, Aux: mia})), must(t)(GRRPrior(eps, pi)), 1e-13)
			// Theorem 5.15 bounds every ε-DP mechanism, including these.
			b, _, _ := EpsDeltaPrior(eps, 0, pi)
			for name, l := range map[string][][]float64{"GRR": lik, "OUE": oueChannel(eps, m)} {
				if e := must(t)(Exact(l, Setting{Prior: pi})); e > b+1e-12 {
					t.Errorf("%s exact %v above Theorem 5.15 %v", name, e, b)
				}
			}
		}
	}
	near(t, "OUEPrior uniform", must(t)(OUEPrior(1.3, Uniform(6))), must(t)(OUE(1.3, 6)), 1e-14)
}

// Any attack that ignores θ has RAD 0 (Table 5.2); here: a mechanism whose
// output does not depend on the secret.
func TestExactIndependentOutputIsZero(t *testing.T) {
	lik := Channel(4, 3, func(x, t int) float64 { return []float64{0.2, 0.5, 0.3}[t] })
	near(t, "independent", must(t)(Exact(lik, Setting{Prior: []float64{0.1, 0.2, 0.3, 0.4}})), 0, 1e-15)
}

func TestExactEtaBalls(t *testing.T) {
	// With η large enough that every guess reconstructs every value, RAD is 0.
	lik, _ := GRRChannel(2, 5)
	all := func(g, x int) bool { return true }
	near(t, "η = ∞", must(t)(Exact(lik, Setting{Success: all})), 0, 1e-15)
	// A wider success ball can only change RAD through the evidence; the
	// value stays within the [−1, 1−κ] range.
	within1 := func(g, x int) bool { return g-x <= 1 && x-g <= 1 }
	v := must(t)(Exact(lik, Setting{Success: within1}))
	if v < 0 || v > 1-Kappa(Uniform(5)) {
		t.Errorf("η = 1 RAD %v out of range", v)
	}
}

func TestExactBadInput(t *testing.T) {
	if _, err := Exact([][]float64{{0.5, 0.5}, {0.5}}, Setting{}); err == nil {
		t.Error("ragged likelihood accepted")
	}
	if _, err := Exact([][]float64{{0.5, 0.6}, {0.5, 0.5}}, Setting{}); err == nil {
		t.Error("row not summing to 1 accepted")
	}
	if _, err := Exact([][]float64{{1, 0}, {0, 1}}, Setting{Prior: []float64{1}}); err == nil {
		t.Error("short prior accepted")
	}
}
