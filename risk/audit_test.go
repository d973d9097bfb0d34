package risk

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// Test-only samplers built from noise.Seeded uniforms (the noise package's
// production samplers are audited separately).
func unif(src noise.Source) float64 { return (float64(src.Uint64()>>11) + 0.5) / (1 << 53) }

func laplace(b float64, src noise.Source) float64 {
	u := unif(src) - 0.5
	if u < 0 {
		return b * math.Log1p(2*u)
	}
	return -b * math.Log1p(-2*u)
}

func gauss(src noise.Source) float64 {
	return math.Sqrt(-2*math.Log(unif(src))) * math.Cos(2*math.Pi*unif(src))
}

// nearest is the Bayes attack for a location family with a symmetric,
// unimodal noise under a uniform prior: the Voronoi cell of the values.
func nearest(values []float64) func(float64) int {
	return func(t float64) int {
		best, bd := 0, math.Inf(1)
		for i, v := range values {
			if d := math.Abs(t - v); d < bd {
				best, bd = i, d
			}
		}
		return best
	}
}

func TestAuditBayesAttackConvergesLaplace(t *testing.T) {
	values := []float64{0, 0.5, 1}
	const b = 1.0
	exact := must(t)(LaplaceValues(b, values))
	a := Auditor{M: 3, Trials: 200000, Src: noise.Seeded(7)}
	r, err := a.Attack(func(x int, src noise.Source) float64 { return values[x] + laplace(b, src) }, nearest(values))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Bayes attack: RAD %.5f [%.5f, %.5f], exact %.5f", r.RAD, r.RADLower, r.RADUpper, exact)
	// Standard error √(p(1−p)/N) ≈ 0.0011; 0.005 is about 4.5 of them.
	near(t, "empirical RAD", r.RAD, exact, 0.005)
	if !(r.RADLower <= exact && exact <= r.RADUpper) {
		t.Errorf("exact %v outside the %v interval [%v, %v]", exact, r.Confidence, r.RADLower, r.RADUpper)
	}
}

func TestAuditLearnedAttackLaplaceAndGaussian(t *testing.T) {
	t.Parallel()
	values := []float64{0, 0.25, 0.5, 1}
	cases := []struct {
		name   string
		exact  float64
		sample Sampler
	}{
		{"laplace", must(t)(LaplaceValues(0.5, values)), func(x int, src noise.Source) float64 { return values[x] + laplace(0.5, src) }},
		{"gaussian", must(t)(GaussianValues(0.3, values)), func(x int, src noise.Source) float64 { return values[x] + 0.3*gauss(src) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Auditor{M: 4, Trials: 100000, TrainTrials: 25000, Src: noise.Seeded(11)}
			r, err := a.Continuous(c.sample)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s learned: RAD %.5f [%.5f, %.5f], exact %.5f", c.name, r.RAD, r.RADLower, r.RADUpper, c.exact)
			// A learned attack cannot beat the Bayes attack: the interval's
			// lower end stays below the exact RAD; and with 25k training runs
			// per value it gets within 0.01 of it (≈ 6 standard errors).
			if r.RADLower > c.exact {
				t.Errorf("%s: learned attack RAD %v [%v, %v] above the exact bound %v", c.name, r.RAD, r.RADLower, r.RADUpper, c.exact)
			}
			near(t, c.name+" learned RAD", r.RAD, c.exact, 0.01)
		})
	}
}

func TestAuditGRRDiscreteAndEpsilon(t *testing.T) {
	const m, eps = 5, 1.0
	lik, _ := GRRChannel(eps, m)
	sample, err := ChannelSampler(lik)
	if err != nil {
		t.Fatal(err)
	}
	var done int
	a := Auditor{M: m, Trials: 100000, Src: noise.Seeded(3), Progress: func(n int) { done += n }}
	r, err := a.Discrete(sample)
	if err != nil {
		t.Fatal(err)
	}
	exact := must(t)(GRR(eps, m))
	// The channel sampler's frequencies follow the likelihood.
	freq := make([]float64, m)
	for range 100000 {
		freq[sample(2, a.Src)]++
	}
	for th := range m {
		near(t, "sampler frequency", freq[th]/100000, lik[2][th], 0.006)
	}
	near(t, "GRR RAD", r.RAD, exact, 0.008)
	if !(r.RADLower <= exact && exact <= r.RADUpper) {
		t.Errorf("exact %v outside [%v, %v]", exact, r.RADLower, r.RADUpper)
	}
	point, cons, err := r.EpsilonLower()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GRR: RAD %.5f [%.5f, %.5f], exact %.5f; ε point %.4f, conservative %.4f", r.RAD, r.RADLower, r.RADUpper, exact, point, cons)
	// The conservative lower bound must not exceed the true ε; the point
	// estimate is close to it because GRR attains Eq. 5.60's bound.
	if cons > eps {
		t.Errorf("conservative ε lower bound %v exceeds the true ε %v", cons, eps)
	}
	near(t, "point ε", point, eps, 0.1)
	if want := m*a.TrainTrialsOrDefault() + a.Trials; done != want {
		t.Errorf("progress reported %d runs, want %d", done, want)
	}
}

// TrainTrialsOrDefault mirrors Auditor's default for the progress check.
func (a Auditor) TrainTrialsOrDefault() int {
	if a.TrainTrials > 0 {
		return a.TrainTrials
	}
	return max(a.Trials/a.M, 1000)
}

func TestAuditBadInput(t *testing.T) {
	s := func(int, noise.Source) float64 { return 0 }
	if _, err := (Auditor{M: 1, Trials: 10}).Continuous(s); err == nil {
		t.Error("M = 1 accepted")
	}
	if _, err := (Auditor{M: 3, Trials: 0}).Continuous(s); err == nil {
		t.Error("0 trials accepted")
	}
	if _, err := (Auditor{M: 3, Trials: 10, Confidence: 1.5}).Continuous(s); err == nil {
		t.Error("confidence 1.5 accepted")
	}
	nan := func(int, noise.Source) float64 { return math.NaN() }
	if _, err := (Auditor{M: 2, Trials: 10, TrainTrials: 5, Src: noise.Seeded(1)}).Continuous(nan); err == nil {
		t.Error("NaN output accepted")
	}
}
