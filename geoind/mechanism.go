package geoind

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/noise"
)

// Mechanism is the predictive mechanism PM of the paper (Figs 2-4): at each
// step the budget manager configures (ε_θ, ε_N, l), the predictor guesses
// z̃ from the public run, the private test decides whether z̃ is reported
// (easy) or fresh noise N(ε_N) is (hard). With an Independent manager it is
// the independent mechanism IM (Fig. 1).
//
// By Lemma 2 a run r is released with ε_β(r)·d_∞-privacy, where ε_β(r) =
// Accounting(r); with an ε-bounded manager every run has ε_β(r) <= ε, so
// the mechanism is ε·d_∞-private (Theorem 3).
type Mechanism struct {
	Manager   Manager
	Predictor Predictor // nil means Parrot
	// Noise is the hard steps' mechanism N(ε_N); its Grid must be set
	// (Step refuses continuous output), and the test runs on the secret's
	// grid point too.
	Noise PlanarLaplace
}

func (m *Mechanism) predictor() Predictor {
	if m.Predictor == nil {
		return Parrot{}
	}
	return m.Predictor
}

// ErrOutOfOrder refuses a query earlier than the run's last one: the
// predictor and the managers' budgets assume time moves forward.
var ErrOutOfOrder = errors.New("before the previous query")

// Decide returns the configuration β(r) of the next step at time t and the
// prediction it will test or report. It is a deterministic function of
// public inputs; Step and Accounting both use it.
func (m *Mechanism) Decide(r Run, t time.Time) (Decision, Vec, error) {
	if m.Manager == nil {
		return Decision{}, Vec{}, errors.New("geoind: mechanism has no budget manager")
	}
	if n := len(r); n > 0 && t.Before(r[n-1].Time) {
		return Decision{}, Vec{}, fmt.Errorf("geoind: query time %s %w %s",
			t.Format(time.RFC3339), ErrOutOfOrder, r[n-1].Time.Format(time.RFC3339))
	}
	d, err := m.Manager.Decide(r, t)
	if err != nil {
		return Decision{}, Vec{}, err
	}
	if d.Mode == ModeNoise {
		return d, Vec{}, nil
	}
	z, ok := m.predictor().Predict(r, t)
	if !ok {
		// Nothing to test or report: Θ(0, -∞, ·), fresh noise.
		return Decision{Mode: ModeNoise, EpsN: d.EpsN}, Vec{}, nil
	}
	return d, z, nil
}

// Step sanitises the secret x queried at time t given the run so far and
// returns the new step (which the caller appends to the run). It returns
// ErrExhausted when the budget is spent.
//
// The secret enters only through its grid cell: x is snapped to the grid of
// m.Noise before the test as well as before the noise, so every output (the
// hard flag and the reported value) depends on x only through the integer
// cell (see PlanarLaplace.Release) and never on its low-order bits.
func (m *Mechanism) Step(r Run, x Vec, t time.Time, src noise.Source) (Step, error) {
	if err := m.Noise.Validate(); err != nil {
		return Step{}, err
	}
	c, err := m.Noise.cell(x)
	if err != nil {
		return Step{}, err
	}
	x = Vec{c.i * m.Noise.Grid, c.j * m.Noise.Grid}
	d, pred, err := m.Decide(r, t)
	if err != nil {
		return Step{}, err
	}
	st := Step{Time: t, Decision: d}
	hard := true
	switch d.Mode {
	case ModePredict:
		hard = false
	case ModeTest:
		th := Test{Epsilon: d.EpsTheta / m.Noise.factor(), Threshold: d.Threshold}
		easy, err := th.Easy(x, pred, src)
		if err != nil {
			return Step{}, err
		}
		hard = !easy
	}
	if hard {
		z, err := m.Noise.Release(x, d.EpsN, src)
		if err != nil {
			return Step{}, err
		}
		st.Z = z
	} else {
		st.Z = pred
	}
	st.Hard = hard
	st.Cost = d.Cost(hard)
	return st, nil
}

// Sanitize runs the mechanism over a whole trace of secrets xs at times ts
// and returns the run. It stops early, without error, when the budget is
// exhausted: len(run) is then the number of points covered.
func (m *Mechanism) Sanitize(xs []Vec, ts []time.Time, src noise.Source) (Run, error) {
	if len(xs) != len(ts) {
		return nil, fmt.Errorf("geoind: %d locations but %d times", len(xs), len(ts))
	}
	r := make(Run, 0, len(xs))
	for i, x := range xs {
		st, err := m.Step(r, x, ts[i], src)
		if errors.Is(err, ErrExhausted) {
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("point %d: %w", i, err)
		}
		r = append(r, st)
	}
	return r, nil
}

// Accounting returns ε_β(r) of eq. (5), the budget of Lemma 2, by replaying
// the budget manager on every prefix of r: Σ_i β_θ(r_<i) + b_i·β_N(r_<i).
// It does not trust the costs stored in r, and fails if a stored decision
// differs from the replayed one (the run was not produced by m).
func Accounting(m *Mechanism, r Run) (float64, error) {
	eps := 0.0
	for i, st := range r {
		d, _, err := m.Decide(r[:i], st.Time)
		if err != nil {
			return 0, fmt.Errorf("step %d: %w", i, err)
		}
		if d != st.Decision {
			return 0, fmt.Errorf("step %d: stored decision %+v, manager gives %+v", i, st.Decision, d)
		}
		if d.Mode == ModePredict && st.Hard {
			return 0, fmt.Errorf("step %d: hard step in predict mode", i)
		}
		if d.Mode == ModeNoise && !st.Hard {
			return 0, fmt.Errorf("step %d: easy step in noise mode", i)
		}
		eps += d.Cost(st.Hard)
	}
	return eps, nil
}
