package trace

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"strings"
	"testing"
	"time"
)

func TestReadCSV(t *testing.T) {
	in := "\ufeffUser, T ,Latitude,Lng,Elevation,speed\n" +
		"a,1224730384,39.9,116.3,50,1.5\n" +
		"a,1224730385.123456789,39.91,116.31,,\n" +
		"a,2008-10-23T10:53:06+08:00,39.92,116.32,,2\n" +
		"b,2008-10-23 02:53:07,39.93,116.33,,\n" +
		"b,2008-10-23T02:53:08.5Z,39.94,116.34,,\n" +
		"a,2008-10-23T02:53:09Z,39.95,116.35,,\n"
	traces, rep, err := read(t, CSV, in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 3 || rep.Traces != 3 || rep.Read != 6 {
		t.Fatalf("%d traces, report %+v", len(traces), rep)
	}
	// A uid run per trace: a, b, then a again.
	for i, want := range []struct {
		uid string
		n   int
	}{{"a", 3}, {"b", 2}, {"a", 1}} {
		if traces[i].UID != want.uid || traces[i].Len() != want.n {
			t.Errorf("trace %d: uid %q with %d points, want %q with %d", i, traces[i].UID, traces[i].Len(), want.uid, want.n)
		}
	}
	a := traces[0].Points
	// 1224730384 s after the Unix epoch is 2008-10-23T02:53:04Z.
	times := []time.Time{
		time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC),
		time.Date(2008, 10, 23, 2, 53, 5, 123456789, time.UTC),
		time.Date(2008, 10, 23, 2, 53, 6, 0, time.UTC),
	}
	for i, want := range times {
		if !a[i].Time.Equal(want) {
			t.Errorf("point %d time %v, want %v", i, a[i].Time, want)
		}
	}
	if a[0].Alt != 50 || !math.IsNaN(a[1].Alt) {
		t.Errorf("altitudes %v, %v; want 50, NaN", a[0].Alt, a[1].Alt)
	}
	if a[0].Attrs["speed"] != "1.5" || a[1].Attrs != nil || a[2].Attrs["speed"] != "2" {
		t.Errorf("attrs %v %v %v", a[0].Attrs, a[1].Attrs, a[2].Attrs)
	}
	if got, want := traces[1].Points[1].Time, time.Date(2008, 10, 23, 2, 53, 8, 5e8, time.UTC); !got.Equal(want) {
		t.Errorf("time %v, want %v", got, want)
	}
}

func TestReadCSVDefaults(t *testing.T) {
	// No uid column: the option's uid. Zone-less times: the option's zone.
	zone := time.FixedZone("UTC+8", 8*3600)
	traces, _, err := read(t, CSV, "time,lat,lon\n2008-10-23T10:53:04,1,2\n", ReadOptions{UID: "u", Location: zone})
	if err != nil {
		t.Fatal(err)
	}
	if traces[0].UID != "u" || !traces[0].Points[0].Time.Equal(time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)) {
		t.Errorf("got %q %v", traces[0].UID, traces[0].Points[0].Time)
	}
	// A header only: no traces, no error.
	traces, _, err = read(t, CSV, "uid,time,lat,lon\n", ReadOptions{})
	if err != nil || len(traces) != 0 {
		t.Errorf("header only: %d traces, %v", len(traces), err)
	}
}

func TestReadCSVLenient(t *testing.T) {
	in := "uid,time,lat,lon\n" +
		"a,1,1,1\n" +
		"a,2,x,1\n" +
		"a,3,1\n" +
		"a,3,1,1\n" +
		"a,3,1,1\n" +
		"a,\"4,1,1\n"
	traces, rep, err := read(t, CSV, in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if traces[0].Len() != 2 || rep.Skipped != 3 || rep.Deduplicated != 1 || rep.SkippedRows() != 4 {
		t.Fatalf("%d points, report %+v", traces[0].Len(), rep)
	}
	if by := rep.ByReason(); !maps.Equal(by, map[Reason]int{ReasonMalformed: 3, ReasonDuplicate: 1}) {
		t.Errorf("by reason %v", by)
	}
	for i, line := range []int{3, 4, 6, 7} {
		if rep.Problems[i].Line != line {
			t.Errorf("problem %d on line %d, want %d: %v", i, rep.Problems[i].Line, line, rep.Problems[i])
		}
	}
}

// TestReadCSVCut checks that a last row without a line end is skipped as
// cut, even when it parses, and that strict mode names the cut.
func TestReadCSVCut(t *testing.T) {
	const whole = "uid,time,lat,lon\na,1,39.9841,116.3185\na,2,39.9842,116.3186\n"
	for _, tc := range []struct {
		name string
		in   string
		pts  int
		cut  bool
	}{
		{"whole", whole, 2, false},
		{"cut in the last number", whole[:len(whole)-3], 1, true},
		{"cut after a field", whole[:len(whole)-10], 1, true},
		{"no line end at all", "uid,time,lat,lon\na,1,39.9841,116.3185", 0, true},
		{"CRLF", strings.ReplaceAll(whole, "\n", "\r\n"), 2, false},
		{"header only, cut", "uid,time,lat,lon", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traces, rep, err := read(t, CSV, tc.in, ReadOptions{Name: "x.csv"})
			if tc.pts == 0 && tc.cut {
				// Its only row was cut: it holds no fix, which is refused.
				if !errors.Is(err, ErrNoFix) || !strings.Contains(err.Error(), "no line end") {
					t.Errorf("a file whose only row was cut: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, tr := range traces {
				n += tr.Len()
			}
			if n != tc.pts || rep.Truncated != tc.cut || (rep.ByReason()[ReasonTruncated] == 1) != tc.cut {
				t.Errorf("%d points, report %v (truncated %v)", n, rep, rep.Truncated)
			}
			_, _, err = read(t, CSV, tc.in, ReadOptions{Name: "x.csv", Strict: true})
			if tc.cut != (err != nil) || tc.cut && !errors.Is(err, ErrTruncated) {
				t.Errorf("strict: %v", err)
			}
			if tc.cut && !strings.Contains(err.Error(), "no line end") {
				t.Errorf("strict error does not say why: %v", err)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"0", time.Unix(0, 0)},
		{"1224730384", time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)},
		{"1224730384.5", time.Date(2008, 10, 23, 2, 53, 4, 5e8, time.UTC)},
		{"1224730384.0000000019", time.Date(2008, 10, 23, 2, 53, 4, 1, time.UTC)}, // truncated to ns
		{"-1.5", time.Unix(-2, 5e8)},
		{"2008-10-23T02:53:04.25-01:30", time.Date(2008, 10, 23, 4, 23, 4, 25e7, time.UTC)},
		{"2008-10-23 02:53:04Z", time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)},
		{"253402300799", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
	} {
		got, err := parseTime(tc.in, time.UTC)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "1.", ".5", "1e9", "2008-10-23", "12:00", "2008-10-23T02:53:04+25:00",
		"253402300800", "-62135596801", "0001-01-01T00:30:00+01:00"} { // years 10000, 0, 0
		if got, err := parseTime(bad, time.UTC); err == nil {
			t.Errorf("parseTime(%q) = %v, want an error", bad, got)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	tr := &Trace{UID: "u,1", Points: []Point{
		{Time: time.Date(2008, 10, 23, 2, 53, 4, 5e8, time.UTC), Lat: 39.9, Lon: 116.3, Alt: math.NaN(), Attrs: map[string]string{"note": "a \"b\"\nc"}},
		{Time: time.Date(2008, 10, 23, 2, 53, 5, 0, time.UTC), Lat: 1e-7, Lon: -0.1, Alt: 12.25},
	}}
	var b bytes.Buffer
	w, _ := NewWriter(&b, CSV)
	if err := w.Write(tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "uid,time,lat,lon,alt,note\n" +
		"\"u,1\",2008-10-23T02:53:04.5Z,39.9,116.3,,\"a \"\"b\"\"\nc\"\n" +
		"\"u,1\",2008-10-23T02:53:05Z,0.0000001,-0.1,12.25,\n"
	if b.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", b.String(), want)
	}
	// A later trace may not add columns.
	tr2 := &Trace{Points: []Point{{Time: time.Unix(1, 0), Attrs: map[string]string{"other": "x"}}}}
	if err := w.Write(tr2); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("new attribute column: %v", err)
	}
}
