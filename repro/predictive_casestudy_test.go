package repro

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// predictiveTrace: 20 min still, 20 min at 60 km/h due east, 20 min still,
// with a fix every 5 s.
func predictiveTrace() *trace.Trace {
	plane, _ := geoind.NewPlane(geo.Point{Lat: 39.9, Lon: 116.4})
	t0 := time.Date(2009, 1, 1, 8, 0, 0, 0, time.UTC)
	tr := &trace.Trace{UID: "syn", Name: "syn"}
	x := 0.0
	for i := 0; i < 60*12; i++ {
		if i >= 20*12 && i < 40*12 {
			x += 60 / 3.6 * 5
		}
		p := plane.Inverse(geoind.Vec{X: x, Y: 1000})
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * 5 * time.Second), Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()})
	}
	return tr
}

func TestPredictiveSlowPointsAndSampling(t *testing.T) {
	t.Parallel()
	cs := DefaultPredictiveCaseStudy()
	plane, _ := geoind.NewPlane(cs.Origin)
	pts, err := cs.SlowPoints(plane, predictiveTrace())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2009, 1, 1, 8, 0, 0, 0, time.UTC)
	// 10 s resampling: about 2 × 20 min of slow points; none well inside
	// the fast middle part.
	if len(pts) < 2*110 || len(pts) > 2*125 {
		t.Errorf("%d slow points, want about 240", len(pts))
	}
	for _, p := range pts {
		if el := p.Time.Sub(t0); el > 21*time.Minute && el < 39*time.Minute {
			t.Fatalf("slow point at %v inside the fast part", el)
		}
	}
	src := noise.Seeded(40)
	// p = 0: consecutive queries about a minute apart within a slow part.
	xs, ts := cs.Sample(pts, 0, src)
	if len(xs) < 30 || len(xs) != len(ts) {
		t.Fatalf("p = 0: %d queries", len(xs))
	}
	short := 0
	for i := 1; i < len(ts); i++ {
		dt := ts[i].Sub(ts[i-1])
		if dt < 30*time.Second {
			t.Errorf("queries %v apart", dt)
		}
		if dt <= 90*time.Second {
			short++
		}
	}
	if short < len(ts)-4 {
		t.Errorf("p = 0: only %d of %d intervals near a minute", short, len(ts)-1)
	}
	// p = 1: the first query, then the first slow point an hour later
	// (none: the trace lasts an hour), so one or two queries.
	xs, _ = cs.Sample(pts, 1, src)
	if len(xs) < 1 || len(xs) > 2 {
		t.Errorf("p = 1: %d queries", len(xs))
	}
}

func TestPredictiveCaseStudyIMRates(t *testing.T) {
	t.Parallel()
	cs := DefaultPredictiveCaseStudy()
	cs.Samplings = 3
	cs.JumpProbs = []float64{0, 0.5}
	res, err := cs.Run(append(predictiveSample(t), predictiveTrace()), noise.Seeded(41), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FixedRate) != 2 || len(res.FixedUtility) != 2 || res.Traces != 2 {
		t.Fatalf("rows %d/%d, traces %d", len(res.FixedRate), len(res.FixedUtility), res.Traces)
	}
	for _, row := range res.FixedRate {
		// IM spends exactly ρ = 3.3 % of ε per query.
		if math.Abs(row.IM.Rate-0.033) > 1e-12 || math.Abs(row.IM.PointsCovered-1/0.033) > 1e-9 {
			t.Errorf("p = %g: IM fixed-rate rate %g, points %g", row.P, row.IM.Rate, row.IM.PointsCovered)
		}
		if row.IM.Runs != 2*3 || row.IM.PredictionRate != 0 || row.IM.TestShare != 0 {
			t.Errorf("p = %g: IM %+v", row.P, row.IM)
		}
	}
	for _, row := range res.FixedUtility {
		// IM at α(0.9) = 3 km spends c_N/(3000 ε) of ε per query.
		want := 3.889720169867429 / 3000 / (math.Ln10 / 100)
		if math.Abs(row.IM.Rate-want) > 1e-12 {
			t.Errorf("p = %g: IM fixed-utility rate %g, want %g", row.P, row.IM.Rate, want)
		}
		for _, m := range []PredictiveMetrics{row.IM, row.PM, row.PMSkip} {
			if !(m.MeanError > 0 && m.Alpha90 >= m.MeanError*0.5 && m.Rate > 0 && m.Rate <= 1) {
				t.Errorf("p = %g: implausible metrics %+v", row.P, m)
			}
		}
	}
}

// BenchmarkPredictiveCaseStudy runs the full section V protocol (11 jump
// probabilities × 10 samplings × 6 mechanisms) on the bundled 37-minute
// GeoLife trace; `tracepriv repro predictive` does this for every trace.
func BenchmarkPredictiveCaseStudy(b *testing.B) {
	trs := predictiveSample(b)
	cs := DefaultPredictiveCaseStudy()
	src := noise.Seeded(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cs.Run(trs, src, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// predictiveSample reads the bundled GeoLife trace.
func predictiveSample(tb testing.TB) []*trace.Trace {
	tb.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{Name: sample.Name})
	if err != nil {
		tb.Fatal(err)
	}
	trs, err := trace.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return trs
}
