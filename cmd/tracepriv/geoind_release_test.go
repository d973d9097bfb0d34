package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// TestGeoindNoDataDerivedOrigin: the plane origin (and so the output
// grid) comes only from --origin. For inputs on either side of the lines
// of the former data-derived origin (the 1° and 0.1° cells of the first
// point), the configuration, origin, grid and the noise of every release
// under a fixed seed are identical; only the input's own grid cell
// differs. Without --origin both sides are refused alike.
func TestGeoindNoDataDerivedOrigin(t *testing.T) {
	const origin = "39.9042,116.4074"
	const e = 1e-5 // degrees, about 1 m
	pairs := [][2]geo.Point{
		{{Lat: 40 - e, Lon: 116.35}, {Lat: 40 + e, Lon: 116.35}},     // 1° latitude line
		{{Lat: 39.95, Lon: 117 - e}, {Lat: 39.95, Lon: 117 + e}},     // 1° longitude line
		{{Lat: 39.9 - e, Lon: 116.35}, {Lat: 39.9 + e, Lon: 116.35}}, // 0.1° latitude line
		{{Lat: 39.95, Lon: 116.3 - e}, {Lat: 39.95, Lon: 116.3 + e}}, // 0.1° longitude line
	}
	times := []string{"2008-10-24T02:00:00Z", "2008-10-24T02:01:00Z", "2008-10-24T02:02:00Z"}
	for k, pair := range pairs {
		dir := t.TempDir()
		var states [2]geoind.State
		var errs [2]string
		for side, p := range pair {
			state := filepath.Join(dir, fmt.Sprintf("side%d.json", side))
			for i, tm := range times {
				args := []string{"geoind", "query", "--state", state, "--key-dir", filepath.Join(dir, "keys"),
					"--lat", fmt.Sprint(p.Lat), "--lon", fmt.Sprint(p.Lon + 1e-6*float64(i)), "--time", tm,
					"--seed", fmt.Sprint(10 + i), "-q", "--json"}
				if i == 0 {
					args = append(args, "--origin", origin, "--mechanism", "im", "--rate", "0.1")
				}
				if _, err := geoindRun(t, args...); err != nil {
					t.Fatalf("pair %d side %d query %d: %v", k, side, i, err)
				}
			}
			st, err := geoind.ReadState(state)
			if err != nil {
				t.Fatal(err)
			}
			states[side] = st
			// Without --origin: refused, with the same message on both sides.
			_, err = geoindRun(t, "geoind", "query", "--state", filepath.Join(dir, "none.json"), "--key-dir", filepath.Join(dir, "keys"),
				"--lat", fmt.Sprint(p.Lat), "--lon", fmt.Sprint(p.Lon), "-q")
			if err == nil || !strings.Contains(err.Error(), "--origin") {
				t.Fatalf("pair %d side %d: query without --origin: %v", k, side, err)
			}
			errs[side] = strings.ReplaceAll(err.Error(), fmt.Sprint(p.Lat), "LAT")
		}
		a, b := states[0], states[1]
		ca, _ := json.Marshal(a.Config)
		cb, _ := json.Marshal(b.Config)
		if string(ca) != string(cb) {
			t.Errorf("pair %d: configurations differ:\n%s\n%s", k, ca, cb)
		}
		if a.Config.Origin != (geo.Point{Lat: 39.9042, Lon: 116.4074}) || a.Config.Noise.Grid != 1 {
			t.Errorf("pair %d: origin %+v grid %g", k, a.Config.Origin, a.Config.Noise.Grid)
		}
		if errs[0] != errs[1] {
			t.Errorf("pair %d: refusals differ: %q vs %q", k, errs[0], errs[1])
		}
		plane, err := geoind.NewPlane(geo.Point{Lat: 39.9042, Lon: 116.4074})
		if err != nil {
			t.Fatal(err)
		}
		for i := range times {
			// The release minus the input's own grid point is the noise:
			// identical on both sides under the same seed.
			off := func(side int) geoind.Vec {
				x := plane.Forward(geo.Point{Lat: pair[side].Lat, Lon: pair[side].Lon + 1e-6*float64(i)})
				z := states[side].Run[i].Z
				return geoind.Vec{X: z.X - math.Round(x.X), Y: z.Y - math.Round(x.Y)}
			}
			if oa, ob := off(0), off(1); oa != ob {
				t.Errorf("pair %d step %d: noise %v on one side, %v on the other", k, i, oa, ob)
			}
			if states[0].Run[i].Decision != states[1].Run[i].Decision || states[0].Run[i].Cost != states[1].Run[i].Cost {
				t.Errorf("pair %d step %d: decisions differ", k, i)
			}
		}
	}
	// sanitize refuses without --origin too, before reading anything.
	if _, err := geoindRun(t, "geoind", "sanitize", "--in", "nonexistent.csv", "--out", filepath.Join(t.TempDir(), "o.csv")); err == nil || !strings.Contains(err.Error(), "--origin") {
		t.Errorf("sanitize without --origin: %v", err)
	}
}

// writeSample writes the bundled sample trace into dir.
func writeSample(t *testing.T, dir string) string {
	t.Helper()
	in := filepath.Join(dir, sample.Name)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// readOut reads a sanitize output and checks every position is a finite,
// valid WGS84 point.
func readOut(t *testing.T, path string) []*trace.Trace {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(string(b), bad) {
			t.Fatalf("%s contains %s", path, bad)
		}
	}
	trs, _, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		for i, p := range tr.Points {
			if err := p.Geo().Validate(); err != nil || math.IsNaN(p.Lat) || math.IsInf(p.Lon, 0) {
				t.Fatalf("%s: trace %s point %d: %v (%v)", path, tr.Name, i, p.Geo(), err)
			}
		}
	}
	return trs
}

// TestGeoindNoiseScaleRefused: noise the tangent plane cannot represent is
// refused before anything is drawn, naming the flag; at the limit, and for
// inputs on the far side of the Earth from the origin, every written
// position is finite and valid.
func TestGeoindNoiseScaleRefused(t *testing.T) {
	dir := t.TempDir()
	in := writeSample(t, dir)
	out := filepath.Join(dir, "out.csv")
	base := []string{"geoind", "sanitize", "--in", in, "--out", out, "--origin", "39.9042,116.4074", "--seed", "1", "-q", "--allow-partial"}
	for _, c := range []struct{ args []string }{
		{[]string{"--radius", "1e7"}},
		{[]string{"--epsilon", "1e-12"}},
		{[]string{"--manager", "fixed-utility", "--accuracy", "1e6"}},
		{[]string{"--grid", "0"}},
	} {
		_, err := geoindRun(t, append(base, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.args[len(c.args)-2]) {
			t.Errorf("%v: err = %v, want a refusal naming %s", c.args, err, c.args[len(c.args)-2])
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Fatalf("%v: output written despite the refusal", c.args)
		}
	}
	// query refuses the same configurations.
	_, err := geoindRun(t, "geoind", "query", "--state", filepath.Join(dir, "s.json"), "--key-dir", filepath.Join(dir, "keys"),
		"--origin", "39.9042,116.4074", "--lat", "39.98", "--lon", "116.32", "--radius", "1e7", "-q")
	if err == nil || !strings.Contains(err.Error(), "--radius") {
		t.Errorf("query --radius 1e7: %v", err)
	}

	// The widest accepted noise (fixed utility: ε_N = c_N/α, the
	// 1-1e-9 radius 6.15·α), over a trace in Beijing and the same trace
	// moved to Beijing's antipode, with the origin in Beijing.
	far := filepath.Join(dir, "far.csv")
	trs, _, err := trace.ReadFile(in, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Beijing's antipode projects onto the plane's origin; a point 90° away
	// (on the equator) onto its rim, beyond MaxPlaneRadius, where the
	// inverse clamps.
	moved := &trace.Trace{UID: "antipode", Name: "antipode"}
	rim := &trace.Trace{UID: "rim", Name: "rim"}
	for _, p := range trs[0].Points {
		q := p
		p.Lat, p.Lon = -p.Lat, p.Lon-180
		moved.Points = append(moved.Points, p)
		q.Lat, q.Lon = q.Lat-39.9, q.Lon-270
		rim.Points = append(rim.Points, q)
	}
	// Since issue 32 the antipode and the rim are refused before anything
	// is drawn, by the one distance rule serve applies too
	// (geoind.CheckOriginDistance: within 1,000 km of the origin); the
	// widest noise is accepted for the trace in Beijing.
	near := filepath.Join(dir, "near.csv")
	if err := trace.WriteFile(far, []*trace.Trace{trs[0], moved, rim}, ""); err != nil {
		t.Fatal(err)
	}
	if err := trace.WriteFile(near, []*trace.Trace{trs[0]}, ""); err != nil {
		t.Fatal(err)
	}
	alpha := 1e6 / geoind.NoiseAccuracy(1, geoind.NoiseRadiusConfidence) * geoind.CN(0.9) * 0.999
	for _, mech := range []string{"im", "pm"} {
		args := []string{"geoind", "sanitize", "--out", out, "--force", "--origin", "39.9042,116.4074", "--mechanism", mech,
			"--manager", "fixed-utility", "--accuracy", fmt.Sprint(alpha), "--allow-partial", "--seed", "2", "-q", "--corpus"}
		_, err = geoindRun(t, append(args, "--in", near)...)
		if err != nil {
			t.Fatalf("%s at the limit: %v", mech, err)
		}
		if n := len(readOut(t, out)); n != 1 {
			t.Errorf("%s: %d output traces, want 1", mech, n)
		}
		if _, err = geoindRun(t, append(args, "--in", far)...); err == nil || !strings.Contains(err.Error(), "within 1000 km of the public origin") {
			t.Errorf("%s: the antipode and the rim: %v, want the distance rule's refusal", mech, err)
		}
	}
}

// TestGeoindPartialCoverage: with a fixed rate (--rate), a budget that
// runs out before the last point fails the command, saying how much was
// covered and what covers every point, and writes nothing, unless
// --allow-partial. Following the hint (the default planned manager, at
// the --every it names) covers every point.
func TestGeoindPartialCoverage(t *testing.T) {
	dir := t.TempDir()
	in := writeSample(t, dir)
	sampleTraces, _, err := trace.ReadFile(in, trace.ReadOptions{})
	if err != nil || len(sampleTraces) != 1 {
		t.Fatalf("sample: %d traces, %v", len(sampleTraces), err)
	}
	n := sampleTraces[0].Len()
	out := filepath.Join(dir, "out.csv")
	// 3.3 % of ε per query (the fixed-rate default before the planned
	// manager) covers about 30 points.
	args := []string{"geoind", "sanitize", "--in", in, "--out", out, "--origin", "39.9042,116.4074", "--seed", "3", "--rate", "0.033"}
	stdout, err := geoindRun(t, append(args, "-q")...)
	if err == nil {
		t.Fatal("partial coverage at a fixed rate exited 0")
	}
	for _, want := range []string{fmt.Sprintf("of %d points", n), "--rate", "--allow-partial", "nothing was written", "--manager planned"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if !strings.Contains(stdout, "nothing written") {
		t.Errorf("summary: %q", stdout)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Error("output written despite partial coverage")
	}
	if _, serr := os.Stat(out + ".cert.json"); serr == nil {
		t.Error("certificate written despite partial coverage")
	}
	hint := err
	// --json still reports the coverage, and the command still fails.
	var res geoind.ReleaseSummary
	stdout, err = geoindRun(t, append(args, "--json", "-q")...)
	if err == nil || json.Unmarshal([]byte(stdout), &res) != nil {
		t.Fatalf("--json: %v, %q", err, stdout)
	}
	if res.Written || res.Complete || len(res.People) != 1 || res.People[0].Released >= n || res.People[0].Released == 0 || res.PointsIn != n {
		t.Errorf("--json summary: %+v", res)
	}
	// --allow-partial writes the covered points and exits 0.
	stdout, err = geoindRun(t, append(args, "--json", "-q", "--allow-partial")...)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	p := res.People[0]
	if !res.Written || res.Complete || p.Complete || p.Covered != float64(p.Released)/float64(n) || res.PointsReleased != p.Released {
		t.Errorf("--allow-partial summary: %+v", res)
	}
	if trs := readOut(t, out); len(trs) != 1 || trs[0].Len() != p.Released {
		t.Errorf("wrote %d traces, want 1 of %d points", len(trs), p.Released)
	}
	// The certificate landed beside it and says what the summary says.
	cert, err := geoind.ReadCertificateFile(res.Certificate)
	if err != nil || res.Certificate != out+".cert.json" {
		t.Fatalf("certificate %q: %v", res.Certificate, err)
	}
	if cert.Randomness != "seeded:3" || len(cert.People) != 1 || cert.People[0].Released != p.Released || cert.People[0].Spent != p.Spent || cert.Config != res.Config {
		t.Errorf("certificate %+v, summary %+v", cert, res)
	}
	// The hint: drop --rate (the planned default), thinning if it says so.
	follow := []string{"geoind", "sanitize", "--in", in, "--out", out, "--force", "--origin", "39.9042,116.4074", "--seed", "3", "--json", "-q"}
	if m := regexp.MustCompile(`--every ([0-9][0-9a-z.]*) \(`).FindStringSubmatch(hint.Error()); m != nil {
		follow = append(follow, "--every", m[1])
	}
	for _, mech := range []string{"pm", "im"} {
		stdout, err = geoindRun(t, append(follow, "--mechanism", mech)...)
		if err != nil {
			t.Fatalf("%s following the hint %v: %v", mech, follow, err)
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Complete || res.PointsReleased != res.PointsIn || res.People[0].Released != res.PointsIn {
			t.Errorf("%s following the hint: %+v %v", mech, res, err)
		}
	}
}

// TestGeoindSanitizePerPerson: one budget per person across the input's
// traces: the segments of a uid-less GPX, the traces of one uid in a CSV,
// the files of one GeoLife user directory.
func TestGeoindSanitizePerPerson(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	mk := func(uid, name string, start time.Time, n int) *trace.Trace {
		tr := &trace.Trace{UID: uid, Name: name}
		for i := range n {
			tr.Points = append(tr.Points, trace.Point{Time: start.Add(time.Duration(i) * time.Minute), Lat: 39.98 + 5e-5*float64(i), Lon: 116.32, Alt: math.NaN()})
		}
		return tr
	}
	// IM at 10 % of ε per point: a budget covers 10 points.
	run := func(in string, more ...string) geoind.ReleaseSummary {
		t.Helper()
		var res geoind.ReleaseSummary
		geoindJSON(t, &res, append([]string{"geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, "out.csv"), "--force", "--origin", "39.9042,116.4074",
			"--mechanism", "im", "--rate", "0.1", "--allow-partial", "--seed", "5"}, more...)...)
		return res
	}
	released := func(res geoind.ReleaseSummary) map[string]int {
		m := map[string]int{}
		for _, p := range res.People {
			m[p.Person] = p.Released
		}
		return m
	}

	// CSV with a uid column: uid a has two traces of 8 points, b one.
	csv := filepath.Join(dir, "people.csv")
	if err := trace.WriteFile(csv, []*trace.Trace{mk("a", "", day, 8), mk("b", "", day, 8), mk("a", "", day.Add(5*time.Hour), 8)}, ""); err != nil {
		t.Fatal(err)
	}
	if got := released(run(csv, "--corpus")); got["uid a"] != 10 || got["uid b"] != 8 || len(got) != 2 {
		t.Errorf("CSV per uid: %v, want a: 10 of 16, b: 8 of 8", got)
	}
	// Without --corpus the file is one person: one budget for all 24.
	if res := run(csv); len(res.People) != 1 || res.People[0].Released != 10 || res.People[0].Points != 24 {
		t.Errorf("CSV as one person: %+v", res.People)
	}

	// A GPX track of two segments without uid: one person.
	gpx := filepath.Join(dir, "track.gpx")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk>`)
	for _, start := range []time.Time{day, day.Add(3 * time.Hour)} {
		b.WriteString("<trkseg>")
		for i := range 8 {
			fmt.Fprintf(&b, `<trkpt lat="%g" lon="116.32"><time>%s</time></trkpt>`, 39.98+5e-5*float64(i), start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
		}
		b.WriteString("</trkseg>")
	}
	b.WriteString("</trk></gpx>")
	if err := os.WriteFile(gpx, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(gpx)
	if len(res.People) != 1 || res.People[0].Released != 10 || res.People[0].Points != 16 || len(res.People[0].Traces) != 2 {
		t.Errorf("GPX segments: %+v", res.People)
	}

	// A GeoLife user directory: user 000's files share one budget, the
	// user's folder given, or the folder of users declared a corpus.
	user := filepath.Join(dir, "geolife", "000")
	if err := os.MkdirAll(user, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, start := range []time.Time{day, day.Add(24 * time.Hour)} {
		if err := trace.WriteFile(filepath.Join(user, fmt.Sprintf("2008102%d.plt", i)), []*trace.Trace{mk("", "", start, 8)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{user}, {filepath.Join(dir, "geolife"), "--corpus"}} {
		res = run(args[0], args[1:]...)
		if len(res.People) != 1 || res.People[0].UID != "000" || res.People[0].Released != 10 || res.Files != 2 {
			t.Errorf("GeoLife user directory %v: %+v", args, res)
		}
	}
}
