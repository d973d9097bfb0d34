package geoind

import (
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// moving returns n fixes a minute apart from near central Beijing, moving
// east by step metres a minute (0: standing still).
func moving(uid string, n int, step float64) *trace.Trace {
	t0 := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	tr := &trace.Trace{UID: uid, Name: uid}
	start := geo.Point{Lat: 39.98, Lon: 116.32}
	for i := range n {
		p := geo.Destination(start, 90, step*float64(i))
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * time.Minute), Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()})
	}
	return tr
}

// Issue 32: geoind's reported expected error was the fresh-noise mean
// 2/ε_N, 26 % below the error measured on a traveller, whose accepted
// predictions lag behind. The reported number (PersonRelease.ExpectedErrorM,
// now StepErrorBound's mean) must be at least the measured mean error over
// seeded runs of the CLI's default (predictive mechanism, planned budget,
// ln 10 within 100 m), for a traveller and for a person standing still;
// the negative control is the old figure, which the traveller's measured
// error exceeds.
func TestExpectedErrorCoversMeasured(t *testing.T) {
	cfg := Config{Mechanism: MechanismPredictive, Manager: ManagerPlanned, Predictor: PredictorParrot,
		Params: Params{Epsilon: math.Ln10 / 100}, Origin: geo.Point{Lat: 39.9042, Lon: 116.4074}, Noise: PlanarLaplace{Grid: DefaultGrid}}
	const n, seeds = 120, 8
	for _, c := range []struct {
		name string
		step float64 // metres a minute
	}{{"traveller", 3000}, {"stayer", 0}} {
		var measured, reported, old float64
		for seed := range uint64(seeds) {
			tr := moving(c.name, n, c.step)
			outs, people, err := SanitizeByPerson(cfg, []*trace.Trace{tr}, nil, noise.Seeded(100+seed))
			if err != nil {
				t.Fatal(err)
			}
			p := people[0]
			if p.Released != n || p.Skipped != 0 || p.ExpectedErrorKind != ErrorUpperBound {
				t.Fatalf("%s: released %d of %d, %d skipped, kind %q", c.name, p.Released, n, p.Skipped, p.ExpectedErrorKind)
			}
			for i, q := range outs[0].Points {
				measured += geo.Haversine(q.Geo(), tr.Points[i].Geo()) / (n * seeds)
			}
			reported += p.ExpectedErrorM / seeds
			// The old figure, from the same run replayed in a session.
			c2 := cfg
			c2.Queries = n
			s, err := NewSession(c2, noise.Seeded(100+seed))
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tr.Points {
				if _, err := s.Query(q.Geo(), q.Time); err != nil {
					t.Fatal(err)
				}
			}
			for _, st := range s.State().Run {
				old += ExpectedError(st.Decision.EpsN) / (n * seeds)
			}
		}
		t.Logf("%s: measured mean error %.0f m, reported (bound) %.0f m, old fresh-noise figure %.0f m", c.name, measured, reported, old)
		if reported < measured {
			t.Errorf("%s: reported expected error %.0f m below the measured %.0f m", c.name, reported, measured)
		}
		if c.name == "traveller" && old >= measured {
			t.Errorf("negative control: the old figure %.0f m does not understate the traveller's measured %.0f m; the test would not catch it", old, measured)
		}
	}
}

// StepErrorBound against the expected error computed directly: for a
// test step, e(D) = D p(D) + (1 - p(D)) 2/ε_N maximised over a fine grid of
// distances D (PassProbability; two million steps, and e is flat at
// its maximum), and for a noise step 2/ε_N: the bound is the supremum.
func TestStepErrorBound(t *testing.T) {
	for _, d := range []Decision{
		{Mode: ModeTest, EpsTheta: 0.005, EpsN: 0.01, Threshold: 150},
		{Mode: ModeTest, EpsTheta: 0.02, EpsN: 0.002, Threshold: 300},
		{Mode: ModeTest, EpsTheta: 0.001, EpsN: 0.01, Threshold: 50},
		{Mode: ModeTest, EpsTheta: 0.01, EpsN: 0.01, Threshold: 0},
		{Mode: ModeTest, EpsTheta: 1 / 7475.0, EpsN: 2 / 6959.0, Threshold: 15039}, // a planned step, a(l - m) > 1
	} {
		m := 2 / d.EpsN
		test := Test{Epsilon: d.EpsTheta, Threshold: d.Threshold}
		sup := 0.0
		span := 5 * (m + 1/d.EpsTheta + d.Threshold)
		for D := 0.0; D < span; D += span / 2e6 {
			p := test.PassProbability(D)
			sup = math.Max(sup, D*p+(1-p)*m)
		}
		b := StepErrorBound(d, 0)
		if b < sup*(1-1e-9) || b > sup*(1+1e-6)+1e-3 {
			t.Errorf("%+v: bound %.6g, supremum of the expected error %.6g", d, b, sup)
		}
	}
	if b := StepErrorBound(Decision{Mode: ModeNoise, EpsN: 0.01}, 1); math.Abs(b-(200+math.Sqrt2)) > 1e-9 {
		t.Errorf("noise step: %g, want 2/ε_N + √2 grid", b)
	}
	if b := StepErrorBound(Decision{Mode: ModePredict}, 1); !math.IsInf(b, 1) {
		t.Errorf("skipped test: %g, want no bound (+Inf)", b)
	}
}
