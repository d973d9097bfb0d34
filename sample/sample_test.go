package sample

import (
	"bytes"
	"testing"

	isample "github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// TestTraces: every file of the corpus arrives once, with its person, and
// the first trace is the demo's; each call returns a fresh copy.
func TestTraces(t *testing.T) {
	a, err := Traces()
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(isample.PLT), trace.PLT, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	demo, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 4 || a[0].UID != isample.UID || a[0].Name != isample.Path || a[0].Len() != demo.Len() || !a[0].Points[0].Time.Equal(demo.Points[0].Time) {
		t.Fatalf("traces %d, first %s %s %d points; want 4, the demo trace %s (%d points)", len(a), a[0].UID, a[0].Name, a[0].Len(), isample.Path, demo.Len())
	}
	people := map[string]int{}
	for _, tr := range a {
		people[tr.UID]++
	}
	if people["synth-1"] != 2 || people["synth-2"] != 1 || people["synth-3"] != 1 {
		t.Errorf("people %v", people)
	}
	a[0].Points[0].Lat = 0
	b, _ := Traces()
	if b[0].Points[0].Lat == 0 {
		t.Error("Traces returned shared points")
	}
	p, err := Prior()
	if err != nil || p.Validate() != nil || p.Origin == nil {
		t.Fatalf("prior %+v: %v", p, err)
	}
}
