package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// traceReaders are the commands that read traces. Each takes --lenient (a
// no-op) and --strict.
var traceReaders = []string{"convert", "inspect", "plot", "fit", "geoind sanitize", "repro predictive", "cip loss", "cip design", "sanitize", "attack"}

func TestTraceReadersTakeLenientAndStrict(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	for _, path := range traceReaders {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.CommandPath() != "tracepriv "+path {
			t.Fatalf("%s: %v", path, err)
		}
		for _, flag := range []string{"lenient", "strict", "from", "uid", "tz"} {
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", path, flag)
			}
		}
	}
}

// TestCIPTraceReport checks the reading report of "cip loss --trace": the
// secrets are indices into what was read, so what was skipped matters.
func TestCIPTraceReport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv")
	os.WriteFile(in, []byte("uid,time,lat,lon\na,0,39.9,116.3\na,5,39.9,116.3\na,5,39.9,116.3\na,3,39.9,116.3\na,10,39.9,116.3\n"), 0o644)
	args := []string{"cip", "loss", "--kernel", "rbf", "--lengthscale", "5", "--trace", in, "--iid", "1", "--all-secrets", "--json"}
	stdout, stderr, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	json.Unmarshal([]byte(stdout), &v)
	if v["skipped_rows"] != 2.0 || v["n"] != 3.0 || !strings.Contains(stderr, "1 time_backwards") {
		t.Errorf("skipped %v, n %v; stderr %s", v["skipped_rows"], v["n"], stderr)
	}
	if _, _, err := run(t, append(args, "--strict")...); err == nil || !strings.Contains(err.Error(), in+":5") {
		t.Errorf("strict: %v", err)
	}
	// Without --trace there is no reading report.
	stdout, _, err = run(t, "cip", "loss", "--kernel", "rbf", "--lengthscale", "5", "--n", "5", "--iid", "1", "--all-secrets", "--json")
	if err != nil || strings.Contains(stdout, "skipped_rows") {
		t.Errorf("--n: %v\n%s", err, stdout)
	}
}

// sampleTrace reads the bundled sample trace.
func sampleTrace(t *testing.T) *trace.Trace {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := trace.ReadAll(r)
	if err != nil || len(ts) != 1 {
		t.Fatal(err)
	}
	return ts[0]
}

// twoLines splits tr in halves, the lines of a GeoJSON MultiLineString:
// their positions and their times, as JSON.
func twoLines(tr *trace.Trace) (coords, times [2][]string) {
	half := tr.Len() / 2
	for k, l := range [2][]trace.Point{tr.Points[:half], tr.Points[half:]} {
		for _, p := range l {
			coords[k] = append(coords[k], fmt.Sprintf("[%v,%v]", p.Lon, p.Lat))
			times[k] = append(times[k], fmt.Sprintf("%q", p.Time.Format(time.RFC3339Nano)))
		}
	}
	return coords, times
}

// TestReadRefusesNonPLT: random bytes, a binary or an empty file saved as
// PLT is refused as not PLT, naming the file and line; in a directory it
// is skipped and listed, and the rest is read.
func TestReadRefusesNonPLT(t *testing.T) {
	dir := t.TempDir()
	random := make([]byte, 3<<10)
	for i := range random {
		random[i] = byte(i*7919 + i*i*31) // no line is PLT's header
	}
	bad := filepath.Join(dir, "000", "random.plt")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, random, 0o644)
	empty := filepath.Join(dir, "000", "empty.plt")
	os.WriteFile(empty, nil, 0o644)
	good := filepath.Join(dir, "000", "good.plt")
	os.WriteFile(good, sample.PLT, 0o644)
	for _, f := range []string{bad, empty} {
		_, _, err := run(t, "inspect", f)
		if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "not a PLT file") || !strings.Contains(err.Error(), "lat,lon,0,altitude_feet,days,date,time") {
			t.Errorf("inspect %s: %v", f, err)
		}
	}
	if _, _, err := run(t, "inspect", bad); err == nil || !strings.Contains(err.Error(), bad+":1:") {
		t.Errorf("the line is not named: %v", err)
	}
	stdout, stderr, err := run(t, "inspect", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res trace.Inspection
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res.Traces) != 1 || len(res.SkippedFiles) != 2 {
		t.Errorf("%v: %s", err, stdout)
	}
	if !strings.Contains(stderr, "2 of 3 files could not be read") || !strings.Contains(stderr, "not a PLT file") {
		t.Errorf("stderr: %s", stderr)
	}
	if _, _, err := run(t, "inspect", dir, "--strict"); err == nil || !strings.Contains(err.Error(), "not a PLT file") {
		t.Errorf("--strict: %v", err)
	}
}

// TestReadGeoJSONMultiLineStringCLI: every point of a MultiLineString
// arrives, each line a segment of the person's trace, and a file whose
// features are all unreadable says why without --strict.
func TestReadGeoJSONMultiLineStringCLI(t *testing.T) {
	dir := t.TempDir()
	tr := sampleTrace(t)
	coords, times := twoLines(tr)
	doc := fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[[%s],[%s]]},"properties":{"uid":"u1","times":[[%s],[%s]]}}]}`,
		strings.Join(coords[0], ","), strings.Join(coords[1], ","), strings.Join(times[0], ","), strings.Join(times[1], ","))
	in := filepath.Join(dir, "m.geojson")
	os.WriteFile(in, []byte(doc), 0o644)
	out := filepath.Join(dir, "m.csv")
	stdout, _, err := run(t, "convert", "--in", in, "--out", out, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res convertResult
	json.Unmarshal([]byte(stdout), &res)
	if res.Traces != 2 || res.Points != tr.Len() {
		t.Errorf("%d traces, %d points, want 2 and %d", res.Traces, res.Points, tr.Len())
	}
	// CSV joins consecutive rows of one uid into one trace.
	got, _, err := trace.ReadFile(out, trace.ReadOptions{})
	if err != nil || len(got) != 1 || got[0].UID != "u1" || got[0].Len() != tr.Len() {
		t.Fatalf("%v: %d traces", err, len(got))
	}
	for i, p := range got[0].Points {
		if q := tr.Points[i]; p.Lat != q.Lat || p.Lon != q.Lon || !p.Time.Equal(q.Time) {
			t.Fatalf("point %d is %+v, want %+v", i, p, q)
		}
	}
	// An unreadable feature: the reason, without --strict.
	poly := filepath.Join(dir, "p.geojson")
	os.WriteFile(poly, []byte(strings.Replace(doc, "MultiLineString", "MultiPolygon", 1)), 0o644)
	if _, _, err := run(t, "inspect", poly); err == nil || !strings.Contains(err.Error(), `"MultiPolygon" unsupported geometry (want LineString, MultiLineString or Point)`) {
		t.Errorf("no reason given: %v", err)
	}
}

// TestReadSymlinkedUsers reads a directory of symbolic links to people's
// folders, one of them renamed, with the same people as copies would give.
func TestReadSymlinkedUsers(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"Data/000/Trajectory/a.plt", "Data/001/Trajectory/2009/b.plt"} {
		path := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, sample.PLT, 0o644)
	}
	links := filepath.Join(dir, "links")
	os.MkdirAll(links, 0o755)
	if err := os.Symlink(filepath.Join(dir, "Data", "000"), filepath.Join(links, "000")); err != nil {
		t.Skip(err)
	}
	os.Symlink(filepath.Join("..", "Data", "001"), filepath.Join(links, "bob"))
	stdout, stderr, err := run(t, "inspect", links, "--corpus", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res trace.Inspection
	json.Unmarshal([]byte(stdout), &res)
	uids := map[string]int{}
	for _, s := range res.Traces {
		uids[s.UID] += s.Points
	}
	if len(uids) != 2 || uids["000"] == 0 || uids["000"] != uids["bob"] || strings.Contains(stderr, "no user id") {
		t.Errorf("persons %v; stderr %s", uids, stderr)
	}
	os.Symlink(links, filepath.Join(dir, "Data", "000", "Trajectory", "loop"))
	if _, _, err := run(t, "inspect", links); err == nil || !strings.Contains(err.Error(), "symbolic link cycle") {
		t.Errorf("a cycle: %v", err)
	}
}

// TestReadUIDFromFileName: a file with no person is the person named
// after the file, and the command says so and how to name the person.
func TestReadUIDFromFileName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("walk.plt", sample.PLT, 0o644)
	os.WriteFile("run.csv", []byte("time,lat,lon\n2008-10-24T02:09:59Z,39.98,116.31\n2008-10-24T02:10:04Z,39.98,116.32\n"), 0o644)
	for file, uid := range map[string]string{"walk.plt": "walk", "run.csv": "run"} {
		stdout, stderr, err := run(t, "inspect", file, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var res trace.Inspection
		json.Unmarshal([]byte(stdout), &res)
		if len(res.Traces) != 1 || res.Traces[0].UID != uid || len(res.UIDFromFile) != 1 || res.UIDFromFile[0].UID != uid {
			t.Errorf("%s: %s", file, stdout)
		}
		if !strings.Contains(stderr, fmt.Sprintf("%s is person %q", file, uid)) || !strings.Contains(stderr, "--uid") {
			t.Errorf("%s: no warning: %s", file, stderr)
		}
		stdout, stderr, err = run(t, "inspect", file, "--json", "--uid", "carol")
		if err != nil || !strings.Contains(stdout, `"uid": "carol"`) || strings.Contains(stderr, "no user id") || strings.Contains(stdout, "uid_from_file") {
			t.Errorf("%s --uid carol: %v\n%s\n%s", file, err, stdout, stderr)
		}
	}
}

// TestReadNoTracesSaysWhy: reading files without a fix says why.
func TestReadNoTracesSaysWhy(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.csv", "b.csv"} {
		os.WriteFile(filepath.Join(dir, f), []byte("uid,time,lat,lon\n"), 0o644)
	}
	if _, _, err := run(t, "inspect", dir); err == nil || !strings.Contains(err.Error(), "no traces found (the files hold no fix)") {
		t.Errorf("empty tables: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "c.csv"), []byte("uid,time,lat,lon\na,1,95,116\n"), 0o644)
	if _, _, err := run(t, "inspect", dir); err == nil || !strings.Contains(err.Error(), `field "lat": "95" is out of range`) {
		t.Errorf("a file of bad rows: %v", err)
	}
}

// secret stands for a person's name written in every free-text slot of
// the inputs of TestReleaseHasNoFreeText.
const secret = "Alice Q. Example"

// freeTextInputs writes the sample trace as GPX, GeoJSON (a
// MultiLineString) and CSV with secret in every free-text slot each
// format has: GPX metadata, track, segment and point names, descriptions,
// comments, authors, links, keywords, sources, types and extensions;
// GeoJSON names, ids, titles, descriptions and other properties; a CSV
// column.
func freeTextInputs(t *testing.T, dir string) []string {
	t.Helper()
	tr := sampleTrace(t)
	s := secret
	var gpx strings.Builder
	fmt.Fprintf(&gpx, `<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="%s" xmlns="http://www.topografix.com/GPX/1/1">
<metadata><name>%s</name><desc>%s</desc><author><name>%s</name><email id="alice" domain="example.com"/><link href="https://example.com/%s"><text>%s</text></link></author><copyright author="%s"><year>2024</year></copyright><link href="https://example.com/%s"><text>%s</text><type>%s</type></link><keywords>%s</keywords></metadata>
<wpt lat="39.9" lon="116.3"><name>%s</name><cmt>%s</cmt><desc>%s</desc></wpt>
<rte><name>%s</name><rtept lat="39.9" lon="116.3"><name>%s</name></rtept></rte>
<trk><name>%s</name><cmt>%s</cmt><desc>%s</desc><src>%s</src><link href="https://example.com/%s"><text>%s</text></link><number>1</number><type>%s</type><extensions><note>%s</note></extensions>
<trkseg><extensions><note>%s</note></extensions>
`, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s)
	for i, p := range tr.Points {
		fmt.Fprintf(&gpx, `<trkpt lat="%v" lon="%v"><time>%s</time>`, p.Lat, p.Lon, p.Time.Format(time.RFC3339Nano))
		if i%50 == 0 {
			fmt.Fprintf(&gpx, `<name>%s</name><cmt>%s</cmt><desc>%s</desc><src>%s</src><link href="https://example.com/%s"><text>%s</text></link><sym>%s</sym><type>%s</type><extensions><note>%s</note></extensions>`, s, s, s, s, s, s, s, s, s)
		}
		gpx.WriteString("</trkpt>\n")
	}
	gpx.WriteString("</trkseg></trk></gpx>\n")

	coords, times := twoLines(tr)
	var attrs [2][]string
	for k := range attrs {
		for range coords[k] {
			attrs[k] = append(attrs[k], fmt.Sprintf(`{"note":%q}`, s))
		}
	}
	gj := fmt.Sprintf(`{"type":"FeatureCollection","name":%q,"features":[{"type":"Feature","id":%q,"geometry":{"type":"MultiLineString","coordinates":[[%s],[%s]]},`+
		`"properties":{"name":%q,"title":%q,"description":%q,"desc":%q,"author":%q,"owner":{"name":%q},"coordinateProperties":{"times":[[%s],[%s]]},"attrs":[[%s],[%s]]}}]}`,
		s, s, strings.Join(coords[0], ","), strings.Join(coords[1], ","), s, s, s, s, s, s,
		strings.Join(times[0], ","), strings.Join(times[1], ","), strings.Join(attrs[0], ","), strings.Join(attrs[1], ","))

	var csv strings.Builder
	csv.WriteString("uid,time,lat,lon,name,note\n")
	for _, p := range tr.Points {
		fmt.Fprintf(&csv, "u9,%s,%v,%v,%s,\"%s, again\"\n", p.Time.Format(time.RFC3339Nano), p.Lat, p.Lon, s, s)
	}
	var paths []string
	for name, body := range map[string]string{"alice/walk.gpx": gpx.String(), "bob/walk.geojson": gj, "carol/walk.csv": csv.String()} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, secret) {
			t.Fatal("the secret is not in the input")
		}
		paths = append(paths, p)
	}
	return paths
}

// TestReleaseHasNoFreeText releases files with a name in every free-text
// slot (sanitize of each file, sanitize of the directory, geoind
// sanitize), and checks every byte written: the name is nowhere, and no
// certificate (nor the corpus's manifest) holds an absolute local path
// although every input was given by one.
func TestReleaseHasNoFreeText(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	out := filepath.Join(tmp, "out")
	os.MkdirAll(out, 0o755)
	inputs := freeTextInputs(t, in)
	prior := filepath.Join(tmp, "prior.json")
	os.WriteFile(prior, sample.Prior, 0o644)
	release := []string{"--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "1"}
	for _, f := range inputs {
		name := filepath.Base(filepath.Dir(f)) + "-" + filepath.Base(f)
		if _, _, err := run(t, append([]string{"sanitize", "--in", f, "--out", filepath.Join(out, name), "-q"}, release...)...); err != nil {
			t.Fatalf("sanitize %s: %v", f, err)
		}
		if _, _, err := run(t, "geoind", "sanitize", "--in", f, "--out", filepath.Join(out, "geoind-"+name), "--origin", "39.9042,116.4074", "--every", "60s", "--allow-partial", "--seed", "1", "-q"); err != nil {
			t.Fatalf("geoind sanitize %s: %v", f, err)
		}
	}
	if _, _, err := run(t, append([]string{"sanitize", "--in", in, "--corpus", "--out", filepath.Join(out, "corpus"), "-q"}, release...)...); err != nil {
		t.Fatalf("sanitize --in DIR: %v", err)
	}
	written, certs := 0, 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		written++
		for _, part := range []string{secret, "Alice", "example.com"} {
			if bytes.Contains(b, []byte(part)) {
				t.Errorf("%s holds %q", path, part)
			}
		}
		if strings.HasSuffix(path, ".cert.json") || filepath.Base(filepath.Dir(path)) == sanitize.CertificatesDir || filepath.Base(path) == sanitize.ManifestName {
			certs++
			if bytes.Contains(b, []byte(tmp)) {
				t.Errorf("certificate %s holds the local path %s", path, tmp)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			walkStrings(v, func(s string) {
				if filepath.IsAbs(s) {
					t.Errorf("certificate %s holds the absolute path %q", path, s)
				}
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 3 files released twice with a certificate each, and the directory's
	// 3 files, certificates and manifest.
	if written < 3*4+3+3+1 || certs < 3*2+3 {
		t.Errorf("wrote %d files, %d certificates", written, certs)
	}
}

// walkStrings calls fn on every string of a decoded JSON value.
func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			walkStrings(e, fn)
		}
	}
}
