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

func TestReadPLT(t *testing.T) {
	traces, rep, err := read(t, PLT, pltHead+pltRows, ReadOptions{UID: "000"})
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || rep.Traces != 1 || rep.Read != 3 || rep.Skipped != 0 {
		t.Fatalf("got %d traces, report %+v", len(traces), rep)
	}
	tr := traces[0]
	p := tr.Points[0]
	// 492 ft = 492 * 0.3048 m exactly = 149.9616 m.
	want := Point{Time: time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC), Lat: 39.930702, Lon: 116.376417, Alt: 149.9616}
	if !p.Time.Equal(want.Time) || p.Lat != want.Lat || p.Lon != want.Lon || math.Abs(p.Alt-want.Alt) > 1e-12 {
		t.Errorf("first point %+v, want %+v", p, want)
	}
	if tr.UID != "000" {
		t.Errorf("uid %q", tr.UID)
	}
	if !math.IsNaN(tr.Points[2].Alt) {
		t.Errorf("altitude -777 read as %v, want NaN", tr.Points[2].Alt)
	}
}

func TestReadPLTLocation(t *testing.T) {
	beijing := time.FixedZone("CST", 8*3600)
	traces, _, err := read(t, PLT, pltHead+pltRows, ReadOptions{Location: beijing})
	if err != nil {
		t.Fatal(err)
	}
	// 02:53:04 in UTC+8 is 18:53:04 UTC the day before.
	if got, want := traces[0].Points[0].Time, time.Date(2008, 10, 22, 18, 53, 4, 0, time.UTC); !got.Equal(want) {
		t.Errorf("time %v, want %v", got, want)
	}
}

func TestReadPLTDayNumber(t *testing.T) {
	// Without date and time, the day number alone gives the time:
	// 39744 days after 1899-12-30 is 2008-10-23, and
	// 0.1201851852 d = 10384.000001 s = 02:53:04 (to the millisecond).
	traces, _, err := read(t, PLT, pltHead+"39.9,116.3,0,1,39744.1201851852,,\n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := traces[0].Points[0].Time, time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC); !got.Equal(want) {
		t.Errorf("time %v, want %v", got, want)
	}
	// The day number refines the time column to the millisecond:
	// 39744.1201880787 d is 10384.25 s (to 4 µs), within a second of 02:53:04.
	traces, _, err = read(t, PLT, pltHead+"39.9,116.3,0,1,39744.1201880787,2008-10-23,02:53:04\n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := traces[0].Points[0].Time, time.Date(2008, 10, 23, 2, 53, 4, 250e6, time.UTC); !got.Equal(want) {
		t.Errorf("time %v, want %v", got, want)
	}
}

func TestWritePLTLayout(t *testing.T) {
	// Reading GeoLife rows and writing them back reproduces them byte for
	// byte, day numbers included.
	traces, _, err := read(t, PLT, pltHead+pltRows, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, _ := NewWriter(&b, PLT)
	if err := w.Write(traces[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b.String() != pltHead+pltRows {
		t.Errorf("wrote\n%s\nwant\n%s", b.String(), pltHead+pltRows)
	}
	if err := w.Write(traces[0]); err == nil {
		t.Error("a second trace was accepted in a PLT file")
	}
}

func TestPLTSubsecondRoundTrip(t *testing.T) {
	tr := &Trace{Points: []Point{
		{Time: time.Date(2020, 1, 2, 3, 4, 5, 250e6, time.UTC), Lat: 1, Lon: 2, Alt: 3},
		{Time: time.Date(2020, 1, 2, 3, 4, 5, 999e6, time.UTC), Lat: 1, Lon: 2, Alt: math.NaN()},
		{Time: time.Date(2020, 1, 2, 3, 4, 7, 1e6, time.UTC), Lat: -1.5, Lon: -2.25, Alt: -10.5},
	}}
	var b bytes.Buffer
	w, _ := NewWriter(&b, PLT)
	if err := w.Write(tr); err != nil {
		t.Fatal(err)
	}
	got, _, err := read(t, PLT, b.String(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got[0].Points {
		q := tr.Points[i]
		if !p.Time.Equal(q.Time) || p.Lat != q.Lat || p.Lon != q.Lon || !sameAlt(p.Alt, q.Alt, 1e-6) {
			t.Errorf("point %d: %+v, want %+v", i, p, q)
		}
	}
}

func TestReadPLTLenient(t *testing.T) {
	in := pltHead + "39.930702,116.376417,0,492,39744.1201851852,2008-10-23,02:53:04\n" +
		"garbage\n" +
		"39.930683,116.37645,0,492,39744.1202546296,2008-10-23,02:53:10\n" +
		"39.930683,116.37645,0,492,39744.1202546296,2008-10-23,02:53:10\n" + // exact repeat
		"39.930686,116.376417,0,492,39744.1202546296,2008-10-23,02:53:10\n" + // same time, elsewhere
		"39.930686,116.376417,0,492,39744.1201851852,2008-10-23,02:53:04\n" + // backwards
		"95.1,116.376417,0,492,39744.1203125,2008-10-23,02:53:15\n" + // latitude out of range
		"39.98"
	traces, rep, err := read(t, PLT, in, ReadOptions{Name: "x.plt"})
	if err != nil {
		t.Fatal(err)
	}
	if n := traces[0].Len(); n != 2 || rep.Read != 2 || rep.Skipped != 5 || rep.Deduplicated != 1 || len(rep.Problems) != 6 || !rep.Truncated {
		t.Fatalf("%d points, report %+v", n, rep)
	}
	want := map[Reason]int{ReasonMalformed: 1, ReasonDuplicate: 1, ReasonRepeatedTime: 1, ReasonTimeBackward: 1, ReasonBadCoordinate: 1, ReasonTruncated: 1}
	if by := rep.ByReason(); !maps.Equal(by, want) {
		t.Errorf("by reason %v, want %v", by, want)
	}
	for i, want := range []struct {
		line   int
		field  string
		reason Reason
	}{{8, "lon", ReasonMalformed}, {10, "", ReasonDuplicate}, {11, "time", ReasonRepeatedTime}, {12, "time", ReasonTimeBackward}, {13, "lat", ReasonBadCoordinate}, {14, "lon", ReasonTruncated}} {
		if p := rep.Problems[i]; p.Line != want.line || p.Field != want.field || p.Reason() != want.reason {
			t.Errorf("problem %d: %v (%s), want line %d field %q %s", i, p, p.Reason(), want.line, want.field, want.reason)
		}
	}
	if !strings.Contains(rep.Problems[2].Error(), "(line 9)") || !strings.Contains(rep.Problems[1].Error(), "(line 9)") {
		t.Errorf("repeats do not name the earlier line: %v; %v", rep.Problems[1], rep.Problems[2])
	}
	// Strict mode stops at the first bad row; exact repeats are merged in
	// both modes.
	_, _, err = read(t, PLT, in, ReadOptions{Name: "x.plt", Strict: true})
	if pe := (*ParseError)(nil); !errors.As(err, &pe) || pe.Line != 8 {
		t.Errorf("strict: %v", err)
	}
	_, srep, err := read(t, PLT, pltHead+pltRows+strings.Split(pltRows, "\n")[2]+"\n", ReadOptions{Strict: true})
	if err != nil || srep.Deduplicated != 1 || srep.Read != 3 {
		t.Errorf("strict with an exact repeat: %v, %+v", err, srep)
	}
}

func TestGeolifeUser(t *testing.T) {
	for in, want := range map[string]string{
		"data/geolife/000/Trajectory/x.plt": "000",
		"data/geolife/003/x.plt":            "003",
		"x.plt":                             "",
	} {
		if got := UserDir(in); got != want {
			t.Errorf("UserDir(%q) = %q, want %q", in, got, want)
		}
	}
}

// sameAlt compares altitudes, NaN matching NaN.
func sameAlt(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}
