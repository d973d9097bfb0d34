package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/trace"
)

const beijing = "39.9042,116.4074"

// geolife1Hz is the densest stretch of the GeoLife data in ../shared: 1,228
// consecutive fixes of user 001 (2008-10-26 02:42:42 to 03:27:32 UTC),
// logged at 1 s (median interval; 767 of the 1,227 intervals are 1 s, the
// rest mostly 2-5 s). No GeoLife file there is 1 Hz throughout; this is
// the closest to the 1,228-point 1 Hz trace of issue 23.
const geolife1Hz = "../../../shared/data/geolife/001/20081025231428.plt"

var (
	geolife1HzStart = time.Date(2008, 10, 26, 2, 42, 42, 0, time.UTC)
	geolife1HzEnd   = time.Date(2008, 10, 26, 3, 27, 32, 0, time.UTC)
)

// writeGeoLife1Hz writes the 1,228-fix stretch as a PLT file in a user
// directory 001 under dir, or skips the test without the shared data.
func writeGeoLife1Hz(t *testing.T, dir string) (string, *trace.Trace) {
	t.Helper()
	if _, err := os.Stat(geolife1Hz); err != nil {
		t.Skipf("GeoLife data not found: %v", err)
	}
	trs, _, err := trace.ReadFile(geolife1Hz, trace.ReadOptions{UID: "001"})
	if err != nil || len(trs) != 1 {
		t.Fatalf("%s: %d traces, %v", geolife1Hz, len(trs), err)
	}
	w := &trace.Trace{UID: "001", Name: "stretch"}
	for _, p := range trs[0].Points {
		if !p.Time.Before(geolife1HzStart) && !p.Time.After(geolife1HzEnd) {
			w.Points = append(w.Points, p)
		}
	}
	var iv []time.Duration
	for i := 1; i < w.Len(); i++ {
		iv = append(iv, w.Points[i].Time.Sub(w.Points[i-1].Time))
	}
	slices.Sort(iv)
	if w.Len() != 1228 || iv[len(iv)/2] != time.Second {
		t.Fatalf("the stretch has %d fixes, median interval %v; want 1228 at 1 s", w.Len(), iv[len(iv)/2])
	}
	in := filepath.Join(dir, "001", "stretch.plt")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := trace.WriteFile(in, []*trace.Trace{w}, trace.PLT); err != nil {
		t.Fatal(err)
	}
	return in, w
}

// thinnedTimes recomputes, independently of trace.Thin, the timestamps a
// thinning to one fix per every keeps: the first fix, then each fix at
// least every after the last kept.
func thinnedTimes(tr *trace.Trace, every time.Duration) []time.Time {
	var out []time.Time
	for _, p := range tr.Points {
		if len(out) == 0 || p.Time.Sub(out[len(out)-1]) >= every {
			out = append(out, p.Time)
		}
	}
	return out
}

// checkRelease checks a successful geoind sanitize --json result against
// its output file and certificate: complete, every thinned point written
// at exactly the thinned timestamps, and the errors reported within the
// bounds the manager's public noise range gives.
func checkRelease(t *testing.T, res geoind.ReleaseSummary, want []time.Time, read int) {
	t.Helper()
	if !res.Written || !res.Complete || res.PointsRead != read || res.PointsIn != len(want) || res.PointsReleased != len(want) {
		t.Fatalf("release: written %v complete %v, points read %d in %d released %d; want %d read, %d in and released",
			res.Written, res.Complete, res.PointsRead, res.PointsIn, res.PointsReleased, read, len(want))
	}
	trs := readOut(t, res.Out)
	var got []time.Time
	for _, tr := range trs {
		for _, p := range tr.Points {
			got = append(got, p.Time)
		}
	}
	if !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("released %d points at other times than the %d thinned fixes", len(got), len(want))
	}
	cert, err := geoind.ReadCertificateFile(res.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	if cert.ThinEvery != res.Every || cert.Config.Manager != res.Config.Manager {
		t.Errorf("certificate thin_every %q manager %q, summary %q %q", cert.ThinEvery, cert.Config.Manager, res.Every, res.Config.Manager)
	}
	for _, p := range res.People {
		if !p.Complete || p.Spent > p.Budget {
			t.Errorf("%s: %+v", p.Person, p)
		}
		c := res.Config
		c.Queries = p.Points
		pl, err := c.Plan(p.Points)
		if err != nil {
			t.Fatal(err)
		}
		// The run's ε_N never fall below the plan's worst case, nor rise
		// above the whole budget in one hard step.
		top := geoind.ExpectedError(c.Params.Epsilon / (1 + c.Params.TestShare()))
		if c.Mechanism == "im" {
			top = geoind.ExpectedError(c.Params.Epsilon)
		}
		// The expected error is now geoind.StepErrorBound's mean (issue
		// 32): at least the fresh-noise mean of the run's largest ε_N,
		// and, step by step, below the 90 % accuracy: 2/ε_N + √2 grid <
		// α_N(0.9) = 3.89/ε_N for fresh noise, and for a test max(l, m +
		// 1/(2ε_θ)) < max(α_N(0.9), l + ln 5/ε_θ). It may exceed the plan's
		// fresh-noise worst case, as a test step's error can.
		if !(p.ExpectedErrorM > top*(1-1e-9)) || !(p.AccuracyM > p.ExpectedErrorM) || p.ExpectedErrorKind != geoind.ErrorUpperBound {
			t.Errorf("%s: expected error %g m (%s; at least %g), plan's worst fresh-noise error %g m, accuracy %g m", p.Person, p.ExpectedErrorM, p.ExpectedErrorKind, top, pl.WorstErrorM, p.AccuracyM)
		}
	}
}

// TestGeoindSanitizeEveryGeoLife is issue 23's acceptance check on real
// data: geoind sanitize --every 60s on the 1,228-point 1 Hz GeoLife
// stretch succeeds with default options and releases every thinned point;
// without --every the default refuses before drawing anything, naming the
// number of points and an --every that works, and that --every works.
func TestGeoindSanitizeEveryGeoLife(t *testing.T) {
	dir := t.TempDir()
	in, tr := writeGeoLife1Hz(t, dir)
	want := thinnedTimes(tr, time.Minute)
	for _, mech := range []string{"pm", "im"} {
		var res geoind.ReleaseSummary
		geoindJSON(t, &res, "geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, mech+".csv"), "--origin", beijing, "--every", "60s", "--mechanism", mech)
		checkRelease(t, res, want, 1228)
		if res.Every != "1m0s" || res.Config.Manager != "planned" || res.Randomness != "crypto" {
			t.Errorf("%s: every %q manager %q randomness %q", mech, res.Every, res.Config.Manager, res.Randomness)
		}
		t.Logf("%s: %d of 1228 points released, expected error %.0f m per point (plan %.0f m), 90 %% within %.0f m",
			mech, res.PointsReleased, res.ExpectedErrorM, res.Plans[0].ExpectedErrorM, res.AccuracyM)
	}

	out := filepath.Join(dir, "all.csv")
	_, err := geoindRun(t, "geoind", "sanitize", "--in", in, "--out", out, "--origin", beijing, "-q")
	if err == nil {
		t.Fatal("1,228 points at one budget accepted")
	}
	if !strings.Contains(err.Error(), "1228 points") {
		t.Errorf("refusal does not give the number of points: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Error("output written despite the refusal")
	}
	every := followEvery(t, err)
	var res geoind.ReleaseSummary
	geoindJSON(t, &res, "geoind", "sanitize", "--in", in, "--out", out, "--origin", beijing, "--every", every)
	d, _ := time.ParseDuration(every)
	checkRelease(t, res, thinnedTimes(tr, d), 1228)
}

// followEvery returns the --every an error message suggests.
func followEvery(t *testing.T, err error) string {
	t.Helper()
	m := regexp.MustCompile(`--every ([0-9][0-9a-z.]*) \(`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no --every suggested in: %v", err)
	}
	return m[1]
}

// walk1Hz is a synthetic person logging at 1 Hz for n seconds: a random
// walk with stops, in Beijing.
func walk1Hz(uid string, start time.Time, n int, seed uint64) *trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	tr := &trace.Trace{UID: uid, Name: fmt.Sprintf("%s-%d", uid, seed)}
	lat, lon := 39.98, 116.32
	for i := range n {
		if rng.IntN(10) < 7 {
			lat += 1.5e-5 * rng.NormFloat64()
			lon += 1.5e-5 * rng.NormFloat64()
		}
		tr.Points = append(tr.Points, trace.Point{Time: start.Add(time.Duration(i) * time.Second), Lat: lat, Lon: lon, Alt: math.NaN()})
	}
	return tr
}

// TestGeoindHintsWork: every suggestion geoind sanitize makes when it
// cannot cover a trace leads, followed literally, to a release of every
// point: the --every for a plan the plane cannot represent, the --every
// for a plan over --max-error, and, after a fixed-rate or fixed-utility
// budget ran out, dropping that manager's flags (and thinning, when the
// message says so).
func TestGeoindHintsWork(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	in := filepath.Join(dir, "people.csv")
	trs := []*trace.Trace{walk1Hz("a", day, 1228, 1), walk1Hz("b", day, 200, 2), walk1Hz("a", day.Add(3*time.Hour), 600, 3)}
	if err := trace.WriteFile(in, trs, ""); err != nil {
		t.Fatal(err)
	}
	base := []string{"geoind", "sanitize", "--in", in, "--corpus", "--origin", beijing, "--seed", "9"}
	n := 0
	out := func() string { n++; return filepath.Join(dir, fmt.Sprintf("out%d.csv", n)) }
	for _, c := range []struct {
		name string
		args []string
		want string // in the refusal
		drop []string
	}{
		{"too many points", nil, "cannot cover 1828 points", nil},
		{"over --max-error", []string{"--every", "10s"}, "more than --max-error", nil},
		{"fixed rate ran out", []string{"--every", "10s", "--rate", "0.02"}, "drop --rate", []string{"--rate"}},
		{"fixed rate, too many points", []string{"--rate", "0.033"}, "drop --rate and thin", []string{"--rate"}},
		{"fixed utility ran out", []string{"--manager", "fixed-utility", "--accuracy", "500", "--every", "1m"}, "drop --manager fixed-utility --accuracy", []string{"--manager", "--accuracy"}},
		{"IM fixed rate", []string{"--mechanism", "im", "--rate", "0.1", "--every", "1m"}, "drop --rate", []string{"--rate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := out()
			args := append(append(slices.Clone(base), c.args...), "--out", o)
			_, err := geoindRun(t, append(args, "-q")...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v: err %v, want a refusal with %q", c.args, err, c.want)
			}
			if _, serr := os.Stat(o); serr == nil {
				t.Fatal("output written despite the refusal")
			}
			// Follow the hint: drop the flags it names (with their
			// values), replace --every by the suggested one if any.
			var next []string
			for i := 0; i < len(args); i++ {
				if slices.Contains(c.drop, args[i]) || (args[i] == "--every" && regexp.MustCompile(`--every [0-9]`).MatchString(err.Error())) {
					i++
					continue
				}
				next = append(next, args[i])
			}
			if regexp.MustCompile(`--every [0-9]`).MatchString(err.Error()) {
				next = append(next, "--every", followEvery(t, err))
			}
			next = append(next, "--out", out())
			var res geoind.ReleaseSummary
			geoindJSON(t, &res, next...)
			if !res.Written || !res.Complete || res.PointsReleased != res.PointsIn || res.PointsIn == 0 {
				t.Errorf("following the hint (%v): %+v", next, res)
			}
			for _, p := range res.People {
				if p.Released != p.Points {
					t.Errorf("following the hint: %s got %d of %d", p.Person, p.Released, p.Points)
				}
			}
		})
	}
	// --max-error 0 releases the noisy plan as it is.
	var res geoind.ReleaseSummary
	geoindJSON(t, &res, append(slices.Clone(base), "--every", "10s", "--max-error", "0", "--out", out())...)
	if !res.Complete || geoind.WorstPlan(res.Plans).ExpectedErrorM < 10000 {
		t.Errorf("--max-error 0: %+v", res)
	}
}

// TestGeoindSanitizeFlags: flags that contradict the manager, a negative
// --every or --max-error, and the planned manager for a session are refused.
func TestGeoindSanitizeFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.csv")
	if err := trace.WriteFile(in, []*trace.Trace{walk1Hz("a", time.Unix(1.2e9, 0), 60, 1)}, ""); err != nil {
		t.Fatal(err)
	}
	base := []string{"geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, "o.csv"), "--origin", beijing, "-q"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--manager", "planned", "--rate", "0.1"}, "--rate applies to --manager fixed-rate"},
		{[]string{"--manager", "fixed-rate", "--accuracy", "100"}, "--accuracy applies to --manager fixed-utility"},
		{[]string{"--rate", "0.1", "--accuracy", "100"}, "--rate and --accuracy"},
		{[]string{"--every", "-1s"}, "--every"},
		{[]string{"--every", "1"}, "--every"},
		{[]string{"--max-error", "-1"}, "--max-error"},
	} {
		if _, err := geoindRun(t, append(slices.Clone(base), c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
	_, err := geoindRun(t, "geoind", "query", "--state", filepath.Join(dir, "s.json"), "--key-dir", filepath.Join(dir, "keys"),
		"--origin", beijing, "--lat", "39.98", "--lon", "116.32", "--manager", "planned", "-q")
	if err == nil || !strings.Contains(err.Error(), "planned") {
		t.Errorf("query --manager planned: %v", err)
	}
}

// TestGeoindThinningKeepsLedger: thinning changes which points a release
// holds, never what it is charged: each run of a person is charged the
// session budget ε to their uid, whatever --every, and a run that would
// take them over --budget is refused before anything is written.
func TestGeoindThinningKeepsLedger(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "000", "walk.csv")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := trace.WriteFile(in, []*trace.Trace{walk1Hz("000", time.Unix(1.2e9, 0), 1800, 4)}, ""); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(dir, "ledger.json")
	// The session budget ln(10)/100 per metre on the 1 m grid, in the
	// ledger's currency at order 2 within 100 m.
	eps := budget.GeoIndCharge(math.Ln10/100, 1, 2, 100)
	run := func(out, every string) error {
		_, err := geoindRun(t, "geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, out), "--origin", beijing, "--every", every,
			"-q", "--ledger", ledger, "--budget", fmt.Sprint(2.5*eps))
		return err
	}
	for i, every := range []string{"60s", "2m"} {
		if err := run(fmt.Sprintf("r%d.csv", i), every); err != nil {
			t.Fatalf("run %d (--every %s): %v", i, every, err)
		}
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if a := l.Account("000"); a == nil || math.Abs(a.Spent-2*eps) > 1e-12 {
		t.Fatalf("person 000: %+v, want 2ε = %g spent", a, 2*eps)
	}
	// A third run, thinned harder, still costs ε and is refused.
	if err := run("r3.csv", "10m"); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("third release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r3.csv")); err == nil {
		t.Error("refused release written")
	}
}

// TestConvertEvery: convert --every thins each trace by trace.Thin's rule
// and reports it; a negative period is refused.
func TestConvertEvery(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	trs := []*trace.Trace{walk1Hz("a", time.Unix(1.2e9, 0), 185, 5), walk1Hz("b", time.Unix(1.2e9, 0), 61, 6)}
	if err := trace.WriteFile(in, trs, ""); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.geojson")
	stdout, _, err := run(t, "convert", "--in", in, "--out", out, "--every", "1m", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res convertResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	got, _, err := trace.ReadFile(out, trace.ReadOptions{})
	if err != nil || len(got) != 2 {
		t.Fatalf("%d traces, %v", len(got), err)
	}
	for i, tr := range got {
		want := thinnedTimes(trs[i], time.Minute)
		if !slices.EqualFunc(tr.Times(), want, time.Time.Equal) {
			t.Errorf("trace %d: %d points at %v, want %v", i, tr.Len(), tr.Times(), want)
		}
		for j, p := range tr.Points {
			k := slices.IndexFunc(trs[i].Points, func(q trace.Point) bool { return q.Time.Equal(p.Time) })
			if q := trs[i].Points[k]; q.Lat != p.Lat || q.Lon != p.Lon {
				t.Errorf("trace %d point %d moved", i, j)
			}
		}
	}
	if res.Every != "1m0s" || res.PointsBeforeThinning != 246 || res.Points != 4+2 {
		t.Errorf("result: every %q, %d points before, %d after", res.Every, res.PointsBeforeThinning, res.Points)
	}
	if _, _, err := run(t, "convert", "--in", in, "--out", filepath.Join(dir, "x.csv"), "--every", "-5s"); err == nil || !strings.Contains(err.Error(), "--every") {
		t.Errorf("--every -5s: %v", err)
	}
}
