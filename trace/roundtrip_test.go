package trace

import (
	"bytes"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// sampleTraces exercise what the multi-trace formats must carry: several
// uids, sub-second times, unknown and known altitudes, attributes and
// awkward characters.
func sampleTraces() []*Trace {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	return []*Trace{
		{UID: "000", Name: "a", Points: []Point{
			{Time: t0, Lat: 39.930702, Lon: 116.376417, Alt: 149.9616},
			{Time: t0.Add(1500 * time.Millisecond), Lat: 39.930683, Lon: 116.37645, Alt: math.NaN(), Attrs: map[string]string{"mode": "walk", "note": "x, \"y\" <z> & é"}},
			{Time: t0.Add(3*time.Second + 123456789), Lat: -0.000001, Lon: -179.9999999, Alt: -12.5, Attrs: map[string]string{"mode": "bus"}},
		}},
		{UID: "u 2", Name: "b", Points: []Point{
			{Time: t0.Add(time.Hour), Lat: 1.0000000001, Lon: 2, Alt: 3},
			{Time: t0.Add(time.Hour + time.Second), Lat: 89.9999, Lon: 180, Alt: 4},
		}},
	}
}

func writeAll(t testing.TB, f Format, traces []*Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := newWriter(&b, f, attrKeys(traces...))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		if err := w.Write(tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// comparePoints checks positions within tolDeg, times within tolTime and
// altitudes within tolAlt; with attrs it also compares attributes.
func comparePoints(t testing.TB, what string, got, want []Point, tolDeg float64, tolTime time.Duration, tolAlt float64, attrs bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d points, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		dt := g.Time.Sub(w.Time)
		if math.Abs(g.Lat-w.Lat) > tolDeg || math.Abs(g.Lon-w.Lon) > tolDeg || dt > tolTime || dt < -tolTime || !sameAlt(g.Alt, w.Alt, tolAlt) {
			t.Fatalf("%s: point %d is %+v, want %+v", what, i, g, w)
		}
		if attrs && !maps.Equal(g.Attrs, w.Attrs) {
			t.Fatalf("%s: point %d attrs %v, want %v", what, i, g.Attrs, w.Attrs)
		}
	}
}

func TestRoundTripMultiTrace(t *testing.T) {
	want := sampleTraces()
	for _, f := range []Format{CSV, GeoJSON, GPX} {
		got, rep, err := read(t, f, string(writeAll(t, f, want)), ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(got) != len(want) || rep.Read != 5 {
			t.Fatalf("%s: %d traces, report %+v", f, len(got), rep)
		}
		for i := range want {
			if got[i].UID != want[i].UID {
				t.Errorf("%s: uid %q, want %q", f, got[i].UID, want[i].UID)
			}
			// Names are neither written nor read (Trace.Name).
			if got[i].Name != "" {
				t.Errorf("%s: name %q read back, want none", f, got[i].Name)
			}
			// These formats hold coordinates, times and attributes exactly,
			// except that GPX writes longitude 180 as -180.
			wantPts := want[i].Points
			if f == GPX && i == 1 {
				wantPts = append([]Point(nil), wantPts...)
				wantPts[1].Lon = -180
			}
			comparePoints(t, string(f), got[i].Points, wantPts, 0, 0, 0, true)
		}
	}
	// PLT holds one trace, no attributes, milliseconds and 1e-6 ft.
	tr := sampleTraces()[0]
	got, _, err := read(t, PLT, string(writeAll(t, PLT, []*Trace{tr})), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantPts := tr.Points
	wantPts[2].Time = wantPts[2].Time.Round(time.Millisecond)
	comparePoints(t, "plt", got[0].Points, wantPts, 0, 0, 1e-6*feet, false)
}

func TestReadWriteFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x.csv", "x.geojson", "x.json", "x.gpx"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, sampleTraces(), ""); err != nil {
			t.Fatal(err)
		}
		got, rep, err := ReadFile(path, ReadOptions{})
		if err != nil || len(got) != 2 || rep.Read != 5 {
			t.Fatalf("%s: %d traces, report %+v, %v", name, len(got), rep, err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "x.plt"), sampleTraces(), ""); err == nil {
		t.Error("two traces written to one PLT file")
	}
	if err := WriteFile(filepath.Join(dir, "x.kml"), sampleTraces(), ""); err == nil {
		t.Error("unknown extension accepted")
	}
	// Forcing a format overrides the extension.
	if err := WriteFile(filepath.Join(dir, "x.txt"), sampleTraces(), CSV); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "x.txt"), ReadOptions{Format: CSV}); err != nil {
		t.Fatal(err)
	}
	// ReadFile names the file in errors and sets PLT uid and name.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("uid,time,lat,lon\na,1,2,x\n"), 0o644)
	if _, _, err := ReadFile(bad, ReadOptions{Strict: true}); err == nil || err.Error() != bad+`:2: field "lon": "x" is not a number` {
		t.Errorf("error %v", err)
	}
	got, _, err := ReadFile("testdata/plt/synth-1/20240312002332.plt", ReadOptions{})
	if err != nil || got[0].UID != "synth-1" || got[0].Name != "20240312002332" {
		t.Errorf("PLT fixture: %v", err)
	}
}

// TestGeoLifeConversions converts every GeoLife file of ../shared/data
// PLT -> GeoJSON -> GPX -> CSV -> PLT and checks that the points survive
// (issue 2 asks for 1e-7 degrees and 1 s; the formats in fact carry
// coordinates exactly). With -short it converts each user's first file
// (eight files; the full suite converts all 78): exactness is a property
// of the writers, which TestRoundTripMultiTrace checks on awkward values
// (sub-second times, extreme coordinates, unknown altitudes) either way.
func TestGeoLifeConversions(t *testing.T) {
	files, _ := filepath.Glob("../../shared/data/geolife/*/*.plt")
	if len(files) == 0 {
		t.Skip("GeoLife data not found in ../../shared/data/geolife")
	}
	if testing.Short() {
		first := map[string]bool{}
		files = slices.DeleteFunc(files, func(f string) bool {
			u := filepath.Dir(f)
			if first[u] {
				return true
			}
			first[u] = true
			return false
		})
	}
	points := 0
	for _, path := range files {
		orig, _, err := ReadFile(path, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur := orig
		for _, f := range []Format{GeoJSON, GPX, CSV, PLT} {
			r, _ := NewReader(bytes.NewReader(writeAll(t, f, cur)), f, ReadOptions{Name: path + "." + string(f)})
			if cur, err = ReadAll(r); err != nil {
				t.Fatalf("%s as %s: %v", path, f, err)
			}
			if len(cur) != 1 || cur[0].UID != orig[0].UID && f != PLT {
				t.Fatalf("%s as %s: %d traces or a changed uid", path, f, len(cur))
			}
		}
		comparePoints(t, path, cur[0].Points, orig[0].Points, 1e-7, time.Second, 1e-6*feet, false)
		comparePoints(t, path+" (exact)", cur[0].Points, orig[0].Points, 0, 0, 1e-6*feet, false)
		points += orig[0].Len()
	}
	t.Logf("%d files, %d points converted", len(files), points)
}

func TestFormats(t *testing.T) {
	// A gzip file's format is that of the name without .gz (issue 32).
	for in, want := range map[string]Format{"a/b.PLT": PLT, "x.csv": CSV, "x.geojson": GeoJSON, "x.json": GeoJSON, "x.gpx": GPX, "x.plt.gz": PLT, "x.CSV.GZ": CSV} {
		if got, err := FormatFromPath(in); got != want || err != nil {
			t.Errorf("FormatFromPath(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"x", "x.kml", "x.gz", "x.kml.gz"} {
		if _, err := FormatFromPath(bad); err == nil {
			t.Errorf("FormatFromPath(%q) succeeded", bad)
		}
	}
	for _, f := range Formats {
		if got, err := ParseFormat(" " + string(f)); got != f || err != nil {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := NewReader(nil, "kml", ReadOptions{}); err == nil {
		t.Error("NewReader accepted kml")
	}
	if _, err := NewWriter(nil, "kml"); err == nil {
		t.Error("NewWriter accepted kml")
	}
}
