package geoind

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

// StateVersion is the version of the State JSON layout.
const StateVersion = 1

// LatLon is a WGS84 position in JSON.
type LatLon struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

func (l LatLon) point() geo.Point { return geo.Point{Lat: l.Lat, Lon: l.Lon} }

// Config is the public configuration of a Session.
type Config struct {
	// Mechanism is "pm" (predictive, default) or "im" (independent).
	Mechanism string `json:"mechanism"`
	// Manager is "fixed-rate" (default) or "fixed-utility".
	Manager string `json:"manager"`
	Params  Params `json:"params"`
	// Rate is ρ per metre per step (fixed-rate).
	Rate float64 `json:"rate,omitempty"`
	// Accuracy is α in metres (fixed-utility).
	Accuracy float64 `json:"accuracy,omitempty"`
	// Predictor is "parrot" (default) or "linear".
	Predictor string `json:"predictor,omitempty"`
	// Origin is the public origin of the tangent plane.
	Origin LatLon        `json:"origin"`
	Noise  PlanarLaplace `json:"noise"`
}

// NewMechanism builds the mechanism the configuration describes.
func (c Config) NewMechanism() (*Mechanism, error) {
	m := &Mechanism{Noise: c.Noise}
	if err := c.Noise.Validate(); err != nil {
		return nil, err
	}
	switch c.Predictor {
	case "", "parrot":
		m.Predictor = Parrot{}
	case "linear":
		m.Predictor = Linear{}
	default:
		return nil, paramErr("predictor", c.Predictor, `"parrot" or "linear"`)
	}
	p := c.Params.withDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	mech := c.Mechanism
	if mech == "" {
		mech = "pm"
	}
	kind := c.Manager
	if kind == "" {
		kind = "fixed-rate"
	}
	switch {
	case kind == "fixed-rate" && !(c.Rate > 0 && c.Rate <= p.Epsilon):
		return nil, paramErr("rate", c.Rate, "in (0, epsilon]")
	case kind == "fixed-utility" && (!(c.Accuracy > 0) || math.IsInf(c.Accuracy, 1)):
		return nil, paramErr("accuracy", c.Accuracy, "finite and > 0 metres")
	case kind != "fixed-rate" && kind != "fixed-utility":
		return nil, paramErr("manager", c.Manager, `"fixed-rate" or "fixed-utility"`)
	}
	switch {
	case mech == "im" && kind == "fixed-rate":
		m.Manager = IndependentRate(p.Epsilon, c.Rate)
	case mech == "im":
		m.Manager = IndependentUtility(p.Epsilon, c.Accuracy, p.Confidence)
	case mech == "pm" && kind == "fixed-rate":
		m.Manager = FixedRate{Params: c.Params, Rate: c.Rate}
	case mech == "pm":
		m.Manager = FixedUtility{Params: c.Params, Accuracy: c.Accuracy}
	default:
		return nil, paramErr("mechanism", c.Mechanism, `"pm" or "im"`)
	}
	return m, nil
}

// State is everything a Session keeps between queries: the public
// configuration, the run so far and the budget spent. It holds no secret
// location, so storing it reveals nothing beyond what was released.
type State struct {
	Version int     `json:"version"`
	Config  Config  `json:"config"`
	Run     Run     `json:"run"`
	Spent   float64 `json:"spent"`
}

// Session is the online API: one Query per location request, with the
// state persisted by the caller between queries (see QueryFile).
type Session struct {
	st    State
	mech  *Mechanism
	plane *Plane
	src   noise.Source
}

// NewSession starts a session with an empty run. src nil means crypto/rand.
func NewSession(cfg Config, src noise.Source) (*Session, error) {
	return Resume(State{Version: StateVersion, Config: cfg}, src)
}

// Resume continues a session from a stored state. It rejects a state of
// another version, and one whose recorded spending differs from the
// Lemma 2 accounting of its run (a corrupted or edited state).
func Resume(st State, src noise.Source) (*Session, error) {
	if st.Version != StateVersion {
		return nil, fmt.Errorf("geoind: session state version %d, want %d", st.Version, StateVersion)
	}
	mech, err := st.Config.NewMechanism()
	if err != nil {
		return nil, err
	}
	plane, err := NewPlane(st.Config.Origin.point())
	if err != nil {
		return nil, err
	}
	acc, err := Accounting(mech, st.Run)
	if err != nil {
		return nil, fmt.Errorf("geoind: session state: %w", err)
	}
	if sum := st.Run.Spent(); sum != st.Spent || math.Abs(acc-sum) > 1e-12*st.Config.Params.Epsilon {
		return nil, fmt.Errorf("geoind: session state records %g spent, its run accounts for %g", st.Spent, acc)
	}
	st.Run = append(Run(nil), st.Run...)
	return &Session{st: st, mech: mech, plane: plane, src: src}, nil
}

// State returns a copy of the session state, ready for json.Marshal.
func (s *Session) State() State {
	st := s.st
	st.Run = append(Run(nil), s.st.Run...)
	return st
}

// Plane returns the session's tangent plane.
func (s *Session) Plane() *Plane { return s.plane }

// Report is the answer to one query.
type Report struct {
	Step      int       `json:"step"` // 0-based index in the run
	Lat       float64   `json:"lat"`
	Lon       float64   `json:"lon"`
	Time      time.Time `json:"time"`
	Hard      bool      `json:"hard"`
	Mode      Mode      `json:"mode"`
	Cost      float64   `json:"cost"`
	Spent     float64   `json:"spent"`
	Budget    float64   `json:"budget"`
	Remaining float64   `json:"remaining"`
	// Accuracy is the step's α(δ) bound of Proposition 4 in metres,
	// max(α_N, l + α_θ); 0 when the test was skipped towards the
	// prediction (no bound holds then).
	Accuracy float64 `json:"accuracy_m"`
}

// Query sanitises the secret location p queried at time t and appends the
// step to the session's run. The session is unchanged on error, including
// ErrExhausted.
func (s *Session) Query(p geo.Point, t time.Time) (Report, error) {
	if err := p.Validate(); err != nil {
		return Report{}, err
	}
	x := s.plane.Forward(p)
	st, err := s.mech.Step(s.st.Run, x, t, s.src)
	if err != nil {
		return Report{}, err
	}
	s.st.Run = append(s.st.Run, st)
	s.st.Spent += st.Cost
	z := s.plane.Inverse(st.Z)
	budget := s.mech.Manager.Budget()
	return Report{
		Step: len(s.st.Run) - 1, Lat: z.Lat, Lon: z.Lon, Time: t,
		Hard: st.Hard, Mode: st.Decision.Mode, Cost: st.Cost,
		Spent: s.st.Spent, Budget: budget, Remaining: math.Max(0, budget-s.st.Spent),
		Accuracy: StepAccuracy(st.Decision, s.st.Config.Params.withDefaults().Confidence),
	}, nil
}

// StepAccuracy returns Proposition 4's α(δ) = max(α_N(δ), l + α_θ(δ)) for a
// decision: α_N alone for ModeNoise, 0 for ModePredict (no bound).
func StepAccuracy(d Decision, confidence float64) float64 {
	switch d.Mode {
	case ModeNoise:
		return NoiseAccuracy(d.EpsN, confidence)
	case ModeTest:
		return math.Max(NoiseAccuracy(d.EpsN, confidence), d.Threshold+TestAccuracy(d.EpsTheta, confidence))
	}
	return 0
}

// IsExhausted reports whether err means the budget is spent.
func IsExhausted(err error) bool { return errors.Is(err, ErrExhausted) }
