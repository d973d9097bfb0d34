package geoind

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// adversarialTrace jumps 10,000 km at every step, ten days apart: every
// prediction is rejected, so every tested step is hard and pays its worst
// case, and the elapsed-time skip never applies.
func adversarialTrace(n int) ([]Vec, []time.Time) {
	xs := make([]Vec, n)
	ts := make([]time.Time, n)
	for i := range xs {
		xs[i] = Vec{float64(i%2) * 1e7, 0}
		ts[i] = time.Unix(int64(i)*864000, 0)
	}
	return xs, ts
}

// stayThenJump stays at one place for the first 70 % of its n points,
// which drives the prediction-rate estimate towards 1, then jumps 10,000
// km at every step: the worst case for a manager that sets its noise from
// that estimate, as every hard step then costs about three times its rate.
func stayThenJump(n int) ([]Vec, []time.Time) {
	xs, ts := adversarialTrace(n)
	for i := range xs[:n*7/10] {
		xs[i] = Vec{}
	}
	return xs, ts
}

// randomParams draws the managers' parameters for the property tests,
// with a prior prediction rate up to 0.99 (the worst case for a manager
// that trusts it: every step then costs far more than the rate when the
// predictions fail).
func randomParams(rng *rand.Rand, eps float64) Params {
	p := Params{
		Epsilon: eps, Eta: 0.3 + 0.7*rng.Float64(), Gamma: 0.2 + 0.8*rng.Float64(),
		PR0: rng.Float64() * 0.99, PRWeight: 1 + 9*rng.Float64(),
	}
	if rng.IntN(2) == 0 {
		p.MaxSpeed = 5 * rng.Float64()
	}
	return p
}

// coverage runs m over xs and returns the run (its length is the number
// of points covered), after
// checking what every run must satisfy: spending within the budget, the
// Lemma 2 accounting equal to the spending, and every drawn ε_N within the
// manager's public noise range.
func coverage(t *testing.T, m *Mechanism, xs []Vec, ts []time.Time, src noise.Source) Run {
	t.Helper()
	r, err := m.Sanitize(xs, ts, src)
	if err != nil {
		t.Fatalf("%T: %v", m.Manager, err)
	}
	acc, err := Accounting(m, r)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, st := range r {
		sum += st.Decision.Cost(st.Hard)
	}
	if acc != sum || sum > m.Manager.Budget() {
		t.Fatalf("%T: accounting %.17g, spent %.17g, budget %.17g", m.Manager, acc, sum, m.Manager.Budget())
	}
	if lo, hi, ok := noiseRange(m.Manager); ok {
		for i, st := range r {
			if st.Decision.Mode != ModePredict && !(st.Decision.EpsN >= lo && st.Decision.EpsN <= hi) {
				t.Fatalf("%T step %d: ε_N %.17g outside its public range [%.17g, %.17g]", m.Manager, i, st.Decision.EpsN, lo, hi)
			}
		}
	}
	return r
}

// TestPlannedCoversEveryQuery: on random and adversarial traces, with
// random parameters (including a prior prediction rate near 1, which makes
// the first steps expensive when every prediction fails), the planned
// manager answers every one of its N queries, spends at most ε, and draws
// every ε_N within the bounds checked before sampling; the N+1-th query
// is refused. Negative controls, on the stay-then-jump traces: the
// fixed-rate manager at the rate the CLI used to suggest (0.9ε/N), and
// the planned rule without its reserve cap, leave points uncovered.
func TestPlannedCoversEveryQuery(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	src := noise.Seeded(25)
	cases := 400
	if testing.Short() {
		cases = 120
	}
	var fixedShort, uncappedShort, adversarial int
	for k := range cases {
		// 0.082 .. 1 per metre: every manager here draws noise the plane
		// can represent for up to 300 points.
		eps := math.Exp(rng.Float64()*2.5 - 2.5)
		p := randomParams(rng, eps)
		n := 1 + rng.IntN(300)
		var xs []Vec
		var ts []time.Time
		kind := rng.IntN(3)
		switch kind {
		case 0:
			xs, ts = randomTrace(rng, n)
		case 1:
			xs, ts = adversarialTrace(n)
		default:
			xs, ts = stayThenJump(n)
		}
		var pred Predictor = Parrot{}
		if rng.IntN(2) == 0 {
			pred = Linear{}
		}
		grid := PlanarLaplace{Grid: 1}
		for _, indep := range []bool{false, true} {
			mgr := Planned{Params: p, Queries: n, Independent: indep}
			m := &Mechanism{Manager: mgr, Predictor: pred, Noise: grid}
			r := coverage(t, m, xs, ts, src)
			if len(r) != n {
				t.Fatalf("case %d (independent %v, %d points, PR0 %.2f): covered %d", k, indep, n, p.PR0, len(r))
			}
			if _, err := m.Step(r, xs[0], ts[n-1].Add(time.Hour), src); !IsExhausted(err) {
				t.Fatalf("case %d: query %d of a plan for %d: %v", k, n+1, n, err)
			}
		}
		if kind != 2 || n < 10 {
			continue
		}
		adversarial++
		pf := p
		pf.MaxSpeed = 0
		fixed := &Mechanism{Manager: FixedRate{Params: pf, Rate: 0.9 * eps / float64(n)}, Predictor: pred, Noise: grid}
		if len(coverage(t, fixed, xs, ts, src)) < n {
			fixedShort++
		}
		unc := &Mechanism{Manager: uncappedPlan{Planned{Params: p, Queries: n}}, Predictor: pred, Noise: grid}
		// Without the cap the noise can also grow past what the plane
		// represents (an error mid-run): not covered either.
		if r, err := unc.Sanitize(xs, ts, src); err != nil || len(r) < n {
			uncappedShort++
		}
	}
	// The controls must fail on most stay-then-jump traces, or the
	// coverage check above would not tell a planner that covers from one
	// that does not.
	t.Logf("negative controls: fixed rate 0.9ε/N short on %d, uncapped plan on %d, of %d stay-then-jump traces", fixedShort, uncappedShort, adversarial)
	if fixedShort < adversarial/2 || uncappedShort < adversarial/2 {
		t.Errorf("negative controls: fixed rate 0.9ε/N short on %d, uncapped plan on %d, of %d stay-then-jump traces", fixedShort, uncappedShort, adversarial)
	}
}

// uncappedPlan is Planned without the reserve cap: the rate R/n in the
// fixed-rate formula, refused (not scaled) when its worst case does not
// fit. It is the negative control of TestPlannedCoversEveryQuery.
type uncappedPlan struct{ Planned }

func (m uncappedPlan) Decide(r Run, t time.Time) (Decision, error) {
	p := m.Params.withDefaults()
	n := m.Queries - len(r)
	if n < 1 {
		return Decision{}, ErrExhausted
	}
	rem := p.Epsilon - r.Spent()
	k := p.TestShare()
	en := rem / float64(n) / ((1 - p.PredictionRate(r)) + k)
	d := p.threshold(Decision{Mode: ModeTest, EpsTheta: k * en, EpsN: en})
	if _, err := fit(d, r.Spent(), p.Epsilon, false, nil); err != nil {
		return Decision{}, err
	}
	return p.skip(d, r, t), nil
}

// TestPlannedDecisions recomputes the planned manager's first decisions
// from its definition: IM spends ε/N per step; PM starts at the rate ε/N
// in the fixed-rate formula at the prior prediction rate, and its worst
// case is capped so that every later query keeps ε/(2N).
func TestPlannedDecisions(t *testing.T) {
	p := Params{Epsilon: paperEps, PR0: 0.5}
	const n = 40
	im := Planned{Params: p, Queries: n, Independent: true}
	d, err := im.Decide(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := paperEps / n * lastScale; d.Mode != ModeNoise || math.Abs(d.EpsN-want) > 1e-15*want {
		t.Errorf("IM first step %+v, want noise at ε_N = %g", d, want)
	}
	pm := Planned{Params: p, Queries: n}
	d, err = pm.Decide(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	k := p.TestShare()
	if want := paperEps / n / (0.5 + k); math.Abs(d.EpsN-want) > 1e-15*want || math.Abs(d.EpsTheta-k*want) > 1e-15*want {
		t.Errorf("PM first step %+v, want ε_N = %g, ε_θ = kε_N", d, want)
	}
	// The same accuracy for test and noise as the fixed-rate manager.
	if aN, l := NoiseAccuracy(d.EpsN, 0.9), d.Threshold; math.Abs(0.5*(l+TestAccuracy(d.EpsTheta, 0.9))-aN) > 1e-9*aN {
		t.Errorf("η(l + α_θ) ≠ α_N")
	}
	// Three queries left and a budget of exactly their reserve plus a
	// little: the cap binds, leaving ε/(2N) for each of the other two.
	q := paperEps / (2 * n)
	r := make(Run, n-3)
	r[0].Cost = paperEps - 3*q - q/10
	d, err = (Planned{Params: Params{Epsilon: paperEps, PR0: 0.9}, Queries: n}).Decide(r, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if cost, want := d.Cost(true), (q+q/10)*lastScale; math.Abs(cost-want) > 1e-12*want {
		t.Errorf("capped step costs %g at worst, want %g", cost, want)
	}
	if _, err := (Planned{Params: p}).Decide(nil, time.Time{}); err == nil {
		t.Error("plan for 0 queries accepted")
	}
}

// TestPlannedNoiseScale: a plan whose widest noise the tangent plane
// cannot represent is refused before anything is drawn, naming
// "queries"; the largest N whose bound passes is accepted and released in
// full, and one more point is refused.
func TestPlannedNoiseScale(t *testing.T) {
	for _, mech := range []MechanismKind{MechanismPredictive, MechanismIndependent} {
		cfg := paperConfig()
		cfg.Mechanism, cfg.Manager, cfg.Rate = mech, "planned", 0
		// The largest accepted N, found by search on the public check.
		lo, hi := 1, MaxPlannedQueries
		for lo < hi {
			mid := (lo + hi + 1) / 2
			c := cfg
			c.Queries = mid
			if c.Validate() == nil {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		t.Logf("%s: plans of up to %d points pass at ε = %g per metre", mech, lo, paperEps)
		c := cfg
		c.Queries = lo + 1
		var pe *param.Error
		if err := c.Validate(); !errors.As(err, &pe) || pe.Name != "queries" {
			t.Fatalf("%s: %d queries: %v, want a queries error", mech, lo+1, err)
		}
		// The bound is the one documented: ε/N (IM), ε/(2N(1+k)) (PM).
		k := cfg.Params.withDefaults().TestShare()
		want := paperEps / minNoiseEpsilon
		if mech == "pm" {
			want = paperEps / (2 * (1 + k) * minNoiseEpsilon)
		}
		if math.Abs(float64(lo)-want) > 1+want*1e-5 {
			t.Errorf("%s: largest plan %d points, want about %.1f", mech, lo, want)
		}
		c.Queries = lo
		xs, ts := adversarialTrace(lo)
		m, err := c.NewMechanism()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(coverage(t, m, xs, ts, noise.Seeded(31))); got != lo {
			t.Errorf("%s at the limit: covered %d of %d", mech, got, lo)
		}
	}
}

// TestPlanNumbers: Config.Plan reports the first steps' ε_N and errors by
// the accuracy functions, and whether coverage is proven.
func TestPlanNumbers(t *testing.T) {
	cfg := paperConfig()
	cfg.Manager, cfg.Rate, cfg.Params.PR0 = "planned", 0, 0.5
	pl, err := cfg.Plan(45)
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Params.withDefaults().TestShare()
	en := paperEps / 45 / (0.5 + k)
	if math.Abs(pl.EpsN-en) > 1e-15*en || math.Abs(pl.ExpectedErrorM-2/en) > 1e-9/en || !pl.CoversAll {
		t.Errorf("plan %+v, want ε_N %g, error %g m, covering", pl, en, 2/en)
	}
	if l := CTheta(0.9) / (0.8 * k * en); math.Abs(pl.AccuracyM-math.Max(NoiseAccuracy(en, 0.9), l+TestAccuracy(k*en, 0.9))) > 1e-9*pl.AccuracyM {
		t.Errorf("accuracy %g", pl.AccuracyM)
	}
	if w := 2 * 2 * 45 * (1 + k) / paperEps; math.Abs(pl.WorstErrorM-w) > 1e-5*w {
		t.Errorf("worst error %g, want %g", pl.WorstErrorM, w)
	}
	// IM fixed-rate at ε/10 covers 10 points, not 11.
	im := imConfig()
	if pl, err := im.Plan(10); err != nil || !pl.CoversAll || math.Abs(pl.ExpectedErrorM-20/paperEps) > 1e-9 {
		t.Errorf("IM 10 points: %+v %v", pl, err)
	}
	if pl, _ := im.Plan(11); pl.CoversAll {
		t.Error("IM at ε/10 claims to cover 11 points")
	}
	// PM at a fixed rate: coverage is not proven at ε/N.
	fr := paperConfig()
	fr.Rate = paperEps / 45
	if pl, _ := fr.Plan(45); pl.CoversAll {
		t.Error("fixed rate ε/N claims to cover N points whatever the data")
	}
	if _, err := cfg.Plan(0); err == nil {
		t.Error("plan of 0 points accepted")
	}
}

// TestSanitizeByPersonPlanned: with the planned manager every person's
// every point is released, each person planned over their own points,
// and the errors reported are those of the run's decisions.
func TestSanitizeByPersonPlanned(t *testing.T) {
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	traces := []*trace.Trace{walk("000", "a", day, 30), walk("001", "b", day, 5), walk("000", "c", day.Add(time.Hour), 50)}
	for _, mech := range []MechanismKind{MechanismIndependent, MechanismPredictive} {
		cfg := paperConfig()
		cfg.Mechanism, cfg.Manager, cfg.Rate = mech, "planned", 0
		plans, err := PlanByPerson(cfg, traces, nil)
		if err != nil || len(plans) != 2 || plans[0].Points != 80 || plans[1].Points != 5 {
			t.Fatalf("%s plans %+v %v", mech, plans, err)
		}
		_, people, err := SanitizeByPerson(cfg, traces, nil, noise.Seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range people {
			if !p.Complete || p.Released != p.Points || p.Points != plans[i].Points || p.Spent > p.Budget {
				t.Errorf("%s %s: %+v", mech, p.UID, p)
			}
			pc := cfg
			pc.Queries = p.Points
			m, _ := pc.NewMechanism()
			lo, hi, _ := noiseRange(m.Manager)
			// The expected error is StepErrorBound's: the fresh-noise mean
			// 2/ε_N plus √2 grid for the snapping to the grid (issue 32).
			slack := math.Sqrt2 * cfg.Noise.Grid
			if !(p.ExpectedErrorM >= 2/hi && p.ExpectedErrorM <= 2/lo+slack) || !(p.AccuracyM >= NoiseAccuracy(hi, 0.9)) {
				t.Errorf("%s %s: expected error %g m (range %g..%g), accuracy %g m", mech, p.UID, p.ExpectedErrorM, 2/hi, 2/lo+slack, p.AccuracyM)
			}
			if mech == "im" {
				if want := 2*float64(p.Points)/paperEps + slack; math.Abs(p.ExpectedErrorM-want) > 1e-6*want {
					t.Errorf("IM %s: expected error %g m, want 2N/ε + √2 grid = %g", p.UID, p.ExpectedErrorM, want)
				}
			}
		}
	}
	// A plan the plane cannot represent is refused for the person it
	// concerns, before anything is drawn.
	cfg := paperConfig()
	cfg.Manager, cfg.Rate = "planned", 0
	long := walk("002", "long", day, 2000)
	_, _, err := SanitizeByPerson(cfg, append(traces, long), nil, noise.Seeded(7))
	var pe *PlanError
	if !errors.As(err, &pe) || pe.Person != "002" || pe.Points != 2000 {
		t.Errorf("2000 points: %v", err)
	}
	if _, err := PlanByPerson(cfg, append(traces, long), nil); !errors.As(err, &pe) || pe.Person != "002" {
		t.Errorf("PlanByPerson 2000 points: %v", err)
	}
}

// TestPlannedGeoInd falsifies Theorem 3 for the planned manager end to
// end, as TestPredictiveMechanismGeoInd does for fixed utility: for two
// traces at d_∞ = 1, the distributions of whole two-query runs differ by
// at most e^ε, ε the plan's budget; a plan spending three times its claim
// is caught.
func TestPlannedGeoInd(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 30000
	}
	mk := func(eps float64) *Mechanism {
		return &Mechanism{Manager: Planned{Params: Params{Epsilon: eps, PR0: 0.5}, Queries: 2}, Noise: PlanarLaplace{Grid: 0.5}}
	}
	// ε = 2 per unit in all for the two queries: Theorem 3 claims the
	// whole run is 2·d_∞-private.
	const eps = 2.0
	src := noise.Seeded(51)
	a := pmEvents(t, mk(eps), Vec{0, 0}, n, src)
	b := pmEvents(t, mk(eps), Vec{1, 0}, n, src)
	res, err := stattest.DPCheck{Epsilon: eps}.Check(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Errorf("planned PM violates %g·d_∞-privacy: %+v", eps, res.Worst)
	}
	// Negative control: a plan with three times the budget, checked
	// against the claim for eps.
	a = pmEvents(t, mk(3*eps), Vec{0, 0}, n, src)
	b = pmEvents(t, mk(3*eps), Vec{1, 0}, n, src)
	if res, err = (stattest.DPCheck{Epsilon: eps}).Check(a, b); err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Errorf("falsifier accepted a planned PM spending 3× its claimed budget (max ratio %.1f vs e^%g)", res.MaxRatio, eps)
	}
}

// TestCertificatePlanned: a certificate of a planned, thinned release
// reads back; one whose person has more points than the plan can draw
// noise for, or a malformed thinning period, is refused.
func TestCertificatePlanned(t *testing.T) {
	cfg := paperConfig()
	cfg.Manager, cfg.Rate = "planned", 0
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	_, people, err := SanitizeByPerson(cfg, []*trace.Trace{walk("000", "a", day, 30)}, nil, noise.Seeded(3))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCertificate(cfg, people, noise.Seeded(3))
	c.ThinEvery = "1m0s"
	var b bytes.Buffer
	if err := WriteCertificate(&b, c); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCertificate(bytes.NewReader(b.Bytes()))
	if err != nil || back.ThinEvery != "1m0s" || back.Config.Manager != "planned" || back.People[0].Points != 30 {
		t.Fatalf("read back %+v: %v", back, err)
	}
	for name, edit := range map[string]func(*Certificate){
		"10^4 points": func(c *Certificate) { c.People[0].Points = 10000 },
		"thin_every":  func(c *Certificate) { c.ThinEvery = "a minute" },
	} {
		bad := *back
		bad.People = append([]PersonRelease(nil), back.People...)
		edit(&bad)
		var b bytes.Buffer
		if err := WriteCertificate(&b, &bad); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCertificate(&b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
