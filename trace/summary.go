package trace

import (
	"slices"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/stats"
)

// Summary describes a trace: its size, time span, path length, sampling
// and speed. It serialises to JSON for `tracepriv inspect --json`.
type Summary struct {
	UID        string        `json:"uid,omitempty"`
	Name       string        `json:"name,omitempty"`
	Points     int           `json:"points"`
	Start      time.Time     `json:"start"`
	End        time.Time     `json:"end"`
	Duration   time.Duration `json:"-"`
	DurationS  float64       `json:"duration_s"`
	PathLength float64       `json:"path_length_m"` // sum of great-circle steps
	// Interval describes the sampling intervals (seconds) between
	// consecutive points.
	Interval Stats `json:"interval_s"`
	// Speed describes the step speeds (metres per second) over steps of
	// positive duration.
	Speed Stats `json:"speed_mps"`
	BBox  BBox  `json:"bbox"`
}

// Stats summarises a sample. Quantiles interpolate linearly between order
// statistics (Hyndman and Fan type 7, numpy's default), so the median of
// an even-sized sample is the mean of its middle pair. All fields are zero
// for an empty sample.
type Stats struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// BBox is a latitude/longitude bounding box in degrees. It does not handle
// traces that cross the antimeridian.
type BBox struct {
	MinLat float64 `json:"min_lat"`
	MinLon float64 `json:"min_lon"`
	MaxLat float64 `json:"max_lat"`
	MaxLon float64 `json:"max_lon"`
}

// Summarize describes t. Intervals of unordered traces are reported as
// they are (zero or negative), so a glance shows that Validate will fail.
func Summarize(t *Trace) Summary {
	s := Summary{UID: t.UID, Name: t.Name, Points: len(t.Points)}
	if len(t.Points) == 0 {
		return s
	}
	s.Start, s.End = t.Points[0].Time, t.Points[len(t.Points)-1].Time
	s.Duration = s.End.Sub(s.Start)
	s.DurationS = s.Duration.Seconds()
	s.BBox = BBox{MinLat: 90, MinLon: 180, MaxLat: -90, MaxLon: -180}
	intervals := make([]float64, 0, len(t.Points))
	speeds := make([]float64, 0, len(t.Points))
	for i, p := range t.Points {
		s.BBox.MinLat, s.BBox.MaxLat = min(s.BBox.MinLat, p.Lat), max(s.BBox.MaxLat, p.Lat)
		s.BBox.MinLon, s.BBox.MaxLon = min(s.BBox.MinLon, p.Lon), max(s.BBox.MaxLon, p.Lon)
		if i == 0 {
			continue
		}
		q := t.Points[i-1]
		d := geo.Haversine(q.Geo(), p.Geo())
		dt := p.Time.Sub(q.Time).Seconds()
		s.PathLength += d
		intervals = append(intervals, dt)
		if dt > 0 {
			speeds = append(speeds, d/dt)
		}
	}
	s.Interval = describe(intervals)
	s.Speed = describe(speeds)
	return s
}

// describe computes Stats of x, sorting it in place.
func describe(x []float64) Stats {
	if len(x) == 0 {
		return Stats{}
	}
	slices.Sort(x)
	var sum float64
	for _, v := range x {
		sum += v
	}
	return Stats{
		N:      len(x),
		Min:    x[0],
		Median: stats.Quantile7(x, 0.5),
		Mean:   sum / float64(len(x)),
		P95:    stats.Quantile7(x, 0.95),
		Max:    x[len(x)-1],
	}
}
