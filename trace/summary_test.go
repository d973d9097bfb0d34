package trace

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	// Steps along the equator: 0.001 degrees in 10 s, 0.001 in 20 s, 0.002
	// in 10 s. With v = 0.001 degrees per 10 s, speeds are v, v/2, 2v.
	tr := equator([2]float64{0, 0}, [2]float64{10, 0.001}, [2]float64{30, 0.002}, [2]float64{40, 0.004})
	s := Summarize(tr)
	v := 0.001 * metresPerDegree / 10
	if s.Points != 4 || s.Duration != 40*time.Second || s.DurationS != 40 || !s.Start.Equal(t0) {
		t.Errorf("summary %+v", s)
	}
	if !near(s.PathLength, 0.004*metresPerDegree) {
		t.Errorf("path %v, want %v", s.PathLength, 0.004*metresPerDegree)
	}
	// Intervals 10, 20, 10: the type 7 95th percentile of (10, 10, 20) is
	// at rank 0.95*2 = 1.9, i.e. 10 + 0.9*10 = 19.
	if want := (Stats{N: 3, Min: 10, Median: 10, Mean: 40.0 / 3, P95: 19, Max: 20}); !nearStats(s.Interval, want) {
		t.Errorf("intervals %+v, want %+v", s.Interval, want)
	}
	// Speeds v/2, v, 2v: mean 7v/6, p95 v + 0.9*(2v - v) = 1.9v.
	if want := (Stats{N: 3, Min: v / 2, Median: v, Mean: 7 * v / 6, P95: 1.9 * v, Max: 2 * v}); !nearStats(s.Speed, want) {
		t.Errorf("speeds %+v, want %+v", s.Speed, want)
	}
	if s.BBox != (BBox{MinLat: 0, MinLon: 0, MaxLat: 0, MaxLon: 0.004}) {
		t.Errorf("bbox %+v", s.BBox)
	}
	// An even sample's median is the mean of the middle pair.
	if m := describe([]float64{3, 1}).Median; m != 2 {
		t.Errorf("median of (1, 3) = %v", m)
	}
	if s := Summarize(&Trace{}); s.Points != 0 || s.Speed.N != 0 {
		t.Errorf("empty trace %+v", s)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
}

func nearStats(a, b Stats) bool {
	return a.N == b.N && near(a.Min, b.Min) && near(a.Median, b.Median) && near(a.Mean, b.Mean) && near(a.P95, b.P95) && near(a.Max, b.Max)
}

// TestSummarizeGeoLife compares with values computed independently in
// Python (haversine on the 6378137 m sphere, type 7 quantiles) for the
// GeoLife file 000/20081023025304.plt.
func TestSummarizeGeoLife(t *testing.T) {
	traces, _, err := ReadFile("../../shared/data/geolife/000/20081023025304.plt", ReadOptions{})
	if err != nil {
		t.Skip("GeoLife data not available:", err)
	}
	s := Summarize(traces[0])
	if s.Points != 908 || !near(s.PathLength, 14955.356219092471) {
		t.Errorf("points %d, path %v", s.Points, s.PathLength)
	}
	if want := (Stats{N: 907, Min: 1, Median: 5, Mean: 32.95259095920618, P95: 5, Max: 18453}); !nearStats(s.Interval, want) {
		t.Errorf("intervals %+v, want %+v", s.Interval, want)
	}
	if want := (Stats{N: 907, Min: 0, Median: 2.045582853474635, Mean: 2.2474034988593137, P95: 4.294270971333252, Max: 60.65081638596985}); !nearStats(s.Speed, want) {
		t.Errorf("speeds %+v, want %+v", s.Speed, want)
	}
	if s.BBox != (BBox{MinLat: 39.983276, MinLon: 116.285446, MaxLat: 40.009428, MaxLon: 116.324886}) {
		t.Errorf("bbox %+v", s.BBox)
	}
}
