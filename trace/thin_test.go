package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// keptSeconds returns the times of t's points in seconds after t0.
func keptSeconds(t *Trace) []float64 {
	var s []float64
	for _, p := range t.Points {
		s = append(s, p.Time.Sub(t0).Seconds())
	}
	return s
}

func TestThin(t *testing.T) {
	for _, c := range []struct {
		name  string
		times []float64
		every time.Duration
		want  []float64
	}{
		{"1 Hz", seq(0, 179), time.Minute, []float64{0, 60, 120}},
		{"exact period", []float64{0, 30, 60, 90, 120}, time.Minute, []float64{0, 60, 120}},
		// 59 is too early; 61 opens the next period, so 119 is too early
		// for it and 200 comes after a gap.
		{"irregular", []float64{0, 1, 2, 59, 61, 62, 119, 200, 201}, time.Minute, []float64{0, 61, 200}},
		// A gap longer than every: the first fix after it is kept.
		{"gap", []float64{0, 5, 10, 1000, 1005, 1065}, time.Minute, []float64{0, 1000, 1065}},
		{"sub-second", []float64{0, 0.4, 0.8, 1.2, 1.6, 2.0}, time.Second, []float64{0, 1.2}},
		{"one point", []float64{7}, time.Hour, []float64{7}},
		{"empty", nil, time.Minute, nil},
		{"every 0 keeps all", []float64{0, 1, 2}, 0, []float64{0, 1, 2}},
		{"negative keeps all", []float64{0, 1, 2}, -time.Second, []float64{0, 1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := at(c.times...)
			got := tr.Thin(c.every)
			if s := keptSeconds(got); !slices.Equal(s, c.want) {
				t.Errorf("kept %v, want %v", s, c.want)
			}
			if got.UID != tr.UID || got.Name != tr.Name {
				t.Errorf("uid %q name %q", got.UID, got.Name)
			}
			if len(tr.Points) != len(c.times) {
				t.Errorf("input changed: %d points", len(tr.Points))
			}
		})
	}
}

// at builds a trace with fixes at the given seconds after t0, each at a
// distinct position with an attribute.
func at(secs ...float64) *Trace {
	tr := &Trace{UID: "u", Name: "n"}
	for i, s := range secs {
		tr.Points = append(tr.Points, Point{Time: t0.Add(time.Duration(s * float64(time.Second))),
			Lat: float64(i) * 1e-3, Lon: 116, Alt: float64(i), Attrs: map[string]string{"i": string(rune('a' + i%26))}})
	}
	return tr
}

func seq(a, b int) []float64 {
	var s []float64
	for i := a; i <= b; i++ {
		s = append(s, float64(i))
	}
	return s
}

// TestThinKeepsFixesUnchanged: kept fixes are the input's fixes, bit for
// bit, and the copy does not alias the input's slice.
func TestThinKeepsFixesUnchanged(t *testing.T) {
	tr := at(0, 10, 70, 75, 140)
	tr.Points[2].Alt = math.NaN()
	got := tr.Thin(time.Minute)
	want := []int{0, 2, 4}
	if len(got.Points) != len(want) {
		t.Fatalf("kept %d fixes, want %d", len(got.Points), len(want))
	}
	for k, i := range want {
		g, w := got.Points[k], tr.Points[i]
		if !g.Time.Equal(w.Time) || g.Lat != w.Lat || g.Lon != w.Lon || (g.Alt != w.Alt && !(math.IsNaN(g.Alt) && math.IsNaN(w.Alt))) || g.Attrs["i"] != w.Attrs["i"] {
			t.Errorf("fix %d: %+v, want input fix %d %+v", k, g, i, w)
		}
	}
	got.Points[0].Lat = 89
	if tr.Points[0].Lat != 0 {
		t.Error("Thin aliases the input's points")
	}
	all := tr.Thin(0)
	all.Points[1].Lat = 89
	if tr.Points[1].Lat == 89 {
		t.Error("Thin(0) aliases the input's points")
	}
}

// checkThinned returns what is wrong with got as a thinning of tr at
// every by the rule Thin documents, or "": the first fix is kept; kept
// fixes are fixes of tr, at least every apart; every dropped fix comes less
// than every after the last fix kept before it (nothing is dropped that
// should open a period), so the fix after a gap of at least every is kept;
// at most ⌊D/every⌋+1 fixes are kept over a duration D.
func checkThinned(tr, got *Trace, every time.Duration) string {
	n := len(tr.Points)
	if n == 0 {
		if len(got.Points) != 0 {
			return "fixes kept from an empty trace"
		}
		return ""
	}
	kept := make([]bool, n)
	j := 0
	for _, p := range got.Points {
		for j < n && !tr.Points[j].Time.Equal(p.Time) {
			j++
		}
		if j == n || tr.Points[j].Lat != p.Lat || tr.Points[j].Lon != p.Lon {
			return fmt.Sprintf("kept fix at %v is not an input fix in order", p.Time)
		}
		kept[j] = true
	}
	if !kept[0] {
		return "first fix dropped"
	}
	last, count := 0, 1
	for i := 1; i < n; i++ {
		d := tr.Points[i].Time.Sub(tr.Points[last].Time)
		switch {
		case kept[i] && d < every:
			return fmt.Sprintf("fix %d kept %v after the last kept fix (every %v)", i, d, every)
		case !kept[i] && d >= every:
			return fmt.Sprintf("fix %d dropped %v after the last kept fix (every %v)", i, d, every)
		}
		if kept[i] {
			last = i
			count++
		}
	}
	if most := int(tr.Duration()/every) + 1; count > most {
		return fmt.Sprintf("%d fixes kept over %v at every %v, at most %d", count, tr.Duration(), every, most)
	}
	return ""
}

// TestThinProperties checks Thin's documented rule (checkThinned) on
// random timestamps (1 Hz with jitter, dropouts and long gaps, as GPS
// loggers record them), and that thinning is idempotent, agrees piece by
// piece with Segment at gaps of at least every, and depends only on the
// timestamps: a trace with the same times at other positions keeps the
// same fixes.
func TestThinProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 300 {
		n := 1 + rng.IntN(3000)
		secs := make([]float64, n)
		s := 0.0
		for i := range secs {
			secs[i] = s
			switch u := rng.Float64(); {
			case u < 0.01:
				s += 60 + rng.Float64()*7200 // a gap
			case u < 0.1:
				s += float64(2 + rng.IntN(10)) // a dropout
			default:
				s += 1 + 0.01*rng.NormFloat64()*rng.Float64()
			}
		}
		every := time.Duration(1+rng.IntN(600)) * time.Second / time.Duration(1+rng.IntN(4))
		tr := at(secs...)
		got := tr.Thin(every)
		if msg := checkThinned(tr, got, every); msg != "" {
			t.Fatalf("case %d (%d fixes, every %v): %s", k, n, every, msg)
		}
		if again := got.Thin(every); !slices.Equal(keptSeconds(again), keptSeconds(got)) {
			t.Fatalf("case %d: thinning twice changed the trace", k)
		}
		var pieces []float64
		for _, seg := range tr.Segment(every - 1) { // splits at gaps >= every
			pieces = append(pieces, keptSeconds(seg.Thin(every))...)
		}
		if !slices.Equal(pieces, keptSeconds(got)) {
			t.Fatalf("case %d: thinning segment by segment differs", k)
		}
		moved := at(secs...)
		for i := range moved.Points {
			moved.Points[i].Lat = rng.Float64()*180 - 90
			moved.Points[i].Lon = rng.Float64()*360 - 180
		}
		if a, b := keptSeconds(moved.Thin(every)), keptSeconds(got); !slices.Equal(a, b) {
			t.Fatalf("case %d: thinning depends on the positions", k)
		}
	}
}

// TestThinNegativeControl: checkThinned rejects thinnings that break the
// rule: the first fix of each wall-clock minute (two fixes a second
// apart), every 60th fix (drops the fix after a gap), and a rule that
// skips fixes near the last kept position (depends on the data).
func TestThinNegativeControl(t *testing.T) {
	tr := at(append(seq(59, 200), 1000, 1001, 1002)...)
	pick := func(keep func(i int, p, last Point) bool) *Trace {
		out := &Trace{}
		for i, p := range tr.Points {
			if i == 0 || keep(i, p, out.Points[len(out.Points)-1]) {
				out.Points = append(out.Points, p)
			}
		}
		return out
	}
	for name, bad := range map[string]*Trace{
		"clock grid": pick(func(i int, p, _ Point) bool {
			return p.Time.Truncate(time.Minute) != tr.Points[i-1].Time.Truncate(time.Minute)
		}),
		"every 60th fix": pick(func(i int, _, _ Point) bool { return i%60 == 0 }),
		"by position": pick(func(_ int, p, last Point) bool {
			return p.Time.Sub(last.Time) >= time.Minute && math.Abs(p.Lat-last.Lat) > 0.1
		}),
	} {
		if checkThinned(tr, bad, time.Minute) == "" {
			t.Errorf("%s: accepted as a thinning", name)
		}
	}
	if msg := checkThinned(tr, tr.Thin(time.Minute), time.Minute); msg != "" {
		t.Error(msg)
	}
}
