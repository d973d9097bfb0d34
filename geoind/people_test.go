package geoind

import (
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// walk returns a trace of n points a minute apart from start, moving 5 m
// north a minute from near central Beijing.
func walk(uid, name string, start time.Time, n int) *trace.Trace {
	tr := &trace.Trace{UID: uid, Name: name}
	for i := range n {
		tr.Points = append(tr.Points, trace.Point{
			Time: start.Add(time.Duration(i) * time.Minute),
			Lat:  39.98 + 5e-5*float64(i), Lon: 116.32, Alt: math.NaN(),
		})
	}
	return tr
}

// imConfig is IM covering exactly 10 points per budget.
func imConfig() Config {
	c := paperConfig()
	c.Mechanism = "im"
	c.Rate = c.Params.Epsilon / 10
	return c
}

// TestSanitizeByPersonSharesBudget: the traces of one uid share one
// budget, processed in time order whatever their input order; another uid
// has its own.
func TestSanitizeByPersonSharesBudget(t *testing.T) {
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	traces := []*trace.Trace{
		walk("000", "afternoon", day.Add(6*time.Hour), 8), // later, listed first
		walk("001", "other", day, 8),
		walk("000", "morning", day, 8),
	}
	outs, people, err := SanitizeByPerson(imConfig(), traces, nil, noise.Seeded(80))
	if err != nil {
		t.Fatal(err)
	}
	if len(people) != 2 {
		t.Fatalf("%d people, want 2", len(people))
	}
	p0, p1 := people[0], people[1]
	if p0.UID != "000" || p0.Points != 16 || p0.Released != 10 || p0.Complete || p0.Spent > p0.Budget {
		t.Errorf("uid 000: %+v", p0)
	}
	// Time order: the morning trace is released first, in full.
	if p0.Traces[0].Name != "afternoon" || p0.Traces[0].Released != 2 || p0.Traces[1].Released != 8 {
		t.Errorf("uid 000 traces: %+v", p0.Traces)
	}
	if !p0.CoveredUntil.Equal(day.Add(6*time.Hour + time.Minute)) {
		t.Errorf("uid 000 covered until %v", p0.CoveredUntil)
	}
	if p1.UID != "001" || p1.Released != 8 || !p1.Complete || p1.Covered != 1 {
		t.Errorf("uid 001: %+v", p1)
	}
	// Output traces in input order, only released points.
	if len(outs) != 3 || outs[0].Name != "afternoon" || outs[0].Len() != 2 || outs[2].Len() != 8 {
		t.Errorf("outputs: %d traces", len(outs))
	}
	for _, o := range outs {
		for _, p := range o.Points {
			if err := p.Geo().Validate(); err != nil {
				t.Errorf("%s: released %v: %v", o.Name, p, err)
			}
		}
	}

	// A grouping that puts every trace apart gives each its own budget:
	// what the CLI did before: 24 points instead of 18.
	_, apart, err := SanitizeByPerson(imConfig(), traces, func(tr *trace.Trace) string { return tr.Name }, noise.Seeded(80))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range apart {
		total += p.Released
	}
	if len(apart) != 3 || total != 8+8+8 {
		t.Errorf("one budget per trace: %d people, %d released", len(apart), total)
	}
}

// TestSanitizeByPersonInterleaved: overlapping traces of one person are
// merged by time into one run.
func TestSanitizeByPersonInterleaved(t *testing.T) {
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	a := walk("u", "a", day, 6)
	b := walk("u", "b", day.Add(30*time.Second), 6)
	c := imConfig()
	c.Rate = c.Params.Epsilon / 20
	outs, people, err := SanitizeByPerson(c, []*trace.Trace{a, b}, nil, noise.Seeded(81))
	if err != nil {
		t.Fatal(err)
	}
	if len(people) != 1 || people[0].Released != 12 || !people[0].Complete {
		t.Fatalf("people %+v", people)
	}
	if math.Abs(people[0].Spent-12*c.Rate) > 1e-12 {
		t.Errorf("spent %g, want 12 steps at %g", people[0].Spent, c.Rate)
	}
	if outs[0].Len() != 6 || outs[1].Len() != 6 {
		t.Errorf("outputs %d and %d points", outs[0].Len(), outs[1].Len())
	}
}

// PersonByUIDOrFile joins traces by uid across files, and traces without a
// uid by file; the budget is then shared per person.
func TestPersonByUIDOrFile(t *testing.T) {
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	a1 := walk("000", "a1", day, 8)
	a2 := walk("000", "a2", day.Add(time.Hour), 8)
	f1 := walk("", "seg1", day, 8)
	f2 := walk("", "seg2", day.Add(time.Hour), 8)
	g := walk("", "other", day, 8)
	fileOf := map[*trace.Trace]string{a1: "x.csv", a2: "y.csv", f1: "t.gpx", f2: "t.gpx", g: "u.gpx"}
	person := PersonByUIDOrFile(func(tr *trace.Trace) string { return fileOf[tr] })
	for tr, want := range map[*trace.Trace]string{a1: "uid 000", a2: "uid 000", f1: "file t.gpx", f2: "file t.gpx", g: "file u.gpx"} {
		if got := person(tr); got != want {
			t.Errorf("%s: person %q, want %q", tr.Name, got, want)
		}
	}
	_, people, err := SanitizeByPerson(imConfig(), []*trace.Trace{a1, f1, a2, f2, g}, person, noise.Seeded(81))
	if err != nil {
		t.Fatal(err)
	}
	if len(people) != 3 {
		t.Fatalf("%d people, want 3: %+v", len(people), people)
	}
	for i, want := range []struct {
		key              string
		points, released int
	}{{"uid 000", 16, 10}, {"file t.gpx", 16, 10}, {"file u.gpx", 8, 8}} {
		if p := people[i]; p.Person != want.key || p.Points != want.points || p.Released != want.released {
			t.Errorf("person %d: %s %d/%d, want %s %d/%d", i, p.Person, p.Released, p.Points, want.key, want.released, want.points)
		}
	}
}
