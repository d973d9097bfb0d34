package trace

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/geo"
)

// Default thresholds of the plausibility checks.
const (
	// DefaultMaxSpeed (300 km/h, in metres per second) is faster than the
	// road and rail traffic a GPS logger usually rides with (a high-speed
	// train at full speed excepted); a faster step is almost always a fix
	// that jumped. Raise it for flights.
	DefaultMaxSpeed = 300 / 3.6
	// DefaultMaxGap is the longest interval between fixes that is still
	// sampling rather than a gap (a logger off, a tunnel, indoors): GeoLife
	// logs every 1-5 s.
	DefaultMaxGap = 10 * time.Minute
)

// Limits are the thresholds of Check. Zero fields take the defaults.
type Limits struct {
	// MaxSpeed is the fastest plausible step, in metres per second.
	MaxSpeed float64
	// MaxGap is the longest interval between consecutive fixes that is not
	// counted as a gap.
	MaxGap time.Duration
}

// DefaultLimits returns the default thresholds.
func DefaultLimits() Limits { return Limits{MaxSpeed: DefaultMaxSpeed, MaxGap: DefaultMaxGap} }

func (l Limits) withDefaults() Limits {
	if l.MaxSpeed == 0 {
		l.MaxSpeed = DefaultMaxSpeed
	}
	if l.MaxGap == 0 {
		l.MaxGap = DefaultMaxGap
	}
	return l
}

// Validate checks that the thresholds are positive and finite.
func (l Limits) Validate() error {
	if !(l.MaxSpeed > 0) || math.IsInf(l.MaxSpeed, 0) {
		return fmt.Errorf("maximum speed %v m/s: want a positive, finite speed", l.MaxSpeed)
	}
	if l.MaxGap <= 0 {
		return fmt.Errorf("maximum gap %v: want a positive duration", l.MaxGap)
	}
	return nil
}

// MarshalJSON writes the thresholds in SI units: max_speed_mps, max_gap_s.
func (l Limits) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MaxSpeed float64 `json:"max_speed_mps"`
		MaxGap   float64 `json:"max_gap_s"`
	}{l.MaxSpeed, l.MaxGap.Seconds()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var v struct {
		MaxSpeed float64 `json:"max_speed_mps"`
		MaxGap   float64 `json:"max_gap_s"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	l.MaxSpeed, l.MaxGap = v.MaxSpeed, time.Duration(v.MaxGap*float64(time.Second))
	return nil
}

// Step is one step of a trace, from point Index-1 to point Index.
type Step struct {
	Index    int       `json:"index"` // 0-based index of the step's end point
	Time     time.Time `json:"time"`  // time of the end point
	Distance float64   `json:"distance_m"`
	Seconds  float64   `json:"seconds"`
	Speed    float64   `json:"speed_mps"` // +Inf for a move in no time
}

// MarshalJSON writes an infinite speed as null, which JSON can hold.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step
	var speed *float64
	if !math.IsInf(s.Speed, 0) && !math.IsNaN(s.Speed) {
		speed = &s.Speed
	}
	return json.Marshal(struct {
		plain
		Speed *float64 `json:"speed_mps"`
	}{plain(s), speed})
}

// maxExamples bounds the steps Plausibility lists.
const maxExamples = 5

// Plausibility is what Check found in a well-formed trace: whether it
// looks like what a GPS receiver records, as opposed to whether it could
// be read (Validate). Only speed jumps make a trace implausible; gaps and
// repeated positions are facts about its sampling, reported alongside.
type Plausibility struct {
	Limits Limits `json:"limits"`
	// SpeedJumps counts the steps faster than Limits.MaxSpeed. A single
	// fix that jumped away and back makes two.
	SpeedJumps int `json:"speed_jumps"`
	// Jumps lists the first few of them.
	Jumps []Step `json:"jumps,omitempty"`
	// Fastest is the fastest step (nil for fewer than two points).
	Fastest *Step `json:"fastest,omitempty"`
	// Gaps counts the intervals longer than Limits.MaxGap, and Longest is
	// the longest interval (nil for fewer than two points).
	Gaps    int   `json:"gaps"`
	Longest *Step `json:"longest_interval,omitempty"`
	// RepeatedPositions counts fixes at exactly the position of the fix
	// before them, at a later time: a receiver holding its fix while
	// stationary, or a logger repeating a stale one.
	RepeatedPositions int `json:"repeated_positions"`
}

// OK reports whether the trace is plausible: no speed jumps.
func (p Plausibility) OK() bool { return p.SpeedJumps == 0 }

// String summarises the findings, e.g. "2 speed jumps over 300 km/h
// (fastest 722 km/h at point 83), 1 gap over 10m0s (longest 1h2m0s), 12
// repeated positions".
func (p Plausibility) String() string {
	s := plural(p.SpeedJumps, "speed jump") + fmt.Sprintf(" over %.0f km/h", 3.6*p.Limits.MaxSpeed)
	if p.SpeedJumps > 0 && p.Fastest != nil {
		s += fmt.Sprintf(" (fastest %.0f km/h at point %d, %s)", 3.6*p.Fastest.Speed, p.Fastest.Index, p.Fastest.Time.Format(time.RFC3339))
	}
	s += ", " + plural(p.Gaps, "gap") + fmt.Sprintf(" over %v", p.Limits.MaxGap)
	if p.Gaps > 0 && p.Longest != nil {
		s += fmt.Sprintf(" (longest %v)", time.Duration(p.Longest.Seconds*float64(time.Second)).Round(time.Second))
	}
	return s + ", " + plural(p.RepeatedPositions, "repeated position")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Check looks for speed jumps, long gaps and repeated positions in t,
// step by step (zero limits take the defaults). Steps in no time or
// backwards in time, which a reader never returns, count as infinitely
// fast when they move.
func Check(t *Trace, lim Limits) Plausibility {
	p := Plausibility{Limits: lim.withDefaults()}
	for i := 1; i < len(t.Points); i++ {
		a, b := t.Points[i-1], t.Points[i]
		s := Step{Index: i, Time: b.Time, Distance: geo.Haversine(a.Geo(), b.Geo()), Seconds: b.Time.Sub(a.Time).Seconds()}
		s.Speed = StepSpeed(a, b)
		if p.Fastest == nil || s.Speed > p.Fastest.Speed {
			f := s
			p.Fastest = &f
		}
		if p.Longest == nil || s.Seconds > p.Longest.Seconds {
			l := s
			p.Longest = &l
		}
		if s.Speed > p.Limits.MaxSpeed {
			p.SpeedJumps++
			if len(p.Jumps) < maxExamples {
				p.Jumps = append(p.Jumps, s)
			}
		}
		if b.Time.Sub(a.Time) > p.Limits.MaxGap {
			p.Gaps++
		}
		if a.Lat == b.Lat && a.Lon == b.Lon && b.Time.After(a.Time) {
			p.RepeatedPositions++
		}
	}
	return p
}

// DropRepeatedPositions returns a copy of t without the fixes at exactly
// the position of the fix before them, and how many it dropped. The first
// fix at each position is kept, so a stationary stretch becomes one fix.
func (t *Trace) DropRepeatedPositions() (*Trace, int) {
	out := &Trace{UID: t.UID, Name: t.Name, Points: make([]Point, 0, len(t.Points))}
	for i, p := range t.Points {
		if i > 0 && p.Lat == t.Points[i-1].Lat && p.Lon == t.Points[i-1].Lon {
			continue
		}
		out.Points = append(out.Points, p)
	}
	return out, len(t.Points) - len(out.Points)
}

// Filters chooses the plausibility filters Filter applies; each is off
// unless set, because each one changes the data rather than reporting on it.
type Filters struct {
	// Limits are the thresholds; zero fields take the defaults, as in Check.
	Limits Limits
	// DropSpeedJumps drops each fix reached faster than Limits.MaxSpeed
	// from the last fix kept (FilterSpeed).
	DropSpeedJumps bool
	// DropRepeats drops fixes at exactly the previous fix's position
	// (DropRepeatedPositions).
	DropRepeats bool
	// SplitGaps cuts traces at intervals longer than Limits.MaxGap
	// (Segment).
	SplitGaps bool
}

// FilterReport counts what Filter changed.
type FilterReport struct {
	Limits            Limits `json:"limits"`
	SpeedJumpsDropped int    `json:"speed_jumps_dropped"`
	RepeatsDropped    int    `json:"repeated_positions_dropped"`
	// GapSplits counts the traces added by splitting at gaps.
	GapSplits int `json:"gap_splits"`
}

// Filter applies the chosen filters to each trace, in the order speed
// jumps, repeats, gaps: dropping a fix lengthens an interval, so gaps are
// cut last. It returns the resulting traces, in input order, and
// what the filters did; the input traces are not modified. A trace left
// empty is kept, so that the output still accounts for it.
func Filter(traces []*Trace, f Filters) ([]*Trace, FilterReport, error) {
	lim := f.Limits.withDefaults()
	if err := lim.Validate(); err != nil {
		return nil, FilterReport{}, err
	}
	rep := FilterReport{Limits: lim}
	out := make([]*Trace, 0, len(traces))
	for _, t := range traces {
		var n int
		if f.DropSpeedJumps {
			t, n = t.FilterSpeed(lim.MaxSpeed)
			rep.SpeedJumpsDropped += n
		}
		if f.DropRepeats {
			t, n = t.DropRepeatedPositions()
			rep.RepeatsDropped += n
		}
		if f.SplitGaps && t.Len() > 0 {
			segs := t.Segment(lim.MaxGap)
			rep.GapSplits += len(segs) - 1
			out = append(out, segs...)
			continue
		}
		out = append(out, t)
	}
	return out, rep, nil
}
