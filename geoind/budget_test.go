package geoind

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/noise"
)

// paperEps is ε = ε*/r* = ln 10 / 100 m of the case study.
var paperEps = math.Ln10 / 100

func TestFixedUtilityEquations(t *testing.T) {
	m := FixedUtility{Params: Params{Epsilon: paperEps, Eta: 0.5, Gamma: 0.8}, Accuracy: 3000}
	d, err := m.Decide(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	aN := NoiseAccuracy(d.EpsN, 0.9)
	aT := TestAccuracy(d.EpsTheta, 0.9)
	// Eq. (10): α = α_N = η(l + α_θ); eq. (11): γ = α_θ/l.
	if math.Abs(aN-3000) > 1e-9 {
		t.Errorf("α_N = %g, want 3000", aN)
	}
	if v := 0.5 * (d.Threshold + aT); math.Abs(v-3000) > 1e-9 {
		t.Errorf("η(l + α_θ) = %g, want 3000", v)
	}
	if g := aT / d.Threshold; math.Abs(g-0.8) > 1e-12 {
		t.Errorf("α_θ/l = %g, want 0.8", g)
	}
	// l = α/(η(1+γ)) = 3000/0.9.
	if math.Abs(d.Threshold-3000/0.9) > 1e-9 {
		t.Errorf("l = %g, want %g", d.Threshold, 3000/0.9)
	}
}

func TestFixedRateEquations(t *testing.T) {
	rho := paperEps * 0.033
	p := Params{Epsilon: paperEps, Eta: 0.5, Gamma: 0.8, PR0: 0.6}
	m := FixedRate{Params: p, Rate: rho}
	d, err := m.Decide(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Eq. (9) at the initial prediction rate: ρ = ε_θ + (1-PR)ε_N.
	if v := d.EpsTheta + (1-0.6)*d.EpsN; math.Abs(v-rho) > 1e-15 {
		t.Errorf("ε_θ + (1-PR)ε_N = %g, want ρ = %g", v, rho)
	}
	// Same accuracy for both components: α_N = η(l + α_θ), and γ = α_θ/l.
	aN, aT := NoiseAccuracy(d.EpsN, 0.9), TestAccuracy(d.EpsTheta, 0.9)
	if v := 0.5 * (d.Threshold + aT); math.Abs(v-aN) > 1e-9*aN {
		t.Errorf("η(l + α_θ) = %g, α_N = %g", v, aN)
	}
	if g := aT / d.Threshold; math.Abs(g-0.8) > 1e-12 {
		t.Errorf("α_θ/l = %g, want 0.8", g)
	}
}

// TestIndependentPointsCovered checks the budget arithmetic of section V:
// ε = ln10/100, a 3.3 % rate covers ⌊1/0.033⌋ = 30 points; a 3 km fixed
// utility needs ε_N = c_N/3000 and covers ⌊ε·3000/c_N⌋ = ⌊17.76⌋ = 17
// points ("around 17" in the paper).
func TestIndependentPointsCovered(t *testing.T) {
	xs := make([]Vec, 100)
	ts := make([]time.Time, 100)
	for i := range ts {
		ts[i] = time.Unix(int64(60*i), 0)
	}
	for _, c := range []struct {
		m    Independent
		want int
	}{
		{IndependentRate(paperEps, paperEps*0.033), 30},
		{IndependentRate(paperEps, paperEps/30), 30},
		{IndependentUtility(paperEps, 3000, 0.9), int(paperEps * 3000 / 3.889720169867429)},
	} {
		mech := &Mechanism{Manager: c.m, Noise: PlanarLaplace{Grid: 1}}
		r, err := mech.Sanitize(xs, ts, noise.Seeded(6))
		if err != nil {
			t.Fatal(err)
		}
		if len(r) != c.want {
			t.Errorf("%+v covers %d points, want %d", c.m, len(r), c.want)
		}
		if s := r.Spent(); s > paperEps {
			t.Errorf("%+v spent %.17g > ε = %.17g", c.m, s, paperEps)
		}
	}
	if got := int(paperEps * 3000 / 3.889720169867429); got != 17 {
		t.Errorf("fixed-utility IM covers %d points, paper says about 17", got)
	}
}

// randomMechanism draws a mechanism configuration for the property tests.
func randomMechanism(rng *rand.Rand) *Mechanism {
	eps := math.Exp(rng.Float64()*4 - 6) // 0.0025 .. 0.135 per metre
	p := Params{
		Epsilon: eps, Eta: 0.3 + 0.7*rng.Float64(), Gamma: 0.2 + 0.8*rng.Float64(),
		PR0: rng.Float64() * 0.9, PRWeight: 1 + 9*rng.Float64(),
	}
	if rng.IntN(2) == 0 {
		p.MaxSpeed = 5 * rng.Float64()
	}
	var pred Predictor = Parrot{}
	if rng.IntN(2) == 0 {
		pred = Linear{}
	}
	var mgr Manager
	switch rng.IntN(4) {
	case 0:
		mgr = FixedRate{Params: p, Rate: eps / (5 + 40*rng.Float64())}
	case 1:
		mgr = FixedUtility{Params: p, Accuracy: 20 * (0.5 + rng.Float64()) * 4 / eps}
	case 2:
		mgr = IndependentRate(eps, eps/(5+40*rng.Float64()))
	default:
		mgr = IndependentUtility(eps, 20*(0.5+rng.Float64())*4/eps, 0.9)
	}
	nm := PlanarLaplace{Grid: []float64{0.5, 1, 10}[rng.IntN(3)]}
	return &Mechanism{Manager: mgr, Predictor: pred, Noise: nm}
}

// randomTrace is a random walk with pauses and jumps, at random intervals.
func randomTrace(rng *rand.Rand, n int) ([]Vec, []time.Time) {
	xs := make([]Vec, n)
	ts := make([]time.Time, n)
	x, t0 := Vec{}, time.Unix(1e9, 0)
	for i := range xs {
		switch rng.IntN(3) {
		case 0: // stay
		case 1:
			x.X += rng.NormFloat64() * 100
			x.Y += rng.NormFloat64() * 100
		default:
			x.X += rng.NormFloat64() * 5000
			x.Y += rng.NormFloat64() * 5000
		}
		t0 = t0.Add(time.Duration(30+rng.IntN(4000)) * time.Second)
		xs[i], ts[i] = x, t0
	}
	return xs, ts
}

// TestLemma2Accounting: on random runs, ε_β(r) recomputed by replaying the
// manager on every prefix (eq. 5) equals the sum of the budgets the
// mechanism spent, and never exceeds the manager's ε.
func TestLemma2Accounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := noise.Seeded(8)
	runs := 300
	if testing.Short() {
		runs = 80
	}
	exhausted := 0
	for k := range runs {
		m := randomMechanism(rng)
		xs, ts := randomTrace(rng, 1+rng.IntN(120))
		r, err := m.Sanitize(xs, ts, src)
		if err != nil {
			t.Fatalf("run %d: %v", k, err)
		}
		acc, err := Accounting(m, r)
		if err != nil {
			t.Fatalf("run %d: %v", k, err)
		}
		// Independent sum of what each step actually spent.
		sum := 0.0
		for _, st := range r {
			c := st.Decision.EpsTheta
			if st.Hard {
				c += st.Decision.EpsN
			}
			sum += c
		}
		if acc != sum || r.Spent() != sum {
			t.Errorf("run %d: Lemma 2 accounting %.17g, spent %.17g, Σ %.17g", k, acc, r.Spent(), sum)
		}
		if budget := m.Manager.Budget(); sum > budget {
			t.Errorf("run %d: spent %.17g > ε = %.17g", k, sum, budget)
		}
		if len(r) < len(xs) {
			exhausted++
		}
	}
	// The property is only meaningful if many runs hit the bound.
	if exhausted < runs/5 {
		t.Errorf("only %d of %d runs exhausted their budget", exhausted, runs)
	}
}

// TestAccountingDetectsForgery: a run whose flags or decisions were not
// produced by the manager is rejected.
func TestAccountingDetectsForgery(t *testing.T) {
	m := &Mechanism{Manager: FixedRate{Params: Params{Epsilon: paperEps, PR0: 0.5}, Rate: paperEps / 30}, Noise: PlanarLaplace{Grid: 1}}
	rng := rand.New(rand.NewPCG(1, 2))
	xs, ts := randomTrace(rng, 20)
	r, err := m.Sanitize(xs, ts, noise.Seeded(9))
	if err != nil {
		t.Fatal(err)
	}
	bad := append(Run(nil), r...)
	bad[3].Decision.EpsN /= 2
	if _, err := Accounting(m, bad); err == nil {
		t.Error("forged decision accepted")
	}
	bad = append(Run(nil), r...)
	bad[0].Hard = false // step 0 is always noise mode
	if _, err := Accounting(m, bad); err == nil {
		t.Error("easy first step accepted")
	}
}

// TestManagersNeverExceedBudget hammers the managers with adversarial runs
// (every prediction far off, so every tested step is hard) and tiny budgets.
func TestManagersNeverExceedBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	src := noise.Seeded(12)
	for k := range 200 {
		m := randomMechanism(rng)
		n := 200
		xs := make([]Vec, n)
		ts := make([]time.Time, n)
		for i := range xs {
			xs[i] = Vec{float64(i%2) * 1e7, 0}    // jump 10 000 km every step
			ts[i] = time.Unix(int64(i)*864000, 0) // 10 days: beyond any skip horizon
		}
		r, err := m.Sanitize(xs, ts, src)
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Spent(); s > m.Manager.Budget() {
			t.Fatalf("mechanism %d spent %.17g > ε = %.17g", k, s, m.Manager.Budget())
		}
		if len(r) == n {
			t.Errorf("mechanism %d covered all %d adversarial points", k, n)
		}
		// Once stopped it stays stopped.
		if _, err := m.Step(r, xs[0], ts[n-1].Add(time.Hour), src); !IsExhausted(err) {
			t.Errorf("mechanism %d: step after stop: %v", k, err)
		}
	}
}

func TestSkipStrategies(t *testing.T) {
	p := Params{Epsilon: paperEps, MaxSpeed: 15 / 3.6}
	m := &Mechanism{Manager: FixedUtility{Params: p, Accuracy: 3000}, Noise: PlanarLaplace{Grid: 1}}
	t0 := time.Unix(0, 0)
	// First step: no prediction, straight to noise with no test cost.
	d, _, err := m.Decide(nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != ModeNoise || d.EpsTheta != 0 {
		t.Errorf("first step decision %+v, want noise without test", d)
	}
	st, err := m.Step(nil, Vec{}, t0, noise.Seeded(13))
	if err != nil {
		t.Fatal(err)
	}
	r := Run{st}
	// l = 3000/0.9 m; at 15 km/h the user covers it in 800 s.
	l := 3000 / 0.9
	limit := time.Duration(l / (15 / 3.6) * float64(time.Second))
	for _, c := range []struct {
		dt   time.Duration
		want Mode
	}{{time.Minute, ModePredict}, {limit - time.Second, ModePredict}, {limit + time.Second, ModeTest}, {time.Hour, ModeTest}} {
		d, _, err := m.Decide(r, t0.Add(c.dt))
		if err != nil {
			t.Fatal(err)
		}
		if d.Mode != c.want {
			t.Errorf("after %v: mode %v, want %v", c.dt, d.Mode, c.want)
		}
	}
	// Time must not go backwards.
	if _, _, err := m.Decide(r, t0.Add(-time.Second)); err == nil {
		t.Error("query before the previous one accepted")
	}
}

func TestPredictors(t *testing.T) {
	r := Run{
		{Z: Vec{0, 0}, Hard: true},
		{Z: Vec{0, 0}},
		{Z: Vec{10, 5}, Hard: true},
		{Z: Vec{10, 5}},
	}
	if z, ok := (Parrot{}).Predict(r, time.Time{}); !ok || z != (Vec{10, 5}) {
		t.Errorf("parrot = %v %v", z, ok)
	}
	if z, ok := (Linear{}).Predict(r, time.Time{}); !ok || z != (Vec{20, 10}) {
		t.Errorf("linear = %v %v", z, ok)
	}
	if z, ok := (Linear{}).Predict(r[:2], time.Time{}); !ok || z != (Vec{0, 0}) {
		t.Errorf("linear with one hard point = %v %v", z, ok)
	}
	for _, p := range []Predictor{Parrot{}, Linear{}} {
		if _, ok := p.Predict(nil, time.Time{}); ok {
			t.Errorf("%T predicted from an empty run", p)
		}
	}
}
