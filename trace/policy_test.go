package trace

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPolicyEveryFormat checks that the same dirty rows get the same
// treatment in every format: one exact repeat merged, one repeated time,
// one backward time and one bad coordinate skipped, the first fix at a
// repeated time kept.
func TestPolicyEveryFormat(t *testing.T) {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	type row struct {
		sec      int
		lat, lon string
	}
	rows := []row{
		{0, "39.9841", "116.3185"},
		{5, "39.9842", "116.3186"},
		{5, "39.9842", "116.3186"}, // exact repeat: merged
		{5, "39.9900", "116.3186"}, // repeated time elsewhere: skipped
		{3, "39.9843", "116.3187"}, // backwards: skipped
		{10, "91", "116.3187"},     // latitude out of range: skipped
		{15, "39.9844", "116.3188"},
	}
	ts := func(r row) time.Time { return t0.Add(time.Duration(r.sec) * time.Second) }
	var csvIn, gpxIn, plt strings.Builder
	csvIn.WriteString("uid,time,lat,lon\n")
	gpxIn.WriteString("<gpx version=\"1.1\"><trk><trkseg>\n")
	plt.WriteString(pltHead)
	var coords, times []string
	for _, r := range rows {
		tt := ts(r)
		csvIn.WriteString("u," + tt.Format(time.RFC3339) + "," + r.lat + "," + r.lon + "\n")
		gpxIn.WriteString(`<trkpt lat="` + r.lat + `" lon="` + r.lon + `"><time>` + tt.Format(time.RFC3339) + "</time></trkpt>\n")
		plt.WriteString(r.lat + "," + r.lon + ",0,-777,," + tt.Format("2006-01-02,15:04:05") + "\n")
		coords = append(coords, "["+r.lon+","+r.lat+"]")
		times = append(times, `"`+tt.Format(time.RFC3339)+`"`)
	}
	gpxIn.WriteString("</trkseg></trk></gpx>\n")
	gj := `{"type":"Feature","geometry":{"type":"LineString","coordinates":[` + strings.Join(coords, ",") +
		`]},"properties":{"uid":"u","times":[` + strings.Join(times, ",") + "]}}\n"
	want := map[Reason]int{ReasonDuplicate: 1, ReasonRepeatedTime: 1, ReasonTimeBackward: 1, ReasonBadCoordinate: 1}
	for f, in := range map[Format]string{CSV: csvIn.String(), GPX: gpxIn.String(), PLT: plt.String(), GeoJSON: gj} {
		traces, rep, err := read(t, f, in, ReadOptions{UID: "u"})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(traces) != 1 || traces[0].Len() != 3 || rep.Read != 3 {
			t.Fatalf("%s: %d traces, report %v", f, len(traces), rep)
		}
		if got := traces[0].Points[1].Lat; got != 39.9842 {
			t.Errorf("%s: kept %v at the repeated time, want the first fix", f, got)
		}
		if by := rep.ByReason(); !maps.Equal(by, want) || rep.SkippedRows() != 4 || rep.Skipped != 3 || rep.Deduplicated != 1 {
			t.Errorf("%s: by reason %v (skipped %d, merged %d), want %v", f, by, rep.Skipped, rep.Deduplicated, want)
		}
		if err := traces[0].Validate(); err != nil {
			t.Errorf("%s: the trace read is not well formed: %v", f, err)
		}
		// Strictly, the repeated time stops reading (the exact repeat does
		// not).
		_, _, err = read(t, f, in, ReadOptions{UID: "u", Strict: true})
		var pe *ParseError
		if !errors.Is(err, ErrTimeConflict) || !errors.As(err, &pe) || !pe.Skippable() {
			t.Errorf("%s strict: %v, want a repeated-time error on a skippable row", f, err)
		}
	}
}

func TestNonFiniteCoordinate(t *testing.T) {
	in := "uid,time,lat,lon\na,1,NaN,116.3\na,2,39.9,+Inf\na,3,39.9,1e400\na,4,39.9,116.3\n"
	traces, rep, err := read(t, CSV, in, ReadOptions{})
	if err != nil || traces[0].Len() != 1 || rep.ByReason()[ReasonBadCoordinate] != 3 {
		t.Fatalf("%v: report %v", err, rep)
	}
	for _, p := range rep.Problems {
		if !errors.Is(p, ErrNotFinite) {
			t.Errorf("%v does not wrap ErrNotFinite", p)
		}
	}
}

func TestReadGPXCut(t *testing.T) {
	const head = "<gpx version=\"1.1\"><trk><trkseg>\n"
	pt := func(s int) string {
		return `<trkpt lat="39.98" lon="116.31"><time>2008-10-23T02:53:0` + string(rune('0'+s)) + "Z</time></trkpt>\n"
	}
	for _, tc := range []struct {
		name string
		in   string
		pts  int
		lost int
	}{
		{"inside a fix", head + pt(1) + pt(2) + `<trkpt lat="39.98" lon="116.31"><time>2008-10-23T02:5`, 2, 1},
		{"between fixes", head + pt(1) + pt(2), 2, 0},
		{"after the segment", head + pt(1) + "</trkseg></trk>\n", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traces, rep, err := read(t, GPX, tc.in, ReadOptions{Name: "x.gpx"})
			if err != nil {
				t.Fatal(err)
			}
			if len(traces) != 1 || traces[0].Len() != tc.pts || !rep.Truncated || rep.Skipped != tc.lost || len(rep.Problems) != 1 {
				t.Fatalf("%d traces, report %v", len(traces), rep)
			}
			if !strings.Contains(rep.Problems[0].Error(), "x.gpx:") || rep.Problems[0].Reason() != ReasonTruncated {
				t.Errorf("problem %v", rep.Problems[0])
			}
			if _, _, err := read(t, GPX, tc.in, ReadOptions{Strict: true}); !errors.Is(err, ErrTruncated) {
				t.Errorf("strict: %v", err)
			}
		})
	}
	// Without a root element nothing can be salvaged.
	if _, _, err := read(t, GPX, "", ReadOptions{}); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty GPX: %v", err)
	}
}

func TestReportJSONAndAdd(t *testing.T) {
	_, a, _ := read(t, PLT, pltHead+pltRows+strings.Split(pltRows, "\n")[2]+"\ngarbage\n", ReadOptions{Name: "a.plt"})
	_, b, _ := read(t, CSV, "uid,time,lat,lon\na,1,95,1\na,2,1,1", ReadOptions{Name: "b.csv"})
	if a.SkippedRows() != 2 || b.SkippedRows() != 2 {
		t.Fatalf("a %v, b %v", a, b)
	}
	sum := &Report{}
	sum.Add(a)
	sum.Add(b)
	want := map[Reason]int{ReasonDuplicate: 1, ReasonMalformed: 1, ReasonBadCoordinate: 1, ReasonTruncated: 1}
	if !maps.Equal(sum.ByReason(), want) || sum.SkippedRows() != 4 || sum.Read != a.Read+b.Read || len(sum.Problems) != 4 || !sum.Truncated {
		t.Errorf("sum %v, by reason %v", sum, sum.ByReason())
	}
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if m["skipped_rows"] != 4.0 || m["skipped"] != 3.0 || m["deduplicated"] != 1.0 {
		t.Errorf("JSON %s", js)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil || !maps.Equal(back.ByReason(), want) || back.SkippedRows() != 4 {
		t.Errorf("JSON round trip: %v, %v", err, back.ByReason())
	}
	// A report with counts set by hand still adds up.
	old := Report{Skipped: 2, Deduplicated: 1}
	if by := old.ByReason(); by[ReasonMalformed] != 2 || by[ReasonDuplicate] != 1 {
		t.Errorf("hand-made report by reason %v", by)
	}
}

func TestFilesAndReadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("000/a.plt", pltHead+pltRows)
	bad := write("000/b.PLT", "Geolife trajectory\n") // a header cut short
	write("000/notes.txt", "not a trace")
	write("000/a.plt.cert.json", `{"version": 1, "epsilon_max": 1}`)
	cut := write("001/c.csv", "uid,time,lat,lon\nx,1,1,1\nx,2,1,1")
	files, ignored, err := Files(dir)
	if err != nil || len(files) != 3 || len(ignored) != 2 || files[0] != good || files[1] != bad || files[2] != cut {
		t.Fatalf("files %v, ignored %v, %v", files, ignored, err)
	}
	if _, _, err := Files(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing path: %v", err)
	}
	if _, _, err := Files(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no trace files") {
		t.Errorf("empty directory: %v", err)
	}
	var got []string
	rep, err := ReadFiles(files, ReadOptions{}, func(path string, ts []*Trace) { got = append(got, path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || rep.Files != 3 || len(rep.SkippedFiles) != 1 || rep.SkippedFiles[0].File != bad || rep.Traces != 2 || rep.Read != 4 ||
		rep.ByReason()[ReasonTruncated] != 1 {
		t.Errorf("read %v, report %v (skipped files %v)", got, rep, rep.SkippedFiles)
	}
	var pe *ParseError
	if _, err := ReadFiles(files, ReadOptions{Strict: true}, nil); !errors.Is(err, ErrTruncated) || !errors.As(err, &pe) || pe.Skippable() {
		t.Errorf("strict corpus: %v, want the unskippable error of the file with a cut header", err)
	}
	// A directory or a missing file where a file is expected says so.
	if _, _, err := ReadFile(dir, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := FormatFromPath(filepath.Join(dir, "000")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("FormatFromPath of a directory: %v", err)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "nope.plt"), ReadOptions{}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "no such file (check the path)") {
		t.Errorf("missing file: %v", err)
	}
}

func TestCheck(t *testing.T) {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	at := func(s float64, lat float64) Point {
		return Point{Time: t0.Add(time.Duration(s * float64(time.Second))), Lat: lat, Lon: 116.3, Alt: math.NaN()}
	}
	// 0.001 degrees of latitude is 111.2 m: 5 s for it is 80 km/h; the fix
	// at 10 s jumps 10 km away and back (two steps at 7,200 km/h); then a
	// 20-minute gap and a repeated position.
	tr := &Trace{Points: []Point{at(0, 39.9), at(5, 39.901), at(10, 39.991), at(15, 39.902), at(1215, 39.903), at(1220, 39.903)}}
	p := Check(tr, Limits{})
	if p.Limits != DefaultLimits() || p.SpeedJumps != 2 || len(p.Jumps) != 2 || p.Jumps[0].Index != 2 || p.Fastest.Index != 2 ||
		p.Gaps != 1 || p.Longest.Index != 4 || p.Longest.Seconds != 1200 || p.RepeatedPositions != 1 || p.OK() {
		t.Errorf("%+v", p)
	}
	if s := p.String(); !strings.Contains(s, "2 speed jumps over 300 km/h") || !strings.Contains(s, "1 gap over 10m0s (longest 20m0s)") {
		t.Errorf("summary %q", s)
	}
	// The filters agree with the check.
	f, n := tr.FilterSpeed(DefaultMaxSpeed)
	if n != 1 || !Check(f, Limits{}).OK() {
		t.Errorf("FilterSpeed dropped %d: %+v", n, Check(f, Limits{}))
	}
	d, n := tr.DropRepeatedPositions()
	if n != 1 || Check(d, Limits{}).RepeatedPositions != 0 {
		t.Errorf("DropRepeatedPositions dropped %d", n)
	}
	if segs := tr.Segment(DefaultMaxGap); len(segs) != 2 {
		t.Errorf("%d segments at gaps", len(segs))
	}
	// Thresholds change the verdict; JSON states them in SI units.
	if p := Check(tr, Limits{MaxSpeed: 10000 / 3.6, MaxGap: time.Hour}); !p.OK() || p.Gaps != 0 {
		t.Errorf("loose limits: %+v", p)
	}
	js, _ := json.Marshal(p)
	if !strings.Contains(string(js), `"limits":{"max_speed_mps":83.33333333333333,"max_gap_s":600}`) {
		t.Errorf("JSON %s", js)
	}
	if err := (Limits{MaxSpeed: -1, MaxGap: time.Minute}).Validate(); err == nil {
		t.Error("negative speed accepted")
	}
	if p := Check(&Trace{Points: tr.Points[:1]}, Limits{}); p.Fastest != nil || p.Longest != nil || !p.OK() {
		t.Errorf("one point: %+v", p)
	}
}
