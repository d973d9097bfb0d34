// The case study of the predictive mechanism's paper (Chatzikokolakis,
// Palamidessi and Stronati, Sec. V), computed with package geoind's
// mechanisms and managers.

package repro

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// PredictiveCaseStudy configures the reproduction of the paper's section V: users
// query a location-based service while slow (under 15 km/h); queries come
// every minute, or after an hour-long jump with probability p; IM and PM
// (with and without the elapsed-time skip) run under fixed-rate and
// fixed-utility managers.
type PredictiveCaseStudy struct {
	Epsilon      float64       `json:"epsilon"`       // ε per metre: ln 10 / 100 m
	RateFraction float64       `json:"rate_fraction"` // fixed rate ρ/ε: 0.033
	Accuracy     float64       `json:"accuracy_m"`    // fixed utility α(0.9): 3000 m
	Eta          float64       `json:"eta"`           // 0.5
	Gamma        float64       `json:"gamma"`         // 0.8
	PR0          float64       `json:"pr0"`           // initial prediction rate
	MaxSpeed     float64       `json:"max_speed"`     // skip strategy speed, m/s
	SlowSpeed    float64       `json:"slow_speed"`    // query only below this speed, m/s
	JumpProbs    []float64     `json:"jump_probs"`    // p values
	Samplings    int           `json:"samplings"`     // samplings per trace and p
	Short        time.Duration `json:"short"`         // 1 min
	Long         time.Duration `json:"long"`          // 60 min
	Jitter       float64       `json:"jitter"`        // sd of an interval, relative
	MaxGap       time.Duration `json:"max_gap"`       // GPS gaps that split a trace
	Origin       geo.Point     `json:"origin"`        // public plane origin
	Grid         float64       `json:"grid_m"`        // output grid step, metres (> 0)
}

// DefaultPredictiveCaseStudy returns the paper's configuration. Where the paper is
// silent we choose: PR0 = 0.5 (just above the break-even 0.46), a skip
// speed equal to the 15 km/h query-speed limit, a jitter of 10 % of the
// interval, GPS gaps over 10 min split traces, the plane origin at
// BeijingCentre, and a 1 m output grid (the paper's outputs are
// continuous, which this package refuses to release; at 1 m the grid
// changes errors by well under a metre).
func DefaultPredictiveCaseStudy() PredictiveCaseStudy {
	ps := make([]float64, 11)
	for i := range ps {
		ps[i] = float64(i) / 10
	}
	return PredictiveCaseStudy{
		Epsilon: math.Ln10 / 100, RateFraction: 0.033, Accuracy: 3000,
		Eta: 0.5, Gamma: 0.8, PR0: 0.5,
		MaxSpeed: 15 / 3.6, SlowSpeed: 15 / 3.6,
		JumpProbs: ps, Samplings: 10,
		Short: time.Minute, Long: time.Hour, Jitter: 0.1, MaxGap: 10 * time.Minute,
		Origin: geoind.BeijingCentre, Grid: 1,
	}
}

func (c PredictiveCaseStudy) validate() error {
	switch {
	case param.Positive("epsilon", c.Epsilon) != nil:
		return param.Positive("epsilon", c.Epsilon)
	case !(c.RateFraction > 0 && c.RateFraction <= 1):
		return predictiveParamErr("rate fraction", c.RateFraction, "in (0, 1]")
	case !(c.Accuracy > 0):
		return predictiveParamErr("accuracy", c.Accuracy, "> 0 metres")
	case !(c.SlowSpeed > 0):
		return predictiveParamErr("slow speed", c.SlowSpeed, "> 0 m/s")
	case c.Samplings < 1:
		return predictiveParamErr("samplings", c.Samplings, ">= 1")
	case c.Short <= 0 || c.Long <= 0:
		return predictiveParamErr("intervals", []time.Duration{c.Short, c.Long}, "> 0")
	case !(c.Jitter >= 0 && c.Jitter < 0.5):
		return predictiveParamErr("jitter", c.Jitter, "in [0, 0.5)")
	case len(c.JumpProbs) == 0:
		return predictiveParamErr("jump probabilities", c.JumpProbs, "at least one")
	}
	if err := (geoind.PlanarLaplace{Grid: c.Grid}).Validate(); err != nil {
		return err
	}
	for _, p := range c.JumpProbs {
		if !(p >= 0 && p <= 1) {
			return predictiveParamErr("jump probability", p, "in [0, 1]")
		}
	}
	return nil
}

// PredictiveQueryPoint is a position where the user may query: slow and known.
type PredictiveQueryPoint struct {
	Time time.Time
	X    geoind.Vec
}

// speedWindow is the time over which the speed of a point is measured; GPS
// jitter between 1-5 s fixes would make instantaneous speeds meaningless.
const (
	predictiveResampleStep = 10 * time.Second
	predictiveSpeedHalfWin = 3 // resampled steps on each side: a 60 s window
)

// SlowPoints returns the positions of tr, resampled every 10 s within
// pieces without GPS gaps over MaxGap, where the speed over a centred
// one-minute window is below SlowSpeed.
func (c PredictiveCaseStudy) SlowPoints(plane *geoind.Plane, tr *trace.Trace) ([]PredictiveQueryPoint, error) {
	var out []PredictiveQueryPoint
	for _, piece := range tr.Segment(c.MaxGap) {
		if piece.Len() < 2 {
			continue
		}
		rs, err := piece.Resample(predictiveResampleStep)
		if err != nil {
			if errors.Is(err, trace.ErrEmpty) {
				continue
			}
			return nil, fmt.Errorf("%s: %w", tr.Name, err)
		}
		n := rs.Len()
		xs := make([]geoind.Vec, n)
		for i, p := range rs.Points {
			xs[i] = plane.Forward(p.Geo())
		}
		for i := range n {
			a, b := max(i-predictiveSpeedHalfWin, 0), min(i+predictiveSpeedHalfWin, n-1)
			if a == b {
				continue
			}
			dt := rs.Points[b].Time.Sub(rs.Points[a].Time).Seconds()
			if geoind.Dist(xs[a], xs[b])/dt < c.SlowSpeed {
				out = append(out, PredictiveQueryPoint{Time: rs.Points[i].Time, X: xs[i]})
			}
		}
	}
	return out, nil
}

// Sample draws one query trace from the slow points: the first query at
// the first slow point, then each next one at the first slow point at
// least Short (or, with probability p, Long) after the previous query, the
// interval multiplied by 1 + Jitter·N(0, 1).
func (c PredictiveCaseStudy) Sample(pts []PredictiveQueryPoint, p float64, src noise.Source) ([]geoind.Vec, []time.Time) {
	var xs []geoind.Vec
	var ts []time.Time
	if len(pts) == 0 {
		return nil, nil
	}
	t := pts[0].Time
	for {
		i := sort.Search(len(pts), func(i int) bool { return !pts[i].Time.Before(t) })
		if i == len(pts) {
			return xs, ts
		}
		xs = append(xs, pts[i].X)
		ts = append(ts, pts[i].Time)
		iv := c.Short
		if noise.Uniform(src) < p {
			iv = c.Long
		}
		f := math.Max(1+c.Jitter*noise.Normal(src), 0.5)
		t = pts[i].Time.Add(time.Duration(f * float64(iv)))
	}
}

// PredictiveMetrics are the statistics of one mechanism over all sampled traces of
// one jump probability, in the terms of the paper's Figs 8-9.
type PredictiveMetrics struct {
	// MeanError is E[d_err]: the mean over runs of the run's average
	// distance between secret and reported location (eq. 1), metres.
	MeanError float64 `json:"mean_error_m"`
	// Alpha90 is the 90th percentile of the per-point errors, metres.
	Alpha90 float64 `json:"alpha90_m"`
	// Rate is E[ρ]/ε: the mean over runs of ε(r)/|r|, as a fraction of ε.
	Rate float64 `json:"rate"`
	// PointsCovered is 1/Rate, the number of queries the budget pays for
	// at that rate (the paper's "17 points" for IM at 3 km).
	PointsCovered float64 `json:"points_covered"`
	// PredictionRate is easy/tested over all runs.
	PredictionRate float64 `json:"prediction_rate"`
	// TestShare is Σε_θ / Σε(r), the budget spent on tests.
	TestShare float64 `json:"test_budget_share"`
	// Skipped is the fraction of reported points whose test was skipped.
	Skipped float64 `json:"skipped_share"`
	// Exhausted is the fraction of runs stopped by the budget.
	Exhausted float64 `json:"exhausted_share"`
	// Queries and Reported are the mean numbers of queries per sampled
	// trace and of points reported before the budget ran out.
	Queries  float64 `json:"mean_queries"`
	Reported float64 `json:"mean_reported"`
	Runs     int     `json:"runs"`
}

// PredictiveRow holds one jump probability's metrics.
type PredictiveRow struct {
	P      float64           `json:"p"`
	IM     PredictiveMetrics `json:"im"`
	PM     PredictiveMetrics `json:"pm"`
	PMSkip PredictiveMetrics `json:"pm_skip"`
}

// PredictiveCaseStudyResult is the output of PredictiveCaseStudy.Run.
type PredictiveCaseStudyResult struct {
	FixedRate    []PredictiveRow     `json:"fixed_rate"`
	FixedUtility []PredictiveRow     `json:"fixed_utility"`
	Traces       int                 `json:"traces"`      // input traces with slow points
	SlowPoints   int                 `json:"slow_points"` // 10 s slow positions in all
	Config       PredictiveCaseStudy `json:"config"`
}

// predictiveAcc accumulates one mechanism's runs.
type predictiveAcc struct {
	errs                      []float64
	sumRunErr, sumRate        float64
	runs, nonEmpty, exhausted int
	queries, reported         int
	tested, easy, skipped     int
	testSpent, spent          float64
}

func (a *predictiveAcc) add(xs []geoind.Vec, r geoind.Run, eps float64) {
	a.runs++
	a.queries += len(xs)
	a.reported += len(r)
	if len(r) < len(xs) {
		a.exhausted++
	}
	if len(r) == 0 {
		return
	}
	a.nonEmpty++
	s := 0.0
	for i, st := range r {
		d := geoind.Dist(xs[i], st.Z)
		a.errs = append(a.errs, d)
		s += d
	}
	a.sumRunErr += s / float64(len(r))
	st := r.Stats()
	a.sumRate += st.Spent / float64(len(r)) / eps
	a.tested += st.Tested
	a.easy += st.Easy
	a.skipped += st.Skipped
	a.testSpent += st.TestSpent
	a.spent += st.Spent
}

func (a *predictiveAcc) metrics() PredictiveMetrics {
	m := PredictiveMetrics{Runs: a.runs}
	if a.runs == 0 {
		return m
	}
	if len(a.errs) > 0 {
		e := slices.Clone(a.errs)
		slices.Sort(e)
		m.Alpha90 = e[int(math.Ceil(0.9*float64(len(e))))-1]
	}
	// Runs without a reported point (budget below one step) carry no error
	// or rate.
	if a.nonEmpty > 0 {
		m.MeanError = a.sumRunErr / float64(a.nonEmpty)
		m.Rate = a.sumRate / float64(a.nonEmpty)
	}
	if m.Rate > 0 {
		m.PointsCovered = 1 / m.Rate
	}
	if a.tested > 0 {
		m.PredictionRate = float64(a.easy) / float64(a.tested)
	}
	if a.spent > 0 {
		m.TestShare = a.testSpent / a.spent
	}
	if a.reported > 0 {
		m.Skipped = float64(a.skipped) / float64(a.reported)
	}
	m.Exhausted = float64(a.exhausted) / float64(a.runs)
	m.Queries = float64(a.queries) / float64(a.runs)
	m.Reported = float64(a.reported) / float64(a.runs)
	return m
}

// Mechanisms returns the six mechanisms of the case study: IM, PM and PM
// with the elapsed-time skip, under the fixed-rate (first three) and the
// fixed-utility (last three) managers.
func (c PredictiveCaseStudy) Mechanisms() [2][3]*geoind.Mechanism {
	p := geoind.Params{Epsilon: c.Epsilon, Eta: c.Eta, Gamma: c.Gamma, PR0: c.PR0}
	ps := p
	ps.MaxSpeed = c.MaxSpeed
	rate := c.RateFraction * c.Epsilon
	nm := geoind.PlanarLaplace{Grid: c.Grid}
	mk := func(m geoind.Manager) *geoind.Mechanism {
		return &geoind.Mechanism{Manager: m, Predictor: geoind.Parrot{}, Noise: nm}
	}
	return [2][3]*geoind.Mechanism{
		{mk(geoind.IndependentRate(c.Epsilon, rate)), mk(geoind.FixedRate{Params: p, Rate: rate}), mk(geoind.FixedRate{Params: ps, Rate: rate})},
		{mk(geoind.IndependentUtility(c.Epsilon, c.Accuracy, 0.9)), mk(geoind.FixedUtility{Params: p, Accuracy: c.Accuracy}), mk(geoind.FixedUtility{Params: ps, Accuracy: c.Accuracy})},
	}
}

// Run executes the case study on traces. progress, if not nil, is called
// once per trace and jump probability.
func (c PredictiveCaseStudy) Run(traces []*trace.Trace, src noise.Source, progress func()) (*PredictiveCaseStudyResult, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	plane, err := geoind.NewPlane(c.Origin)
	if err != nil {
		return nil, err
	}
	res := &PredictiveCaseStudyResult{Config: c}
	var slow [][]PredictiveQueryPoint
	for _, tr := range traces {
		pts, err := c.SlowPoints(plane, tr)
		if err != nil {
			return nil, err
		}
		if len(pts) > 0 {
			slow = append(slow, pts)
			res.SlowPoints += len(pts)
		}
	}
	res.Traces = len(slow)
	if len(slow) == 0 {
		return nil, errors.New("repro: predictive case study: no trace has slow points")
	}
	mechs := c.Mechanisms()
	for _, p := range c.JumpProbs {
		var accs [2][3]predictiveAcc
		for _, pts := range slow {
			for range c.Samplings {
				xs, ts := c.Sample(pts, p, src)
				for k := range mechs {
					for j, m := range mechs[k] {
						r, err := m.Sanitize(xs, ts, src)
						if err != nil {
							return nil, err
						}
						accs[k][j].add(xs, r, c.Epsilon)
					}
				}
			}
			if progress != nil {
				progress()
			}
		}
		for k, rows := range []*[]PredictiveRow{&res.FixedRate, &res.FixedUtility} {
			*rows = append(*rows, PredictiveRow{P: p, IM: accs[k][0].metrics(), PM: accs[k][1].metrics(), PMSkip: accs[k][2].metrics()})
		}
	}
	return res, nil
}

// predictiveParamErr is an invalid case-study parameter.
func predictiveParamErr(name string, v any, want string) error {
	return param.Invalid(name, v, "want "+want)
}
