package attack

import (
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// The stay-point rule of Li et al. (2008) and Zheng's GeoLife work: a stay
// is a run of points within DefaultStayRadiusM of the run's first point
// lasting at least DefaultStayMinDuration. Li et al. use 200 m and 30
// minutes; the place attack counts every stay of 15 minutes or more, the
// length of stay the review of issue 22 found located by a plain mean.
const (
	DefaultStayRadiusM     = 200
	DefaultStayMinDuration = 15 * time.Minute
)

// StayOptions sets the stay-point rule of Stays. The zero value is the
// default rule (200 m, 15 minutes).
type StayOptions struct {
	// RadiusM is the distance threshold (metres): every point of a stay
	// is within RadiusM of the stay's first point.
	RadiusM float64
	// MinDuration is the time threshold: the time from a stay's first
	// point to its last.
	MinDuration time.Duration
}

func (o StayOptions) withDefaults() (StayOptions, error) {
	if o.RadiusM == 0 {
		o.RadiusM = DefaultStayRadiusM
	}
	if o.MinDuration == 0 {
		o.MinDuration = DefaultStayMinDuration
	}
	if !(o.RadiusM > 0) || o.RadiusM > 1e7 {
		return o, fmt.Errorf("attack: %w", param.Invalid("stay_radius_m", o.RadiusM, "a stay's radius must be positive and at most 1e7 m (10,000 km)"))
	}
	if o.MinDuration < 0 {
		return o, fmt.Errorf("attack: %w", param.Invalid("stay_min_duration", o.MinDuration, "a stay's duration must be positive"))
	}
	return o, nil
}

// Stay is one stay of a trace: the points Start..End (inclusive, indices
// into the points given to Stays) and their centroid.
type Stay struct {
	Start, End         int
	StartTime, EndTime time.Time
	// Centroid is the mean position of the stay's points (computed on the
	// tangent plane at the stay's first point).
	Centroid geo.Point
}

// Points is the number of points of the stay.
func (s Stay) Points() int { return s.End - s.Start + 1 }

// Duration is the time from the stay's first point to its last.
func (s Stay) Duration() time.Duration { return s.EndTime.Sub(s.StartTime) }

// Stays finds the stays of points (in time order) by the stay-point rule
// of Li et al. (2008): from an anchor point, the run extends while each
// next point is within opt.RadiusM of the anchor (great-circle distance);
// a run whose first and last points are at least opt.MinDuration apart is
// a stay, and the search resumes after it; otherwise it resumes at the
// next anchor. A stay that reaches the end of the points counts (the
// rule as first published missed it). Stays never overlap.
//
// It is meant for evaluation: the stays of the true trace are the places
// a place-finding adversary targets, and the truth is no input of a
// mechanism.
func Stays(points []trace.Point, opt StayOptions) ([]Stay, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(points); i++ {
		if points[i].Time.Before(points[i-1].Time) {
			return nil, fmt.Errorf("attack: stays: point %d (%v) is before point %d (%v): points must be in time order",
				i+1, points[i].Time, i, points[i-1].Time)
		}
	}
	var out []Stay
	n := len(points)
	for i := 0; i < n; {
		anchor := points[i].Geo()
		j := i + 1
		for j < n && geo.Haversine(anchor, points[j].Geo()) <= opt.RadiusM {
			j++
		}
		// points[i:j] are within the radius of the anchor.
		if points[j-1].Time.Sub(points[i].Time) >= opt.MinDuration {
			out = append(out, newStay(points, i, j-1))
			i = j
			continue
		}
		i++
	}
	return out, nil
}

func newStay(points []trace.Point, lo, hi int) Stay {
	enu := geo.NewENU(points[lo].Geo())
	var e, n float64
	for _, p := range points[lo : hi+1] {
		pe, pn := enu.Forward(p.Geo())
		e += pe
		n += pn
	}
	k := float64(hi - lo + 1)
	return Stay{Start: lo, End: hi, StartTime: points[lo].Time, EndTime: points[hi].Time, Centroid: enu.Inverse(e/k, n/k)}
}
