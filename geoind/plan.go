package geoind

import (
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/trace"
)

// MaxPlannedQueries is the most queries a Planned manager plans for; it
// keeps the rounding of the budget arithmetic far below the margin its
// guarantee leaves (see Planned).
const MaxPlannedQueries = 1_000_000

// planReserve is the share of the even split ε/N that Planned keeps in
// reserve for every query still to come.
const planReserve = 0.5

// planSlack widens the public bounds on a Planned manager's ε_N by far
// more than the budget arithmetic can round (relative 10^-6 against at
// most 10^-9 at MaxPlannedQueries), so that the check made before any
// sampling holds for every step actually drawn.
const planSlack = 1e-6

// Planned is the budget manager of an offline release whose number of
// queries N is known before the first one: the points of a recorded trace,
// whose timestamps, and so whose number, are public. It answers all N
// queries, whatever the positions, and spreads the budget an easy step
// saves over the steps left. At each step, with R the budget left and n the queries left
// (this one included):
//
//   - PM: the rate is ρ = R/n in the fixed-rate formula of the paper's
//     Fig. 7, ε_N = ρ/((1-PR)+k), ε_θ = k ε_N, l = c_θ/(γ ε_θ) (k =
//     TestShare, PR the run's prediction-rate estimate), except that the
//     step's worst case ε_θ+ε_N is capped at (R-(n-1)q)·(1-10^-9), with
//     q = ε/(2N): every later query keeps a reserve q. Budget an easy step
//     saves is spread over the steps left (R/n grows), and so is the
//     budget of steps the elapsed-time skip reports for free.
//   - IM (Independent): ε_N = (R/n)·(1-10^-9), which is ε/N at every step.
//
// Coverage: R >= n·q holds before every PM step (it holds at the start,
// R = ε = 2N·q, and a step costs at most R-(n-1)q), so the cap is at
// least q and the N-th step is always paid for; IM spends less than R/n
// per step. Hence the run is never exhausted before its N-th query and
// ε(r) <= ε (Theorem 3 applies: the decisions are a deterministic
// function of the public run, N and the parameters). Every hard step of
// PM draws ε_N >= q/(1+k) = ε/(2N(1+k)), of IM ε_N >= ε/N; noiseRange
// checks these bounds against MaxNoiseRadius before anything is drawn. The
// budget left R is summed with compensated arithmetic, and the factor
// 1-10^-9 leaves a margin that rounding cannot use up for N up to
// MaxPlannedQueries.
type Planned struct {
	Params
	// Queries is N, the number of queries the plan covers, 1 to
	// MaxPlannedQueries. A query past the N-th is refused (ErrExhausted).
	Queries int `json:"queries"`
	// Independent selects IM: fresh noise at every step, no test.
	Independent bool `json:"independent,omitempty"`
}

// Budget returns ε.
func (m Planned) Budget() float64 { return m.Epsilon }

// Decide returns β(r) for a query at time t.
func (m Planned) Decide(r Run, t time.Time) (Decision, error) {
	p := m.Params.withDefaults()
	if err := p.validate(); err != nil {
		return Decision{}, err
	}
	if err := checkQueries(m.Queries); err != nil {
		return Decision{}, err
	}
	n := m.Queries - len(r)
	if n < 1 {
		return Decision{}, ErrExhausted
	}
	rem := p.Epsilon - spentCompensated(r)
	if m.Independent {
		en := rem / float64(n) * lastScale
		if !(en > 0) {
			return Decision{}, ErrExhausted // unreachable: see the type's proof
		}
		return Decision{Mode: ModeNoise, EpsN: en}, nil
	}
	q := planReserve * p.Epsilon / float64(m.Queries)
	limit := (rem - float64(n-1)*q) * lastScale // the most this step may cost
	if !(limit > 0) {
		return Decision{}, ErrExhausted // unreachable: see the type's proof
	}
	k := p.TestShare()
	en := rem / float64(n) / ((1 - p.PredictionRate(r)) + k)
	en = math.Min(en, limit/(1+k))
	d := p.threshold(Decision{Mode: ModeTest, EpsTheta: k * en, EpsN: en})
	return p.skip(d, r, t), nil
}

// noiseRange returns the public bounds on ε_N of the type's proof.
func (m Planned) noiseRange() (lo, hi float64) {
	p := m.Params.withDefaults()
	n := float64(m.Queries)
	if m.Independent {
		return p.Epsilon / n * lastScale * (1 - planSlack), p.Epsilon / n * (1 + planSlack)
	}
	k := p.TestShare()
	return planReserve * p.Epsilon / n * lastScale / (1 + k) * (1 - planSlack), p.Epsilon / (1 + k)
}

func checkQueries(n int) error {
	if n < 1 || n > MaxPlannedQueries {
		return paramErr("queries", n, fmt.Sprintf("the number of queries the plan covers, 1 to %d", MaxPlannedQueries))
	}
	return nil
}

// spentCompensated is r.Spent() summed with compensated (TwoSum)
// arithmetic, within a few ulps of ε whatever the run's length.
func spentCompensated(r Run) float64 {
	s, c := 0.0, 0.0
	for _, st := range r {
		var e float64
		s, e = numeric.TwoSum(s, st.Cost)
		c += e
	}
	return s + c
}

// Plan is what releasing a given number of points costs, computed before
// anything is drawn from public inputs only: the configuration and the
// number of points.
type Plan struct {
	// Points is the number of points (queries) planned for.
	Points int `json:"points"`
	// EpsN is ε_N per metre of a fresh-noise step at the start of the run,
	// with the prediction rate at its prior PR0 (for the planned manager:
	// for as long as the observed rate stays there; for IM, every step).
	EpsN float64 `json:"eps_n"`
	// ExpectedErrorM is ExpectedError(EpsN) = 2/ε_N in metres: the mean
	// distance between a point and its report when the step draws fresh
	// noise.
	ExpectedErrorM float64 `json:"expected_error_m"`
	// AccuracyM is such a step's α at the configuration's confidence
	// (StepAccuracy, Proposition 4): with that probability its report is
	// within AccuracyM of the point, whether fresh noise or a prediction.
	AccuracyM float64 `json:"accuracy_m"`
	// WorstErrorM is ExpectedError at the smallest ε_N the manager can
	// configure for these points whatever the positions (the bound checked
	// against MaxNoiseRadius).
	WorstErrorM float64 `json:"worst_error_m"`
	// CoversAll says whether every point is answered whatever the
	// positions, as proven from the configuration alone: always for the
	// planned manager; for the others when Points steps at their worst
	// case cost fit in ε. False means coverage depends on the data (the
	// prediction rate it yields).
	CoversAll bool `json:"covers_all"`
}

// Plan returns the plan of a release of n points under c, or the error of
// a configuration that cannot release them (a *param.Error: for the
// planned manager, "queries" when n points would need noise wider than
// MaxNoiseRadius).
func (c Config) Plan(n int) (Plan, error) {
	if err := checkQueries(n); err != nil {
		return Plan{}, err
	}
	c.Queries = n
	m, err := c.NewMechanism()
	if err != nil {
		return Plan{}, err
	}
	d0, err := m.Manager.Decide(nil, time.Time{})
	if err != nil {
		return Plan{}, err
	}
	conf := c.Params.withDefaults().Confidence
	pl := Plan{Points: n, EpsN: d0.EpsN, ExpectedErrorM: ExpectedError(d0.EpsN), AccuracyM: StepAccuracy(d0, conf)}
	lo, hi, _ := noiseRange(m.Manager)
	pl.WorstErrorM = ExpectedError(lo)
	switch mg := m.Manager.(type) {
	case Planned:
		pl.CoversAll = true
	case Independent:
		pl.CoversAll = float64(n)*mg.PerStep <= mg.Epsilon
	default:
		k := c.Params.withDefaults().TestShare()
		pl.CoversAll = float64(n)*(1+k)*hi <= c.Params.Epsilon
	}
	return pl, nil
}

// PersonPlan is the plan of one person's release in SanitizeByPerson.
type PersonPlan struct {
	// Person is the grouping key, as in PersonRelease.
	Person string `json:"person"`
	Plan
}

// PlanByPerson groups traces by person as SanitizeByPerson does and
// returns each person's plan (over all their points), in order of first
// appearance, without drawing anything. The error names the first person
// whose points cannot be released under cfg; plans holds every person's
// plan up to it.
func PlanByPerson(cfg Config, traces []*trace.Trace, person func(*trace.Trace) string) ([]PersonPlan, error) {
	order, groups := groupByPerson(traces, person)
	var plans []PersonPlan
	for _, k := range order {
		n := 0
		for _, i := range groups[k] {
			n += traces[i].Len()
		}
		if n == 0 {
			plans = append(plans, PersonPlan{Person: k})
			continue
		}
		pl, err := cfg.Plan(n)
		if err != nil {
			return plans, &PlanError{Person: k, Points: n, Err: err}
		}
		plans = append(plans, PersonPlan{Person: k, Plan: pl})
	}
	return plans, nil
}

// PlanError says whose points a configuration cannot release and why.
type PlanError struct {
	Person string
	Points int
	Err    error
}

func (e *PlanError) Error() string {
	return fmt.Sprintf("%s: %d points: %v", e.Person, e.Points, e.Err)
}

func (e *PlanError) Unwrap() error { return e.Err }

// groupByPerson returns the person keys in order of first appearance and
// the indices of each person's traces.
func groupByPerson(traces []*trace.Trace, person func(*trace.Trace) string) ([]string, map[string][]int) {
	if person == nil {
		person = func(t *trace.Trace) string { return t.UID }
	}
	var order []string
	groups := map[string][]int{}
	for i, tr := range traces {
		k := person(tr)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	return order, groups
}

// template returns c ready for Validate when it is the shared
// configuration of several people's releases: a planned configuration
// without Queries is checked as a plan of one query (its other
// parameters), each person's plan being checked with their points.
func (c Config) template() Config {
	if c.Manager == ManagerPlanned && c.Queries == 0 {
		c.Queries = 1
	}
	return c
}

// thinningPeriods are the periods SuggestThinning tries, in order.
var thinningPeriods = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// SuggestThinning returns the shortest round period (1 s, 2 s, 5 s, … 1
// h, … 24 h) longer than after at which thinning traces (trace.Thin) lets
// cfg release every person's points with every plan's ExpectedErrorM at
// most maxErrorM (0: no limit), with those plans. ok is false when no
// period does: even a point a day per person costs more than the budget
// allows. Like thinning, it looks at the timestamps only.
func SuggestThinning(cfg Config, traces []*trace.Trace, person func(*trace.Trace) string, after time.Duration, maxErrorM float64) (every time.Duration, plans []PersonPlan, ok bool) {
	if person == nil {
		person = func(t *trace.Trace) string { return t.UID }
	}
	for _, d := range thinningPeriods {
		if d <= after {
			continue
		}
		thin := make([]*trace.Trace, len(traces))
		key := make(map[*trace.Trace]string, len(traces))
		for i, t := range traces {
			thin[i] = t.Thin(d)
			key[thin[i]] = person(t)
		}
		plans, err := PlanByPerson(cfg, thin, func(t *trace.Trace) string { return key[t] })
		if err != nil {
			continue
		}
		if maxErrorM > 0 && WorstPlan(plans).ExpectedErrorM > maxErrorM {
			continue
		}
		return d, plans, true
	}
	return 0, nil, false
}

// WorstPlan returns the plan with the largest ExpectedErrorM (the zero
// PersonPlan if plans is empty).
func WorstPlan(plans []PersonPlan) PersonPlan {
	var w PersonPlan
	for _, p := range plans {
		if p.ExpectedErrorM > w.ExpectedErrorM {
			w = p
		}
	}
	return w
}
