package trace

import (
	"testing"
	"time"
)

func TestThinEachAndCounts(t *testing.T) {
	t0 := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	mk := func(uid string, n int) *Trace {
		tr := &Trace{UID: uid}
		for i := range n {
			tr.Points = append(tr.Points, Point{Lat: 39.9, Lon: 116.3 + 1e-4*float64(i), Time: t0.Add(time.Duration(i) * 10 * time.Second)})
		}
		return tr
	}
	in := []*Trace{mk("b", 7), mk("a", 3), mk("b", 2)}
	if got := ThinEach(in, 0); &got[0] != &in[0] {
		t.Error("ThinEach 0 copied")
	}
	th := ThinEach(in, 30*time.Second)
	for i, tr := range th {
		if want := in[i].Thin(30 * time.Second).Len(); tr.Len() != want || tr.UID != in[i].UID {
			t.Errorf("trace %d: %d points of %s, want %d", i, tr.Len(), tr.UID, want)
		}
	}
	if Points(in) != 12 || Points(th) != 3+1+1 {
		t.Errorf("points %d and %d", Points(in), Points(th))
	}
	c := CountPersons(in)
	if len(c) != 2 || c[0] != (PersonCount{UID: "a", Files: 1, Points: 3}) || c[1] != (PersonCount{UID: "b", Files: 1, Points: 9}) {
		t.Errorf("CountPersons: %+v", c)
	}
}
