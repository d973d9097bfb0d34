package geoind

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// TraceRelease summarises one input trace of SanitizeByPerson.
type TraceRelease struct {
	Name     string `json:"name"`
	Points   int    `json:"points"`
	Released int    `json:"released"`
}

// PersonRelease summarises the session of one person in SanitizeByPerson.
type PersonRelease struct {
	// Person is the grouping key the traces were grouped by; UID is the
	// uid of the person's first trace.
	Person string         `json:"person"`
	UID    string         `json:"uid"`
	Traces []TraceRelease `json:"traces"`
	// Points is the number of points (queries) of all the person's
	// traces; Released those answered before the budget ran out.
	Points   int     `json:"points"`
	Released int     `json:"released"`
	Covered  float64 `json:"covered"` // Released / Points
	Complete bool    `json:"complete"`
	Hard     int     `json:"hard"`
	Skipped  int     `json:"skipped"`
	Spent    float64 `json:"spent"`
	Budget   float64 `json:"budget"`
	// PredictionRate is easy/tested over the person's run.
	PredictionRate float64 `json:"prediction_rate"`
	// ExpectedErrorM is the error the release cost, from the public
	// decisions of the person's run alone: the mean over released points
	// of StepErrorBound, a proven upper bound on each step's expected
	// distance between report and point (fresh noise, or a prediction the
	// test accepted however far the point had moved), over the points
	// whose step drew or could draw noise (all but those the elapsed-time
	// skip reported, which carry no bound). ExpectedErrorKind says so.
	ExpectedErrorM float64 `json:"expected_error_m,omitempty"`
	// ExpectedErrorKind is ErrorUpperBound: ExpectedErrorM bounds the
	// expected mean error from above.
	ExpectedErrorKind string `json:"expected_error_kind,omitempty"`
	// AccuracyM is the mean over the same points of the step's α at the
	// configuration's confidence (StepAccuracy, Proposition 4): with that
	// probability a step's report lies within its α of the point, whether
	// fresh noise or an accepted prediction.
	AccuracyM float64 `json:"accuracy_m,omitempty"`
	// First and Last are the times of the person's first and last point,
	// CoveredUntil that of the last released one (zero if none).
	First        time.Time `json:"first"`
	Last         time.Time `json:"last"`
	CoveredUntil time.Time `json:"covered_until,omitzero"`
}

// SanitizeByPerson releases traces with one Session, hence one budget ε,
// per person: all points of a person's traces (the segments of a GPX
// track, the traces of one uid in a CSV, the files of one GeoLife user) are
// queries to the same session, in time order. By Theorem 3 applied to the
// merged trace, the person's whole release is then ε·d_∞-private, where a
// session per trace would spend ε on each.
//
// person maps a trace to its person; nil groups by UID (traces without a
// uid then form one person, the conservative choice). It returns, in input
// order, the released part of every trace with at least one released point
// (uid, name and the public timestamps kept, coordinates replaced, altitude
// and attributes dropped), and one PersonRelease per person in order of
// first appearance. Points after a person's budget is exhausted are not
// released: PersonRelease says how many; whether partial coverage is
// acceptable is the caller's decision.
//
// With the planned manager (cfg.Manager ManagerPlanned), each person's session
// plans for exactly their number of points (cfg.Queries is ignored), so
// every point is released (Planned). Every person's configuration is
// checked before anything is drawn for anyone; a person whose points
// cannot be released is named by a *PlanError (PlanByPerson gives every
// person's plan beforehand).
func SanitizeByPerson(cfg Config, traces []*trace.Trace, person func(*trace.Trace) string, src noise.Source) ([]*trace.Trace, []PersonRelease, error) {
	if err := cfg.template().Validate(); err != nil {
		return nil, nil, err
	}
	order, groups := groupByPerson(traces, person)
	// Every person's configuration is checked before anything is drawn
	// for anyone: the planned manager's depends on their number of points.
	cfgs := make(map[string]Config, len(order))
	for _, k := range order {
		c := cfg
		if c.Manager == ManagerPlanned {
			c.Queries = 0
			for _, i := range groups[k] {
				c.Queries += traces[i].Len()
			}
			if c.Queries == 0 {
				c.Queries = 1 // nothing to release; the plan is never used
			}
		}
		if err := c.Validate(); err != nil {
			if c.Manager == ManagerPlanned {
				return nil, nil, &PlanError{Person: k, Points: c.Queries, Err: err}
			}
			return nil, nil, err
		}
		cfgs[k] = c
	}
	// Every location within reach of the origin (CheckOriginDistance, the
	// rule Session.Query and the server apply), before anything is drawn.
	for _, tr := range traces {
		for i, p := range tr.Points {
			if err := CheckOriginDistance(cfg.Origin, p.Geo()); err != nil {
				return nil, nil, fmt.Errorf("trace %s point %d: %w", tr.Name, i, err)
			}
		}
	}
	outs := make([]*trace.Trace, len(traces))
	var people []PersonRelease
	for _, k := range order {
		pr, err := sanitizePerson(cfgs[k], k, traces, groups[k], outs, src)
		if err != nil {
			return nil, nil, err
		}
		people = append(people, pr)
	}
	var released []*trace.Trace
	for _, o := range outs {
		if o != nil && o.Len() > 0 {
			released = append(released, o)
		}
	}
	return released, people, nil
}

// PersonByUIDOrFile returns the person rule of `tracepriv geoind sanitize`
// for SanitizeByPerson: traces with a uid are one person per uid (key
// "uid " + UID, across files), and traces without one are one person per
// input file (key "file " + fileOf(t)), so that the segments of a GPX track
// or the rows of a CSV without a uid column share one budget. fileOf names
// the file a trace was read from.
func PersonByUIDOrFile(fileOf func(*trace.Trace) string) func(*trace.Trace) string {
	return func(t *trace.Trace) string {
		if t.UID != "" {
			return "uid " + t.UID
		}
		return "file " + fileOf(t)
	}
}

// sanitizePerson runs one session over the traces idx of one person,
// filling outs.
func sanitizePerson(cfg Config, key string, traces []*trace.Trace, idx []int, outs []*trace.Trace, src noise.Source) (PersonRelease, error) {
	type ref struct{ tr, pt int }
	var pts []ref
	pr := PersonRelease{Person: key, UID: traces[idx[0]].UID, Budget: cfg.Params.Epsilon}
	for _, i := range idx {
		tr := traces[i]
		outs[i] = &trace.Trace{UID: tr.UID, Name: tr.Name}
		pr.Traces = append(pr.Traces, TraceRelease{Name: tr.Name, Points: tr.Len()})
		for j := range tr.Points {
			pts = append(pts, ref{i, j})
		}
	}
	// Time order across the person's traces; ties keep input order.
	sort.SliceStable(pts, func(a, b int) bool {
		return traces[pts[a].tr].Points[pts[a].pt].Time.Before(traces[pts[b].tr].Points[pts[b].pt].Time)
	})
	pr.Points = len(pts)
	if len(pts) > 0 {
		pr.First = traces[pts[0].tr].Points[pts[0].pt].Time
		pr.Last = traces[pts[len(pts)-1].tr].Points[pts[len(pts)-1].pt].Time
	}
	s, err := NewSession(cfg, src)
	if err != nil {
		return pr, err
	}
	slot := map[int]int{} // trace index -> position in pr.Traces
	for k, i := range idx {
		slot[i] = k
	}
	for _, r := range pts {
		tr := traces[r.tr]
		p := tr.Points[r.pt]
		rep, err := s.Query(p.Geo(), p.Time)
		if IsExhausted(err) {
			break
		}
		if err != nil {
			return pr, fmt.Errorf("trace %s point %d: %w", tr.Name, r.pt, err)
		}
		outs[r.tr].Points = append(outs[r.tr].Points, trace.Point{Time: p.Time, Lat: rep.Lat, Lon: rep.Lon, Alt: math.NaN()})
		pr.Traces[slot[r.tr]].Released++
		pr.Released++
		pr.CoveredUntil = p.Time
	}
	st := s.State()
	rs := st.Run.Stats()
	pr.Hard, pr.Skipped, pr.Spent, pr.PredictionRate = rs.Hard, rs.Skipped, st.Spent, rs.PredictionRate
	pr.ExpectedErrorM, pr.AccuracyM = runErrors(st.Run, cfg.Params.withDefaults().Confidence, cfg.Noise.Grid)
	if pr.ExpectedErrorM > 0 {
		pr.ExpectedErrorKind = ErrorUpperBound
	}
	pr.Complete = pr.Released == pr.Points
	if pr.Points > 0 {
		pr.Covered = float64(pr.Released) / float64(pr.Points)
	}
	return pr, nil
}

// ErrorUpperBound is the ExpectedErrorKind of a proven upper bound on the
// expected error (StepErrorBound).
const ErrorUpperBound = "upper_bound"

// runErrors returns the mean StepErrorBound and the mean StepAccuracy
// over the steps of r that drew or could draw noise (0, 0 if none).
func runErrors(r Run, confidence, grid float64) (expected, accuracy float64) {
	n := 0
	for _, st := range r {
		if st.Decision.Mode == ModePredict {
			continue
		}
		expected += StepErrorBound(st.Decision, grid)
		accuracy += StepAccuracy(st.Decision, confidence)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return expected / float64(n), accuracy / float64(n)
}
