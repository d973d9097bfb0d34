package trace

import (
	"errors"
	"math"
	"testing"
	"time"
)

// metresPerDegree is the length of one degree of the equator on the
// sphere of radius 6378137 m that geo.Haversine uses: 6378137 * pi / 180.
const metresPerDegree = 6378137 * math.Pi / 180

var t0 = time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)

// equator builds a trace along the equator from (seconds, longitude) pairs.
func equator(pts ...[2]float64) *Trace {
	t := &Trace{UID: "u", Name: "n"}
	for _, p := range pts {
		t.Points = append(t.Points, Point{Time: t0.Add(time.Duration(p[0] * float64(time.Second))), Lon: p[1], Alt: math.NaN()})
	}
	return t
}

func TestDedup(t *testing.T) {
	tr := equator([2]float64{0, 0}, [2]float64{0, 0}, [2]float64{0, 0.5}, [2]float64{1, 1}, [2]float64{1, 1}, [2]float64{2, 2})
	s := tr.Dedup()
	if s != (DedupStats{Duplicates: 2, Conflicts: 1}) {
		t.Errorf("stats %+v, want 2 duplicates and 1 conflict", s)
	}
	if tr.Len() != 3 || tr.Points[0].Lon != 0 || tr.Points[1].Lon != 1 {
		t.Errorf("kept %+v", tr.Points)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
	// Attributes count as part of the point.
	tr = equator([2]float64{0, 0}, [2]float64{0, 0})
	tr.Points[1].Attrs = map[string]string{"k": "v"}
	if s := tr.Dedup(); s.Conflicts != 1 {
		t.Errorf("attribute difference: %+v", s)
	}
	if s := (&Trace{}).Dedup(); s != (DedupStats{}) {
		t.Errorf("empty trace: %+v", s)
	}
}

func TestSegment(t *testing.T) {
	tr := equator([2]float64{0, 0}, [2]float64{1, 0}, [2]float64{2, 0}, [2]float64{10, 0}, [2]float64{15, 0}, [2]float64{30, 0})
	// Gaps of 8 s and 15 s exceed 5 s; a gap of exactly 5 s does not.
	segs := tr.Segment(5 * time.Second)
	if len(segs) != 3 || segs[0].Len() != 3 || segs[1].Len() != 2 || segs[2].Len() != 1 {
		t.Fatalf("got %d segments", len(segs))
	}
	if segs[1].UID != "u" || segs[1].Name != "n" || !segs[1].Points[0].Time.Equal(t0.Add(10*time.Second)) {
		t.Errorf("segment %+v", segs[1])
	}
	segs[0].Points[0].Lon = 9 // pieces own their points
	if tr.Points[0].Lon != 0 {
		t.Error("segment aliases the original points")
	}
	if segs := (&Trace{}).Segment(time.Second); len(segs) != 0 {
		t.Errorf("empty trace gave %d segments", len(segs))
	}
}

func TestStepSpeed(t *testing.T) {
	tr := equator([2]float64{0, 0}, [2]float64{10, 0.001}, [2]float64{10, 0.001}, [2]float64{10, 0.002})
	p := tr.Points
	// 0.001 degrees of equator in 10 s.
	if got, want := StepSpeed(p[0], p[1]), 0.001*metresPerDegree/10; math.Abs(got-want) > 1e-9*want {
		t.Errorf("speed %v, want %v", got, want)
	}
	if got := StepSpeed(p[1], p[2]); got != 0 {
		t.Errorf("no time, no move: %v", got)
	}
	if got := StepSpeed(p[2], p[3]); !math.IsInf(got, 1) {
		t.Errorf("no time, a move: %v", got)
	}
}

func TestSegmentBySpeed(t *testing.T) {
	// Steps of 0.0001 degrees (1.1 m/s) are slow, steps of 0.001 (11 m/s)
	// fast, at 10 s each; the threshold is 15 km/h.
	tr := equator([2]float64{0, 0}, [2]float64{10, 0.0001}, [2]float64{20, 0.0002},
		[2]float64{30, 0.0012}, [2]float64{40, 0.0013},
		[2]float64{50, 0.0023},
		[2]float64{60, 0.0033}, [2]float64{70, 0.0034}, [2]float64{80, 0.0035})
	segs := tr.SegmentBySpeed(15 / 3.6)
	want := [][2]int{{0, 3}, {3, 5}, {6, 9}} // the lone point 5 is no segment
	if len(segs) != len(want) {
		t.Fatalf("%d segments, want %d", len(segs), len(want))
	}
	for i, w := range want {
		if segs[i].Len() != w[1]-w[0] || segs[i].Points[0].Lon != tr.Points[w[0]].Lon {
			t.Errorf("segment %d: %d points from lon %v, want points %d-%d", i, segs[i].Len(), segs[i].Points[0].Lon, w[0], w[1]-1)
		}
	}
}

func TestFilterSpeed(t *testing.T) {
	// Point 2 jumps 0.0099 degrees (1.1 km) in 10 s: an outlier at 4 m/s.
	tr := equator([2]float64{0, 0}, [2]float64{10, 0.0001}, [2]float64{20, 0.01}, [2]float64{30, 0.0002}, [2]float64{40, 0.0003})
	got, dropped := tr.FilterSpeed(4)
	if dropped != 1 || got.Len() != 4 || got.Points[2].Lon != 0.0002 {
		t.Errorf("dropped %d, kept %+v", dropped, got.Points)
	}
	if tr.Len() != 5 {
		t.Error("FilterSpeed changed its input")
	}
}

func TestResample(t *testing.T) {
	tr := equator([2]float64{0, 0}, [2]float64{10, 0.001}, [2]float64{20, 0.001})
	tr.Points[0].Alt, tr.Points[1].Alt = 0, 10
	got, err := tr.Resample(2500 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 9 || got.UID != "u" {
		t.Fatalf("%d points, want 9 (0 to 20 s every 2.5 s)", got.Len())
	}
	dl := 0.001 * math.Pi / 180
	for k, p := range got.Points {
		f := float64(k) / 4 // fraction of the first step
		if !p.Time.Equal(t0.Add(time.Duration(k) * 2500 * time.Millisecond)) {
			t.Errorf("point %d at %v", k, p.Time)
		}
		if k > 4 {
			// On the stationary second step every point is the last fix.
			if math.Abs(p.Lon-0.001) > 1e-12 || math.Abs(p.Lat) > 1e-12 || !math.IsNaN(p.Alt) {
				t.Errorf("point %d: %+v", k, p)
			}
			continue
		}
		// On the equator the ENU east coordinate of a longitude offset x is
		// a*sin(x) (a the equatorial radius), so the point a fraction f of
		// the way is at longitude asin(f*sin(dl)).
		wantLon := math.Asin(f*math.Sin(dl)) * 180 / math.Pi
		if math.Abs(p.Lon-wantLon) > 1e-12 || math.Abs(p.Lat) > 1e-12 {
			t.Errorf("point %d at (%v, %v), want (0, %v)", k, p.Lat, p.Lon, wantLon)
		}
		if math.Abs(p.Alt-10*f) > 1e-12 {
			t.Errorf("point %d altitude %v, want %v", k, p.Alt, 10*f)
		}
	}
	// Fixes are reproduced exactly where the grid meets them.
	if got.Points[4].Lon != 0.001 || got.Points[0].Lon != 0 {
		t.Errorf("grid points on fixes moved: %v %v", got.Points[0].Lon, got.Points[4].Lon)
	}
	// The grid stops at the last time it reaches: 0, 7, 14 within 20 s.
	got, _ = tr.Resample(7 * time.Second)
	if got.Len() != 3 || !got.Points[2].Time.Equal(t0.Add(14*time.Second)) {
		t.Errorf("7 s grid: %d points", got.Len())
	}

	if _, err := tr.Resample(0); err == nil {
		t.Error("zero interval accepted")
	}
	if _, err := (&Trace{}).Resample(time.Second); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty trace: %v", err)
	}
	bad := equator([2]float64{0, 0}, [2]float64{0, 1})
	if _, err := bad.Resample(time.Second); !errors.Is(err, ErrNotIncreasing) {
		t.Errorf("repeated time: %v", err)
	}
	if _, err := tr.Resample(time.Nanosecond); err == nil {
		t.Error("2e10 points accepted")
	}
}

// TestFilter runs the filters in turn on a trace with one of each fault,
// worked by hand: a 110 m/s jump at 20 s, a repeat at 40 s and a 960 s gap.
func TestFilter(t *testing.T) {
	tr := equator([2]float64{0, 0}, [2]float64{10, 0.0001}, [2]float64{20, 0.01}, [2]float64{30, 0.0002}, [2]float64{40, 0.0002}, [2]float64{1000, 0.0003})
	empty := &Trace{UID: "e"}
	lim := Limits{MaxSpeed: 4, MaxGap: time.Minute}
	got, rep, err := Filter([]*Trace{tr, empty}, Filters{Limits: lim, DropSpeedJumps: true, DropRepeats: true, SplitGaps: true})
	if err != nil {
		t.Fatal(err)
	}
	want := FilterReport{Limits: lim, SpeedJumpsDropped: 1, RepeatsDropped: 1, GapSplits: 1}
	if rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	// Kept: 0, 10, 30 s; then 1000 s after the gap; then the empty trace.
	if len(got) != 3 || got[0].Len() != 3 || got[0].Points[2].Lon != 0.0002 || got[1].Len() != 1 || got[1].Points[0].Lon != 0.0003 || got[2].Len() != 0 || got[2].UID != "e" {
		t.Errorf("traces %v", got)
	}
	if tr.Len() != 6 {
		t.Error("Filter changed its input")
	}

	// Gaps alone keep the jump and the repeat; zero limits take the defaults
	// (10 min), which the 960 s interval exceeds.
	got, rep, err = Filter([]*Trace{tr}, Filters{SplitGaps: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (FilterReport{Limits: DefaultLimits(), GapSplits: 1}); rep != want || len(got) != 2 || got[0].Len() != 5 {
		t.Errorf("gaps only: report %+v, %d traces", rep, len(got))
	}
	if _, _, err := Filter([]*Trace{tr}, Filters{Limits: Limits{MaxSpeed: -1}, DropSpeedJumps: true}); err == nil {
		t.Error("a negative speed limit was accepted")
	}
}
