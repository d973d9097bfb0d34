package trace

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/geo"
)

// Point is one timestamped fix of a trace.
type Point struct {
	Time time.Time
	Lat  float64 // WGS84 degrees
	Lon  float64 // WGS84 degrees
	// Alt is the altitude in metres, NaN when unknown.
	Alt float64
	// Attrs holds optional per-point attributes carried through formats that
	// can store them (GeoJSON properties, GPX extensions, extra CSV columns).
	Attrs map[string]string
}

// Geo returns the point's position.
func (p Point) Geo() geo.Point { return geo.Point{Lat: p.Lat, Lon: p.Lon} }

// Trace is the time-ordered sequence of fixes of one user.
type Trace struct {
	// UID identifies the user (or device) the trace belongs to.
	UID string
	// Name is an optional label for messages and certificates: ReadFile
	// sets it to the name of the file the trace was read from, without
	// extension. It is never read from a file's content (a GPX track's
	// <name>, a GeoJSON "name" property are free text, as often as not a
	// person's name) and no writer writes it, so that it cannot carry
	// such text into a release.
	Name   string
	Points []Point
}

// Len returns the number of points.
func (t *Trace) Len() int { return len(t.Points) }

// Duration returns the time between the first and the last point.
func (t *Trace) Duration() time.Duration {
	if len(t.Points) < 2 {
		return 0
	}
	return t.Points[len(t.Points)-1].Time.Sub(t.Points[0].Time)
}

// Times returns the timestamps of the points; they are public in every
// tracepriv mechanism.
func (t *Trace) Times() []time.Time {
	ts := make([]time.Time, len(t.Points))
	for i, p := range t.Points {
		ts[i] = p.Time
	}
	return ts
}

// ValidationError says which point of a trace is invalid and why.
type ValidationError struct {
	Index int // 0-based point index
	Err   error
}

func (e *ValidationError) Error() string { return fmt.Sprintf("point %d: %v", e.Index, e.Err) }
func (e *ValidationError) Unwrap() error { return e.Err }

// ErrNotIncreasing is wrapped when timestamps are not strictly increasing.
var ErrNotIncreasing = errors.New("timestamps not strictly increasing")

// Validate checks that every point has finite, in-range coordinates, a
// finite or NaN altitude, and that timestamps strictly increase. Call Dedup
// first to remove exact repeats.
func (t *Trace) Validate() error {
	for i, p := range t.Points {
		if err := p.Geo().Validate(); err != nil {
			return &ValidationError{Index: i, Err: err}
		}
		if math.IsInf(p.Alt, 0) {
			return &ValidationError{Index: i, Err: fmt.Errorf("altitude is infinite")}
		}
		if p.Time.IsZero() {
			return &ValidationError{Index: i, Err: fmt.Errorf("missing timestamp")}
		}
		if i > 0 && !p.Time.After(t.Points[i-1].Time) {
			return &ValidationError{Index: i, Err: fmt.Errorf("%w: %s after %s", ErrNotIncreasing,
				p.Time.Format(time.RFC3339Nano), t.Points[i-1].Time.Format(time.RFC3339Nano))}
		}
	}
	return nil
}
