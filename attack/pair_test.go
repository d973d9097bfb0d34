package attack

import (
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// TestPairTraces pairs released traces with originals by their timestamps,
// whatever the order and with other traces beside them, and refuses a
// release without an original.
func TestPairTraces(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	mk := func(uid string, start, n int) *trace.Trace {
		tr := &trace.Trace{UID: uid}
		for i := range n {
			tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(start+i) * time.Second)})
		}
		return tr
	}
	a, b, c := mk("a", 0, 5), mk("b", 100, 5), mk("c", 0, 6)
	ra, rb := mk("ra", 0, 5), mk("rb", 100, 5)
	got, err := PairTraces([]*trace.Trace{c, b, a}, []*trace.Trace{ra, rb})
	if err != nil || got[0] != a || got[1] != b {
		t.Fatalf("PairTraces = %v, %v; want a, b", got, err)
	}
	// In order: truth itself.
	if got, err := PairTraces([]*trace.Trace{a, b}, []*trace.Trace{ra, rb}); err != nil || got[0] != a || got[1] != b {
		t.Errorf("in order: %v, %v", got, err)
	}
	// Each original is used once.
	if _, err := PairTraces([]*trace.Trace{a, c}, []*trace.Trace{ra, mk("ra2", 0, 5)}); err == nil {
		t.Error("one original paired with two releases")
	}
	if _, err := PairTraces([]*trace.Trace{a}, []*trace.Trace{mk("x", 1, 5)}); err == nil {
		t.Error("a release with shifted timestamps was paired")
	}
}
