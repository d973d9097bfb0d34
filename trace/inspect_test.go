package trace

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestInspect: a trace with a jump faster than the limit is well formed
// but implausible, and the text names it and the jump; a steady walk is
// plausible; one file gives File and one format Format.
func TestInspect(t *testing.T) {
	t0 := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	walk := &Trace{UID: "a", Name: "walk"}
	jump := &Trace{UID: "b", Name: "jump"}
	for i := range 10 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		walk.Points = append(walk.Points, Point{Time: at, Lat: 39.9 + 1e-4*float64(i), Lon: 116.3})
		lat := 39.9
		if i == 5 {
			lat = 40.9 // about 111 km in 10 s
		}
		jump.Points = append(jump.Points, Point{Time: at, Lat: lat, Lon: 116.3})
	}
	lim := Limits{MaxSpeed: DefaultMaxSpeed, MaxGap: DefaultMaxGap}
	res := Inspect([]string{"x.csv"}, map[Format]bool{CSV: true}, []*Trace{walk, jump}, &Report{}, lim)
	if res.File != "x.csv" || res.Format != CSV || len(res.Traces) != 2 {
		t.Fatalf("inspection %+v", res)
	}
	if w, j := res.Traces[0], res.Traces[1]; !w.Valid || !w.Plausible || !j.Valid || j.Plausible || j.Plausibility.SpeedJumps == 0 {
		t.Fatalf("walk %+v, jump %+v", w, j)
	}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "trace b/jump is implausible") || strings.Contains(out, "a/walk is") {
		t.Errorf("text:\n%s", out)
	}
	two := Inspect([]string{"x.csv", "y.plt"}, map[Format]bool{CSV: true, PLT: true}, nil, &Report{}, lim)
	if two.File != "" || two.Format != "" {
		t.Errorf("two files of two formats: %+v", two)
	}
}
