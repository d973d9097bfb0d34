package geoind_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// The accuracy of the planar Laplace mechanism for ε = ln 10 per 100 m:
// the release is within α_N(0.9) of the secret nine times in ten.
func ExampleNoiseAccuracy() {
	eps := math.Ln10 / 100
	fmt.Printf("α(0.9) = %.1f m, mean error %.1f m\n", geoind.NoiseAccuracy(eps, 0.9), geoind.ExpectedError(eps))
	// Output: α(0.9) = 168.9 m, mean error 86.9 m
}

// A session of the predictive mechanism: the first query gets fresh noise;
// a query a minute later, a few metres away, reuses it when the private
// test accepts it, paying only for the test. With α = 3 km the noise costs
// c_N/(αε) = 3.8897/(3000·0.023026) = 5.6 % of ε and each test
// η c_θ (1+1/γ)/(αε) = 0.5·ln 5·2.25/(3000·0.023026) = 2.6 %.
func ExampleSession() {
	eps := math.Ln10 / 100
	cfg := geoind.Config{
		Mechanism: "pm", Manager: "fixed-utility",
		Params:   geoind.Params{Epsilon: eps, PR0: 0.5},
		Accuracy: 3000, Origin: geo.Point{Lat: 39.9, Lon: 116.4},
		Noise: geoind.PlanarLaplace{Grid: 1},
	}
	// Seeded for a reproducible example only; production uses nil
	// (crypto/rand).
	s, err := geoind.NewSession(cfg, noise.Seeded(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2008, 10, 24, 2, 10, 0, 0, time.UTC)
	for i := range 3 {
		rep, err := s.Query(geo.Point{Lat: 39.9841 + 0.0001*float64(i), Lon: 116.3185}, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d: mode %s, hard %v, spent %.1f%% of ε\n", rep.Step, rep.Mode, rep.Hard, 100*rep.Spent/rep.Budget)
	}
	// Output:
	// step 0: mode noise, hard true, spent 5.6% of ε
	// step 1: mode test, hard false, spent 8.3% of ε
	// step 2: mode test, hard false, spent 10.9% of ε
}

// A session kept in a sealed state file: the key and the record live in a
// separate key directory; restoring an older copy of the state is refused.
func ExampleStateFile() {
	dir, err := os.MkdirTemp("", "geoind-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	f := geoind.StateFile{Path: filepath.Join(dir, "me.json"), KeyDir: filepath.Join(dir, "keys")}
	cfg := geoind.Config{
		Mechanism: "pm", Manager: "fixed-rate",
		Params: geoind.Params{Epsilon: math.Ln10 / 100, PR0: 0.5},
		Rate:   0.033 * math.Ln10 / 100, Origin: geoind.BeijingCentre,
		Noise: geoind.PlanarLaplace{Grid: 1},
	}
	t0 := time.Date(2008, 10, 24, 2, 10, 0, 0, time.UTC)
	src := noise.Seeded(1) // reproducible example only; production uses nil
	p := geo.Point{Lat: 39.9841, Lon: 116.3185}
	if _, err := f.Query(&cfg, p, t0, src); err != nil {
		fmt.Println(err)
		return
	}
	old, _ := os.ReadFile(f.Path)
	rep, err := f.Query(nil, p, t0.Add(time.Minute), src)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("step %d, spent %.1f%% of ε\n", rep.Step, 100*rep.Spent/rep.Budget)
	os.WriteFile(f.Path, old, 0o600) // put back the older copy
	_, err = f.Query(nil, p, t0.Add(2*time.Minute), src)
	fmt.Println(errors.Is(err, geoind.ErrStateRolledBack))
	// Output:
	// step 1, spent 5.0% of ε
	// true
}

// One budget per person: the two traces of uid 000 share a session, so an
// independent mechanism spending 10 % of ε per point releases 10 of their
// 16 points in time order.
func ExampleSanitizeByPerson() {
	walk := func(uid string, start time.Time) *trace.Trace {
		tr := &trace.Trace{UID: uid}
		for i := range 8 {
			tr.Points = append(tr.Points, trace.Point{Time: start.Add(time.Duration(i) * time.Minute), Lat: 39.98, Lon: 116.32})
		}
		return tr
	}
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	traces := []*trace.Trace{walk("000", day), walk("001", day), walk("000", day.Add(time.Hour))}
	eps := math.Ln10 / 100
	cfg := geoind.Config{Mechanism: "im", Manager: "fixed-rate", Params: geoind.Params{Epsilon: eps},
		Rate: eps / 10, Origin: geoind.BeijingCentre, Noise: geoind.PlanarLaplace{Grid: 1}}
	_, people, err := geoind.SanitizeByPerson(cfg, traces, nil, noise.Seeded(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range people {
		fmt.Printf("uid %s: %d of %d points, complete %v\n", p.UID, p.Released, p.Points, p.Complete)
	}
	// Output:
	// uid 000: 10 of 16 points, complete false
	// uid 001: 8 of 8 points, complete true
}

// The predictive mechanism on its own, on the tangent plane: a walker
// queries every 30 s while moving 20 m per query, with ε = ln 10 per
// 100 m in all and every step configured for 3 km accuracy (the paper's
// fixed-utility manager). Most steps reuse the last report, paying only
// for the private test; the run stops when the budget left cannot pay for
// a hard step. Accounting replays the budget of the run from public data.
func ExampleMechanism() {
	m := &geoind.Mechanism{
		Manager: geoind.FixedUtility{Params: geoind.Params{Epsilon: math.Ln10 / 100, PR0: 0.5}, Accuracy: 3000},
		Noise:   geoind.PlanarLaplace{Grid: 1},
	}
	t0 := time.Date(2008, 10, 24, 2, 10, 0, 0, time.UTC)
	var xs []geoind.Vec
	var ts []time.Time
	for i := range 40 {
		xs = append(xs, geoind.Vec{X: 20 * float64(i), Y: 0})
		ts = append(ts, t0.Add(time.Duration(i)*30*time.Second))
	}
	// Seeded for a reproducible example only; production uses nil
	// (crypto/rand).
	run, err := m.Sanitize(xs, ts, noise.Seeded(3))
	if err != nil {
		fmt.Println(err)
		return
	}
	st := run.Stats()
	spent, err := geoind.Accounting(m, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d of %d queries answered, %d with fresh noise\n", len(run), len(xs), st.Hard)
	fmt.Printf("budget spent %.1f%% of ε (replayed: %v)\n", 100*spent/(math.Ln10/100), math.Abs(spent-run.Spent()) < 1e-12)
	// Output:
	// 24 of 40 queries answered, 6 with fresh noise
	// budget spent 94.1% of ε (replayed: true)
}

// Release a person's trace and write it with its certificate, together or
// not at all; an auditor reads the certificate back.
func ExampleFiles() {
	tr := &trace.Trace{UID: "000"}
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	for i := range 20 {
		tr.Points = append(tr.Points, trace.Point{Time: day.Add(time.Duration(i) * time.Minute), Lat: 39.98, Lon: 116.32 + 0.001*float64(i)})
	}
	eps := math.Ln10 / 100
	cfg := geoind.Config{Mechanism: "pm", Manager: "fixed-rate", Params: geoind.Params{Epsilon: eps},
		Rate: eps / 25, Origin: geoind.BeijingCentre, Noise: geoind.PlanarLaplace{Grid: 1}}
	src := noise.Seeded(1)
	out, people, err := geoind.SanitizeByPerson(cfg, []*trace.Trace{tr}, nil, src)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "geoind")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	files := geoind.Files{Traces: filepath.Join(dir, "000.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "000.csv.cert.json")}
	if err := files.Write(out, geoind.NewCertificate(cfg, people, src)); err != nil {
		fmt.Println(err)
		return
	}
	c, err := geoind.ReadCertificateFile(files.Certificate)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := c.People[0]
	fmt.Printf("%s: %d of %d points, spent within budget %v, randomness %s\n", p.UID, p.Released, p.Points, p.Spent <= c.EpsilonPerMetre, c.Randomness)
	// Output:
	// 000: 20 of 20 points, spent within budget true, randomness seeded:1
}

// A recorded 1 Hz trace of 20 minutes, thinned to a fix a minute by its
// public timestamps, released by the planned manager: the plan is known
// before anything is drawn, and every thinned point is covered.
func ExamplePlanByPerson() {
	start := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	tr := &trace.Trace{UID: "000"}
	for i := range 1228 {
		tr.Points = append(tr.Points, trace.Point{Time: start.Add(time.Duration(i) * time.Second), Lat: 39.98 + 1e-6*float64(i), Lon: 116.32})
	}
	thin := []*trace.Trace{tr.Thin(time.Minute)}
	cfg := geoind.Config{Mechanism: "pm", Manager: "planned", Params: geoind.Params{Epsilon: math.Ln10 / 100, PR0: 0.5},
		Origin: geoind.BeijingCentre, Noise: geoind.PlanarLaplace{Grid: 1}}
	plans, err := geoind.PlanByPerson(cfg, thin, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d fixes thinned to %d; expected error %.0f m per point\n", tr.Len(), plans[0].Points, plans[0].ExpectedErrorM)
	_, people, err := geoind.SanitizeByPerson(cfg, thin, nil, nil) // nil: crypto/rand
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("released %d of %d points\n", people[0].Released, people[0].Points)
	// Output:
	// 1228 fixes thinned to 21; expected error 1761 m per point
	// released 21 of 21 points
}

// Meaning says what an ε per metre lets anyone who sees the releases
// conclude: the best guess between two places 100 m and 1 km apart.
func ExampleMeaning() {
	fmt.Println(geoind.Meaning(math.Ln10 / 100))
	fmt.Printf("%.3f\n", geoind.GuessAt(math.Ln10/100, 100)) // 10/11
	// Output:
	// ε 0.02303 per metre: the best guess, from the releases, of which of two places 100 m apart the person was at (equally likely beforehand) is right at most 90.9 % of the time; 1 km apart, almost always (the bound exceeds 99.9 %) (50 % is a coin toss; e^εd/(1+e^εd))
	// 0.909
}
