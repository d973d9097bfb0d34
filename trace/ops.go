package trace

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tracepriv/tracepriv/geo"
)

// DedupStats counts the points Dedup removed.
type DedupStats struct {
	// Duplicates are exact repeats of the point kept at their timestamp.
	Duplicates int `json:"duplicates"`
	// Conflicts share the kept point's timestamp but differ from it in
	// position, altitude or attributes.
	Conflicts int `json:"conflicts"`
}

// Dedup leaves one point per timestamp, in place, for a trace in time
// order. Of several consecutive points with the same timestamp it keeps
// the first. The others are exact repeats (Duplicates) or, when they differ
// from the first, Conflicts: they are dropped too, but counted apart so the
// caller can refuse the trace or look closer. Nothing is averaged or merged.
func (t *Trace) Dedup() DedupStats {
	var s DedupStats
	if len(t.Points) == 0 {
		return s
	}
	out := t.Points[:1]
	for _, p := range t.Points[1:] {
		last := out[len(out)-1]
		if !p.Time.Equal(last.Time) {
			out = append(out, p)
			continue
		}
		if samePoint(last, p) {
			s.Duplicates++
		} else {
			s.Conflicts++
		}
	}
	clear(t.Points[len(out):]) // release dropped attribute maps
	t.Points = out
	return s
}

// Segment splits t wherever consecutive points are more than maxGap apart
// and returns the pieces, which hold copies of the points.
func (t *Trace) Segment(maxGap time.Duration) []*Trace {
	return t.split(func(a, b Point) bool { return b.Time.Sub(a.Time) > maxGap }, 1)
}

// split cuts t between a and b wherever cut(a, b) and returns the pieces of
// at least minLen points.
func (t *Trace) split(cut func(a, b Point) bool, minLen int) []*Trace {
	var out []*Trace
	start := 0
	for i := 1; i <= len(t.Points); i++ {
		if i < len(t.Points) && !cut(t.Points[i-1], t.Points[i]) {
			continue
		}
		if i-start >= minLen {
			out = append(out, &Trace{UID: t.UID, Name: t.Name, Points: slices.Clone(t.Points[start:i])})
		}
		start = i
	}
	return out
}

// StepSpeed returns the great-circle speed from a to b in metres per
// second: +Inf if b is not later than a but elsewhere, 0 if it is the same
// place.
func StepSpeed(a, b Point) float64 {
	d := geo.Haversine(a.Geo(), b.Geo())
	dt := b.Time.Sub(a.Time).Seconds()
	switch {
	case dt > 0:
		return d / dt
	case d == 0:
		return 0
	}
	return math.Inf(1)
}

// SegmentBySpeed returns the maximal pieces of t in which every step (from
// one point to the next) has a speed of at most maxSpeed metres per second,
// as for selecting the slow parts of a trace where location queries happen.
// A piece has at least two points: an isolated point between two fast steps
// is not a slow segment.
func (t *Trace) SegmentBySpeed(maxSpeed float64) []*Trace {
	return t.split(func(a, b Point) bool { return !(StepSpeed(a, b) <= maxSpeed) }, 2)
}

// FilterSpeed returns a copy of t without the points reached from the last
// kept point faster than maxSpeed metres per second (GPS outliers), and the
// number of points dropped. The first point is always kept, so a trace
// whose first fix is an outlier must be trimmed first.
func (t *Trace) FilterSpeed(maxSpeed float64) (*Trace, int) {
	out := &Trace{UID: t.UID, Name: t.Name}
	for i, p := range t.Points {
		if i > 0 && !(StepSpeed(out.Points[len(out.Points)-1], p) <= maxSpeed) {
			continue
		}
		out.Points = append(out.Points, p)
	}
	return out, len(t.Points) - len(out.Points)
}

// maxResample bounds the output of Resample, against interval typos.
const maxResample = 1 << 26

// ErrEmpty is returned by operations that need at least one point.
var ErrEmpty = errors.New("trace has no points")

// Resample returns t sampled every interval from its first timestamp to its
// last. Each new position is interpolated linearly in time along the step
// it falls in, in the ENU tangent plane at the step's first point (exact at
// the original timestamps); altitude is interpolated when both ends have
// one. Attributes are not carried over. t must be in strictly increasing
// time order; split it with Segment first, or long gaps are bridged by
// straight lines.
func (t *Trace) Resample(interval time.Duration) (*Trace, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("resample: interval %v must be positive", interval)
	}
	if len(t.Points) == 0 {
		return nil, fmt.Errorf("resample: %w", ErrEmpty)
	}
	for i := 1; i < len(t.Points); i++ {
		if !t.Points[i].Time.After(t.Points[i-1].Time) {
			return nil, fmt.Errorf("resample: %w", &ValidationError{Index: i, Err: ErrNotIncreasing})
		}
	}
	start, end := t.Points[0].Time, t.Points[len(t.Points)-1].Time
	steps := end.Sub(start) / interval
	if steps >= maxResample {
		return nil, fmt.Errorf("resample: %v every %v would give more than %d points", end.Sub(start), interval, maxResample)
	}
	n := int(steps) + 1
	out := &Trace{UID: t.UID, Name: t.Name, Points: make([]Point, 0, n)}
	var (
		seg   = -1
		plane *geo.ENU
		e, no float64 // next point of the step, in the plane
	)
	i := 0
	for k := 0; k < n; k++ {
		tau := start.Add(time.Duration(k) * interval)
		for i+1 < len(t.Points) && !t.Points[i+1].Time.After(tau) {
			i++
		}
		a := t.Points[i]
		if tau.Equal(a.Time) || i+1 == len(t.Points) {
			out.Points = append(out.Points, Point{Time: tau, Lat: a.Lat, Lon: a.Lon, Alt: a.Alt})
			continue
		}
		b := t.Points[i+1]
		if seg != i {
			seg, plane = i, geo.NewENU(a.Geo())
			e, no = plane.Forward(b.Geo())
		}
		f := float64(tau.Sub(a.Time)) / float64(b.Time.Sub(a.Time))
		q := plane.Inverse(f*e, f*no)
		out.Points = append(out.Points, Point{Time: tau, Lat: q.Lat, Lon: q.Lon, Alt: a.Alt + f*(b.Alt-a.Alt)})
	}
	return out, nil
}
