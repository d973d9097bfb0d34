package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// geolifeDir holds the real GeoLife users 000-007 (never shipped; see
// ../shared/data/README).
const geolifeDir = "../../shared/data/geolife"

// writeFile writes body to dir/name, creating directories.
func writeFile(t testing.TB, dir, name string, body []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// randomBytes returns n bytes of a seeded generator.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 23))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// TestPLTRefusesNonPLT checks the PLT rule: a file is PLT when its six
// header lines match (the datum WGS 84, altitude in feet) and at least one
// of its rows is a fix. Anything else is refused in both modes, with the
// file, the line and what a PLT file holds.
func TestPLTRefusesNonPLT(t *testing.T) {
	dir := t.TempDir()
	real := []byte(pltHead + pltRows)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(real)
	zw.Close()
	// A gzipped PLT is read as the PLT it holds (issue 32); binary that is
	// not gzip (here the same bytes with the magic number damaged, as a
	// file compressed some other way) is refused as binary.
	if traces, _, err := ReadFile(writeFile(t, dir, "gzipped.plt", gz.Bytes()), ReadOptions{Strict: true}); err != nil || len(traces) != 1 || traces[0].Len() != 3 {
		t.Errorf("gzipped PLT: %d traces, %v", len(traces), err)
	}
	notGzip := bytes.Clone(gz.Bytes())
	notGzip[0] = 0x78
	for _, tc := range []struct {
		name string
		body []byte
		line int
		want error
		text string
	}{
		{"empty", nil, 0, ErrNotPLT, "the file is empty"},
		{"binary (compressed, not gzip)", notGzip, 1, ErrNotPLT, "found binary data where line 1"},
		{"a CSV file", []byte("uid,time,lat,lon\na,1224730384,39.9,116.3\n"), 1, ErrNotPLT, `found "uid,time,lat,lon" where line 1`},
		{"truncated header", []byte("Geolife trajectory\r\nWGS 84\r\nAltitude is in Feet\r\n"), 3, ErrTruncated, "header has 3 of 6 lines"},
		{"a header cut mid-line", real[:40], 3, ErrTruncated, "ends in line 3 of the PLT header"},
		{"another datum", []byte(strings.Replace(pltHead, "WGS 84", "Pulkovo 1942", 1) + pltRows), 2, ErrUnsupported, `datum "Pulkovo 1942"`},
		{"the header alone", []byte(pltHead), 6, ErrNoFix, "followed by no fix"},
		{"the header then random bytes", append([]byte(pltHead), randomBytes(7, 3000)...), 0, ErrNoFix, "rows were skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".plt", tc.body)
			for _, strict := range []bool{false, true} {
				traces, _, err := ReadFile(path, ReadOptions{Strict: strict})
				if strict && tc.want == ErrNoFix && tc.line == 0 {
					// Strict mode stops at the first bad row instead.
					var pe *ParseError
					if !errors.As(err, &pe) || !pe.Skippable() || pe.Line != 7 {
						t.Errorf("strict: %v", err)
					}
					continue
				}
				var pe *ParseError
				if err == nil || traces != nil || !errors.Is(err, tc.want) || !errors.As(err, &pe) || pe.Skippable() {
					t.Fatalf("strict=%v: %d traces, error %v; want a file error wrapping %q", strict, len(traces), err, tc.want)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, path) || !strings.Contains(msg, tc.text) {
					t.Errorf("strict=%v: message %q does not name %s or say %q", strict, msg, path, tc.text)
				}
				if tc.line > 0 && pe.Line != tc.line {
					t.Errorf("strict=%v: line %d, want %d: %v", strict, pe.Line, tc.line, err)
				}
				if tc.want == ErrNotPLT || tc.want == ErrTruncated || tc.want == ErrNoFix && tc.line > 0 {
					if !strings.Contains(msg, "7 comma-separated fields: lat,lon,0,altitude_feet,days,date,time") {
						t.Errorf("strict=%v: message %q does not say what a PLT file holds", strict, msg)
					}
				}
			}
		})
	}
}

// TestPLTRandomBytes reads 3 KB of random bytes as PLT, for many seeds:
// every one is refused as not PLT, at line 1.
func TestPLTRandomBytes(t *testing.T) {
	for seed := range uint64(200) {
		in := randomBytes(seed, 3<<10)
		_, _, err := read(t, PLT, string(in), ReadOptions{Name: "random.plt"})
		var pe *ParseError
		if !errors.Is(err, ErrNotPLT) || !errors.As(err, &pe) || pe.Line != 1 {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestPLTOziExplorer reads OziExplorer's header, which GeoLife's PLT
// follows with its own first line (and a free-text track description in
// line 5, which is not read); rows without date and time strings take
// the day number.
func TestPLTOziExplorer(t *testing.T) {
	in := "OziExplorer Track Point File Version 2.1\r\nWGS 84\r\nAltitude is in Feet\r\nReserved 3\r\n" +
		"0,2,255,Alice walking home,0,0,2,8421376\r\n2\r\n" +
		"39.930702,116.376417,0,492,39744.1201851852,,\r\n39.930683,116.37645,1,492,39744.1202546296,,\r\n"
	traces, rep, err := read(t, PLT, in, ReadOptions{Strict: true})
	if err != nil || len(traces) != 1 || rep.Read != 2 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	if traces[0].Name != "" || traces[0].Points[1].Attrs != nil {
		t.Errorf("the track description was read: %+v", traces[0])
	}
}

// TestPLTCorpusSkipsNonPLT: in a corpus, a file that is not PLT is
// skipped and listed, and the others are read.
func TestPLTCorpusSkipsNonPLT(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "000/a.plt", []byte(pltHead+pltRows))
	bad := writeFile(t, dir, "000/b.plt", randomBytes(1, 3<<10))
	files, _, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ReadFiles(files, ReadOptions{Root: dir}, nil)
	if err != nil || rep.Traces != 1 || rep.Read != 3 || len(rep.SkippedFiles) != 1 || rep.SkippedFiles[0].File != bad || !errors.Is(rep.SkippedFiles[0].Err, ErrNotPLT) {
		t.Fatalf("%v, report %+v", err, rep)
	}
	if _, err := ReadFiles(files, ReadOptions{Root: dir, Strict: true}, nil); !errors.Is(err, ErrNotPLT) {
		t.Errorf("strict: %v", err)
	}
}

// TestGeoLifeAllRead reads every GeoLife file of ../shared/data strictly:
// the PLT rule refuses none of them, and every data line is a fix read or
// a repeat merged.
func TestGeoLifeAllRead(t *testing.T) {
	if _, err := os.Stat(geolifeDir); err != nil {
		t.Skip("GeoLife data not found in " + geolifeDir)
	}
	files, _, err := Files(geolifeDir)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n")) - pltHeaderLines
	}
	// The folder of users 000-007 is a corpus: one person per folder.
	rep, err := ReadFiles(files, ReadOptions{Strict: true, Root: geolifeDir, Corpus: true}, func(path string, ts []*Trace) {
		if len(ts) != 1 || ts[0].Len() == 0 || ts[0].UID != filepath.Base(filepath.Dir(path)) {
			t.Errorf("%s: %d traces, uid %q", path, len(ts), ts[0].UID)
		}
	})
	if err != nil || len(rep.SkippedFiles) != 0 || rep.Traces != len(files) || rep.Skipped != 0 {
		t.Fatalf("%v, report %v", err, rep)
	}
	if rep.Read+rep.Deduplicated != lines {
		t.Errorf("%d fixes read and %d merged, of %d data lines", rep.Read, rep.Deduplicated, lines)
	}
	t.Logf("%d files, %d fixes", len(files), rep.Read)
}

// TestNoFixIsRefused: a file whose every row is skipped holds no trace
// and is refused, naming the first problem, in every format.
func TestNoFixIsRefused(t *testing.T) {
	for _, tc := range []struct {
		f  Format
		in string
	}{
		{CSV, "uid,time,lat,lon\na,1,95,116\na,2,x,116\n"},
		{GPX, `<gpx><trk><trkseg><trkpt lat="95" lon="1"><time>2008-10-23T02:53:04Z</time></trkpt></trkseg></trk></gpx>`},
		{GeoJSON, `{"type":"Feature","geometry":{"type":"Polygon","coordinates":[]},"properties":{}}`},
		{PLT, pltHead + "garbage\r\n95,116.3,0,1,39744.12,2008-10-23,02:53:20\r\n"},
	} {
		_, rep, err := read(t, tc.f, tc.in, ReadOptions{Name: "in"})
		var pe *ParseError
		if !errors.Is(err, ErrNoFix) || !errors.As(err, &pe) || pe.Skippable() || rep.Read != 0 || !strings.Contains(err.Error(), "the first: in:") {
			t.Errorf("%s: %v", tc.f, err)
		}
	}
	// A file with a header and no rows is empty, not refused (but PLT,
	// whose one trace would be empty).
	if ts, _, err := read(t, CSV, "uid,time,lat,lon\n", ReadOptions{}); err != nil || len(ts) != 0 {
		t.Errorf("an empty CSV table: %v", err)
	}
}

// multiLine is a MultiLineString of two lines (3 and 2 positions) with
// properties given as props.
func multiLine(props string) string {
	return `{"type": "FeatureCollection", "features": [{"type": "Feature",
 "geometry": {"type": "MultiLineString", "coordinates": [
   [[116.30, 39.90], [116.31, 39.91, 5], [116.32, 39.92]],
   [[116.40, 39.80], [116.41, 39.81]]]},
 "properties": ` + props + `}]}`
}

// TestReadGeoJSONMultiLineString checks that every position of a
// MultiLineString arrives, each line a segment (a trace) of the feature's
// person, with times nested per line or flat, in tracepriv's "times" or
// togeojson's properties, inside a Feature or a FeatureCollection.
func TestReadGeoJSONMultiLineString(t *testing.T) {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	nested := `[["2008-10-23T02:53:04Z", "2008-10-23T02:53:05Z", "2008-10-23T02:53:06Z"], [1224734400, 1224734401]]`
	flat := `["2008-10-23T02:53:04Z", "2008-10-23T02:53:05Z", "2008-10-23T02:53:06Z", 1224734400, 1224734401]`
	for name, in := range map[string]string{
		"nested times":          multiLine(`{"uid": "u1", "name": "Alice", "times": ` + nested + `, "alts": [[1, null, 3], [4, 5]], "attrs": [[{"hr": 90}, null, null], [null, {"hr": 95}]]}`),
		"flat times":            multiLine(`{"uid": "u1", "times": ` + flat + `, "alts": [1, null, 3, 4, 5], "attrs": [{"hr": 90}, null, null, null, {"hr": 95}]}`),
		"togeojson":             multiLine(`{"uid": "u1", "name": "Alice", "coordinateProperties": {"times": ` + nested + `}, "alts": [[1, null, 3], [4, 5]], "attrs": [[{"hr": 90}, null, null], [null, {"hr": 95}]]}`),
		"coordTimes":            multiLine(`{"uid": "u1", "coordTimes": ` + nested + `, "alts": [[1, null, 3], [4, 5]], "attrs": [[{"hr": 90}, null, null], [null, {"hr": 95}]]}`),
		"a bare Feature":        strings.TrimSuffix(strings.TrimPrefix(multiLine(`{"uid": "u1", "times": `+nested+`, "alts": [1, null, 3, 4, 5], "attrs": [{"hr": 90}, null, null, null, {"hr": 95}]}`), `{"type": "FeatureCollection", "features": [`), "]}"),
		"an empty line is none": strings.Replace(multiLine(`{"uid": "u1", "times": [["2008-10-23T02:53:04Z", "2008-10-23T02:53:05Z", "2008-10-23T02:53:06Z"], [], [1224734400, 1224734401]], "alts": [[1, null, 3], [], [4, 5]], "attrs": [[{"hr": 90}, null, null], [], [null, {"hr": 95}]]}`), "]],\n", "]], [],\n", 1),
	} {
		t.Run(name, func(t *testing.T) {
			traces, rep, err := read(t, GeoJSON, in, ReadOptions{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(traces) != 2 || rep.Read != 5 || rep.Traces != 2 {
				t.Fatalf("%d traces, report %+v", len(traces), rep)
			}
			a, b := traces[0], traces[1]
			if a.UID != "u1" || b.UID != "u1" || a.Len() != 3 || b.Len() != 2 || a.Name != "" {
				t.Fatalf("segments %q (%d, %q), %q (%d)", a.UID, a.Len(), a.Name, b.UID, b.Len())
			}
			if p := a.Points[1]; p.Lon != 116.31 || p.Lat != 39.91 || p.Alt != 5 || !p.Time.Equal(t0.Add(time.Second)) {
				t.Errorf("line 1, position 2: %+v", p)
			}
			if p := b.Points[1]; p.Lon != 116.41 || p.Lat != 39.81 || !p.Time.Equal(time.Unix(1224734401, 0)) || p.Attrs["hr"] != "95" || p.Alt != 5 {
				t.Errorf("line 2, position 2: %+v", p)
			}
			if a.Points[0].Attrs["hr"] != "90" || a.Points[0].Alt != 1 {
				t.Errorf("line 1, position 1: %+v", a.Points[0])
			}
		})
	}
}

// TestReadGeoJSONMultiLineStringErrors names the line and position of a
// bad value, and refuses times that fit neither layout.
func TestReadGeoJSONMultiLineStringErrors(t *testing.T) {
	for _, tc := range []struct {
		name, props, field string
		want               error
	}{
		{"no times", `{"uid": "u"}`, "features[0].properties.times", ErrMissing},
		{"times per line of the wrong length", `{"times": [[1, 2], [3, 4]]}`, "features[0].properties.times", ErrMalformed},
		{"flat times of the wrong length", `{"times": [1, 2, 3, 4]}`, "features[0].properties.times", ErrMalformed},
		{"a bad nested time", `{"times": [[1, 2, 3], [4, "noon"]]}`, "features[0].properties.times[1][1]", ErrBadTime},
		{"a bad flat time", `{"times": [1, 2, 3, 4, "noon"]}`, "features[0].properties.times[4]", ErrBadTime},
		{"a bad altitude", `{"times": [1, 2, 3, 4, 5], "alts": [[1, 2, 3], [4, "x"]]}`, "features[0].properties.alts[1][1]", ErrNotNumber},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(t, GeoJSON, multiLine(tc.props), ReadOptions{Name: "m.geojson", Strict: true})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field != tc.field || !errors.Is(err, tc.want) {
				t.Errorf("got %v; want field %q wrapping %q", err, tc.field, tc.want)
			}
		})
	}
	bad := strings.Replace(multiLine(`{"times": [1, 2, 3, 4, 5]}`), "116.41, 39.81", "116.41, 99.81", 1)
	ts, rep, err := read(t, GeoJSON, bad, ReadOptions{Name: "m.geojson"})
	if err != nil || len(ts) != 2 || rep.Read != 4 || rep.Problems[0].Field != "features[0].geometry.coordinates[1][1][1]" {
		t.Errorf("lenient: %v, report %+v", err, rep)
	}
}

// symlink makes the link at dir/link point to target.
func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

// persons reads paths with ReadPaths, each declared a corpus, and counts
// points per person.
func persons(t testing.TB, paths ...string) map[string]int {
	t.Helper()
	got := map[string]int{}
	_, rep, err := ReadPaths(paths, ReadOptions{Strict: true, Corpus: true}, func(_ string, ts []*Trace) {
		for _, tr := range ts {
			got[tr.UID] += tr.Len()
		}
	})
	if err != nil || len(rep.UIDFromFile) != 0 {
		t.Fatalf("%v: %v, files without a person %v", paths, err, rep.UIDFromFile)
	}
	return got
}

// TestSymlinkedCorpus reads a directory of symbolic links to people's
// folders, with a linked subfolder, a linked file and a linked root: each
// link reads as a copy of what it points to would, so the person rule
// (PersonRule) is the same through links.
func TestSymlinkedCorpus(t *testing.T) {
	dir := t.TempDir()
	plt := []byte(pltHead + pltRows)
	csv := []byte("time,lat,lon\n2008-10-24T02:09:59Z,39.98,116.31\n2008-10-24T02:10:04Z,39.98,116.32\n")
	for _, f := range []string{"Data/000/Trajectory/a.plt", "Data/000/Trajectory/sub/b.plt", "Data/001/Trajectory/c.plt", "elsewhere/more/d.plt"} {
		writeFile(t, dir, f, plt)
	}
	writeFile(t, dir, "flat/005/2008/e.csv", csv)
	writeFile(t, dir, "loose/f.plt", plt)
	// The corpus as copies, and as links.
	for _, f := range []string{"copies/000/Trajectory/a.plt", "copies/000/Trajectory/sub/b.plt", "copies/000/Trajectory/extra/d.plt", "copies/alice/Trajectory/c.plt", "copies/006/x/f.plt"} {
		writeFile(t, dir, f, plt)
	}
	writeFile(t, dir, "copies/bob/2008/e.csv", csv)
	links := filepath.Join(dir, "links")
	symlink(t, filepath.Join(dir, "Data/000"), filepath.Join(links, "000"))
	symlink(t, "../Data/001", filepath.Join(links, "alice"))                // relative, renamed
	symlink(t, filepath.Join(dir, "flat/005"), filepath.Join(links, "bob")) // a CSV person, renamed
	symlink(t, filepath.Join(dir, "loose/f.plt"), filepath.Join(links, "006/x/f.plt"))
	// A linked subfolder of a person's folder stays theirs.
	symlink(t, filepath.Join(dir, "elsewhere/more"), filepath.Join(dir, "Data/000/Trajectory/extra"))

	want := persons(t, filepath.Join(dir, "copies"))
	if len(want) != 4 || want["000"] != 9 || want["alice"] != 3 || want["bob"] != 2 || want["006"] != 3 {
		t.Fatalf("copies: %v", want)
	}
	got := persons(t, links)
	if len(got) != len(want) {
		t.Errorf("links: %v, copies %v", got, want)
	}
	for uid, n := range want {
		if got[uid] != n {
			t.Errorf("links: person %q has %d points, as copies %d (all: %v)", uid, got[uid], n, got)
		}
	}
	// A linked root reads as the root it points to.
	root := filepath.Join(dir, "rootlink")
	symlink(t, filepath.Join(dir, "Data"), root)
	if got, want := persons(t, root), persons(t, filepath.Join(dir, "Data")); len(got) != 2 || got["000"] != want["000"] || got["001"] != want["001"] || got["000"] != 9 {
		t.Errorf("linked root: %v, the root itself %v", got, want)
	}
	files, _, err := Files(links)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasPrefix(f, links+string(filepath.Separator)) {
			t.Errorf("%s is not under the directory given", f)
		}
	}
}

// TestSymlinkCycles refuses links that lead back to a directory being
// walked, and a file reached twice; a broken link is reported when read.
func TestSymlinkCycles(t *testing.T) {
	plt := []byte(pltHead + pltRows)
	for name, setup := range map[string]func(dir string) (root, inErr string){
		"a link to its own folder": func(dir string) (string, string) {
			writeFile(t, dir, "c/000/a.plt", plt)
			symlink(t, ".", filepath.Join(dir, "c/000/self"))
			return filepath.Join(dir, "c"), "c/000/self"
		},
		"a link to its own folder, before its files": func(dir string) (string, string) {
			writeFile(t, dir, "c/000/b.plt", plt)
			symlink(t, ".", filepath.Join(dir, "c/000/a"))
			return filepath.Join(dir, "c"), "c/000/a"
		},
		"a link to the root": func(dir string) (string, string) {
			writeFile(t, dir, "c/000/a.plt", plt)
			symlink(t, filepath.Join(dir, "c"), filepath.Join(dir, "c/000/up"))
			return filepath.Join(dir, "c"), "c/000/up"
		},
		"a link to a folder above the root": func(dir string) (string, string) {
			writeFile(t, dir, "c/000/a.plt", plt)
			symlink(t, dir, filepath.Join(dir, "c/000/top"))
			return filepath.Join(dir, "c"), "c/000/top"
		},
		"two links to each other": func(dir string) (string, string) {
			writeFile(t, dir, "c/000/a.plt", plt)
			writeFile(t, dir, "d/b.plt", plt)
			symlink(t, filepath.Join(dir, "d"), filepath.Join(dir, "c/000/d"))
			symlink(t, filepath.Join(dir, "c"), filepath.Join(dir, "d/c"))
			return filepath.Join(dir, "c"), "c/000/d/c"
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			root, at := setup(dir)
			_, _, err := Files(root)
			if err == nil || !strings.Contains(err.Error(), "symbolic link cycle") || !strings.Contains(err.Error(), filepath.Join(dir, filepath.FromSlash(at))) {
				t.Errorf("got %v, want a cycle at %s", err, at)
			}
		})
	}
	dir := t.TempDir()
	writeFile(t, dir, "Data/000/a.plt", plt)
	symlink(t, filepath.Join(dir, "Data/000"), filepath.Join(dir, "c/000"))
	symlink(t, filepath.Join(dir, "Data/000"), filepath.Join(dir, "c/alias"))
	if _, _, err := Files(filepath.Join(dir, "c")); err == nil || !strings.Contains(err.Error(), "same file") {
		t.Errorf("one folder linked twice: %v", err)
	}
	dir = t.TempDir()
	writeFile(t, dir, "c/000/a.plt", plt)
	symlink(t, filepath.Join(dir, "nowhere.plt"), filepath.Join(dir, "c/000/b.plt"))
	files, _, err := Files(filepath.Join(dir, "c"))
	if err != nil || len(files) != 2 {
		t.Fatalf("a broken link: %v %v", files, err)
	}
	rep, err := ReadFiles(files, ReadOptions{}, nil)
	if err != nil || rep.Traces != 1 || len(rep.SkippedFiles) != 1 || !strings.Contains(rep.SkippedFiles[0].Err.Error(), "no such file") {
		t.Errorf("a broken link: %v, %+v", err, rep)
	}
}

// TestUIDFromFileName: a file whose traces have no user id, in their data
// or from a folder (UserDir, in every format), is the person named after
// the file, and the report says so; a uid in the data, a person's folder
// or ReadOptions.UID wins.
func TestUIDFromFileName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	gpx := []byte(`<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>2008-10-23T02:53:04Z</time></trkpt></trkseg></trk></gpx>`)
	csv := []byte("uid,time,lat,lon\n,1,39.9,116.3\nbob,2,39.9,116.3\n")
	gj := []byte(`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[116.3,39.9]]},"properties":{"times":[1]}}`)
	for name, body := range map[string][]byte{"walk.plt": []byte(pltHead + pltRows), "run.csv": csv, "ride.gpx": gpx, "day.2.geojson": gj} {
		writeFile(t, dir, name, body)
		writeFile(t, dir, "dan/"+name, body)
	}
	writeFile(t, dir, "000/Trajectory/sub/x.plt", []byte(pltHead+pltRows))
	for _, tc := range []struct {
		path string
		opt  ReadOptions
		uids []string
		from string // the uid taken from the file's name, if any
	}{
		{"walk.plt", ReadOptions{}, []string{"walk"}, "walk"},
		{"run.csv", ReadOptions{}, []string{"run", "bob"}, "run"},
		{"ride.gpx", ReadOptions{}, []string{"ride"}, "ride"},
		{"day.2.geojson", ReadOptions{}, []string{"day.2"}, "day.2"},
		// A folder names the person, in every format, read alone or in a
		// corpus.
		{"dan/walk.plt", ReadOptions{}, []string{"dan"}, ""},
		{"dan/run.csv", ReadOptions{}, []string{"dan", "bob"}, ""},
		{"dan/ride.gpx", ReadOptions{}, []string{"dan"}, ""},
		{"dan/day.2.geojson", ReadOptions{}, []string{"dan"}, ""},
		{filepath.Join(dir, "ride.gpx"), ReadOptions{}, []string{filepath.Base(dir)}, ""},
		// Read as a file of a corpus, the first folder is the person;
		// read as a file of one person's directory, the directory is.
		{"dan/ride.gpx", ReadOptions{Root: ".", Corpus: true}, []string{"dan"}, ""},
		{"dan/ride.gpx", ReadOptions{Root: "."}, []string{filepath.Base(dir)}, ""},
		{"dan/run.csv", ReadOptions{Root: "dan"}, []string{"dan", "dan"}, ""},
		{"000/Trajectory/sub/x.plt", ReadOptions{}, []string{"000"}, ""},
		{"ride.gpx", ReadOptions{UID: "carol"}, []string{"carol"}, ""},
	} {
		ts, rep, err := ReadFile(tc.path, tc.opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var uids []string
		for _, tr := range ts {
			uids = append(uids, tr.UID)
		}
		if strings.Join(uids, ",") != strings.Join(tc.uids, ",") {
			t.Errorf("%s %+v: uids %q, want %q", tc.path, tc.opt, uids, tc.uids)
		}
		if tc.from == "" && len(rep.UIDFromFile) != 0 || tc.from != "" && (len(rep.UIDFromFile) != 1 || rep.UIDFromFile[0] != FilePerson{File: tc.path, UID: tc.from}) {
			t.Errorf("%s %+v: report %+v, want the file's name %q", tc.path, tc.opt, rep.UIDFromFile, tc.from)
		}
		if s := rep.Summary(); len(s.UIDFromFile) != len(rep.UIDFromFile) {
			t.Errorf("%s: summary %+v", tc.path, s)
		}
	}
	// Reports add up.
	rep, err := ReadFiles([]string{"walk.plt", "dan/ride.gpx", "ride.gpx"}, ReadOptions{}, nil)
	if err != nil || len(rep.UIDFromFile) != 2 || rep.UIDFromFile[1].UID != "ride" {
		t.Errorf("ReadFiles: %v, %+v", err, rep.UIDFromFile)
	}
}

// TestNoFreeTextRead puts one text in every free-text slot of GPX and
// GeoJSON (names, descriptions, comments, authors, links, keywords) and
// checks that no trace read holds it and no writer writes it.
func TestNoFreeTextRead(t *testing.T) {
	const secret = "Alice Example"
	gpx := `<?xml version="1.0"?>
<gpx version="1.1" creator="x" xmlns="http://www.topografix.com/GPX/1/1">
 <metadata><name>` + secret + `</name><desc>` + secret + `</desc><author><name>` + secret + `</name><email id="alice" domain="example.com"/><link href="https://example.com/` + secret + `"><text>` + secret + `</text></link></author>
  <copyright author="` + secret + `"/><link href="https://example.com/` + secret + `"><text>` + secret + `</text></link><keywords>` + secret + `</keywords></metadata>
 <wpt lat="1" lon="2"><name>` + secret + `</name><cmt>` + secret + `</cmt><desc>` + secret + `</desc></wpt>
 <rte><name>` + secret + `</name><rtept lat="1" lon="2"><name>` + secret + `</name></rtept></rte>
 <trk><name>` + secret + `</name><cmt>` + secret + `</cmt><desc>` + secret + `</desc><src>` + secret + `</src><link href="https://example.com/` + secret + `"><text>` + secret + `</text></link><type>` + secret + `</type>
  <trkseg>
   <trkpt lat="39.9" lon="116.3"><time>2008-10-23T02:53:04Z</time><name>` + secret + `</name><cmt>` + secret + `</cmt><desc>` + secret + `</desc><src>` + secret + `</src><link href="https://example.com/` + secret + `"><text>` + secret + `</text></link><sym>` + secret + `</sym><type>` + secret + `</type></trkpt>
   <trkpt lat="39.91" lon="116.31"><time>2008-10-23T02:53:05Z</time></trkpt>
  </trkseg>
 </trk>
</gpx>`
	gj := `{"type": "FeatureCollection", "name": "` + secret + `", "features": [
 {"type": "Feature", "id": "` + secret + `", "properties": {"name": "` + secret + `", "desc": "` + secret + `", "description": "` + secret + `", "title": "` + secret + `", "times": [1, 2]},
  "geometry": {"type": "LineString", "coordinates": [[116.3, 39.9], [116.31, 39.91]]}},
 {"type": "Feature", "properties": {"name": "` + secret + `", "coordinateProperties": {"times": [[1, 2], [3]]}},
  "geometry": {"type": "MultiLineString", "coordinates": [[[116.3, 39.9], [116.31, 39.91]], [[116.4, 39.8]]]}}]}`
	for _, tc := range []struct {
		f  Format
		in string
	}{{GPX, gpx}, {GeoJSON, gj}} {
		traces, _, err := read(t, tc.f, tc.in, ReadOptions{Strict: true})
		if err != nil || len(traces) == 0 {
			t.Fatalf("%s: %v", tc.f, err)
		}
		for _, tr := range traces {
			if strings.Contains(tr.Name+tr.UID, "Alice") {
				t.Errorf("%s: trace %q %q holds the free text", tc.f, tr.UID, tr.Name)
			}
			for _, p := range tr.Points {
				for k, v := range p.Attrs {
					if strings.Contains(k+v, "Alice") {
						t.Errorf("%s: attribute %q=%q holds the free text", tc.f, k, v)
					}
				}
			}
		}
		// A program's own name for a trace is not written either.
		traces[0].Name = secret
		for _, out := range Formats {
			var b bytes.Buffer
			if err := Write(&b, traces[:1], out); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b.Bytes(), []byte("Alice")) {
				t.Errorf("%s written as %s holds the free text:\n%s", tc.f, out, b.String())
			}
		}
	}
}
