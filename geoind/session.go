package geoind

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

// StateVersion is the version of the State JSON layout. Version 2 added
// the Seal; version 3 seals the state's place by Seal.PathMAC instead of
// writing its absolute path into a file that is shared. Version 2 states
// are still read (and written as version 3 at their next query); version
// 1 states (unsealed) are refused.
const StateVersion = 3

// knownState reports whether a state of version v is read.
func knownState(v int) bool { return v == StateVersion || v == 2 }

// LatLon is the WGS84 position geo.Point. As an alias it has the same
// JSON fields ("lat", "lon"), so states and certificates read and write
// as before.
//
// Deprecated: use geo.Point.
type LatLon = geo.Point

// MechanismKind names the mechanism of a Config: its values are the
// constants below (the spellings of --mechanism, the JSON of sessions and
// certificates).
type MechanismKind string

const (
	// MechanismPredictive is the predictive mechanism ("pm").
	MechanismPredictive MechanismKind = "pm"
	// MechanismIndependent releases every point by planar Laplace ("im").
	MechanismIndependent MechanismKind = "im"
)

// ManagerKind names the budget manager of a Config.
type ManagerKind string

const (
	// ManagerFixedRate spends a fixed Rate per step (FixedRate).
	ManagerFixedRate ManagerKind = "fixed-rate"
	// ManagerFixedUtility configures every step for a fixed Accuracy
	// (FixedUtility).
	ManagerFixedUtility ManagerKind = "fixed-utility"
	// ManagerPlanned covers a release of Queries points known in advance
	// (Planned).
	ManagerPlanned ManagerKind = "planned"
)

// PredictorKind names the predictor of a Config.
type PredictorKind string

const (
	// PredictorParrot predicts the last reported point (Parrot).
	PredictorParrot PredictorKind = "parrot"
	// PredictorLinear extrapolates the last two reports (Linear).
	PredictorLinear PredictorKind = "linear"
)

// Config is the public configuration of a Session.
type Config struct {
	// Mechanism is MechanismPredictive ("pm", the default when empty) or
	// MechanismIndependent ("im").
	Mechanism MechanismKind `json:"mechanism"`
	// Manager is ManagerFixedRate (the default when empty),
	// ManagerFixedUtility or ManagerPlanned (a release of Queries points
	// known in advance, all of them covered).
	Manager ManagerKind `json:"manager"`
	Params  Params      `json:"params"`
	// Rate is ρ per metre per step (fixed-rate).
	Rate float64 `json:"rate,omitempty"`
	// Accuracy is α in metres (fixed-utility).
	Accuracy float64 `json:"accuracy,omitempty"`
	// Queries is N of the planned manager, the number of queries its plan
	// covers; a session of the planned manager needs it. SanitizeByPerson
	// sets it to each person's number of points, and the configuration in
	// a Certificate leaves it 0: each person's is their points.
	Queries int `json:"queries,omitempty"`
	// Predictor is PredictorParrot (the default when empty) or
	// PredictorLinear.
	Predictor PredictorKind `json:"predictor,omitempty"`
	// Origin is the public origin of the tangent plane and its grid: a
	// point chosen without looking at the data (a city centre), never one
	// derived from it.
	Origin geo.Point `json:"origin"`
	// Noise is the planar Laplace mechanism; its Grid is required.
	Noise PlanarLaplace `json:"noise"`
}

// Validate checks the configuration, including, from public parameters
// only, that every hard step the budget manager can configure samples
// representable noise: the smallest ε_N it can ask for must pass
// CheckNoiseScale, and the grid must be fine enough for the whole range of
// ε_N (SamplingEpsilon). The error is a *param.Error naming the field to
// change.
func (c Config) Validate() error {
	_, err := c.NewMechanism()
	return err
}

// NewMechanism builds the mechanism the configuration describes, after the
// checks of Validate.
func (c Config) NewMechanism() (*Mechanism, error) {
	m := &Mechanism{Noise: c.Noise}
	if err := c.Noise.Validate(); err != nil {
		return nil, err
	}
	switch c.Predictor {
	case "", PredictorParrot:
		m.Predictor = Parrot{}
	case PredictorLinear:
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
		mech = MechanismPredictive
	}
	kind := c.Manager
	if kind == "" {
		kind = ManagerFixedRate
	}
	switch {
	case kind == ManagerFixedRate && !(c.Rate > 0 && c.Rate <= p.Epsilon):
		return nil, paramErr("rate", c.Rate, "in (0, epsilon]")
	case kind == ManagerFixedUtility && (!(c.Accuracy > 0) || math.IsInf(c.Accuracy, 1)):
		return nil, paramErr("accuracy", c.Accuracy, "finite and > 0 metres")
	case kind == ManagerPlanned:
		if err := checkQueries(c.Queries); err != nil {
			return nil, err
		}
	case kind != ManagerFixedRate && kind != ManagerFixedUtility:
		return nil, paramErr("manager", c.Manager, `"fixed-rate", "fixed-utility" or "planned"`)
	}
	switch {
	case (mech == MechanismPredictive || mech == MechanismIndependent) && kind == ManagerPlanned:
		m.Manager = Planned{Params: c.Params, Queries: c.Queries, Independent: mech == MechanismIndependent}
	case mech == MechanismIndependent && kind == ManagerFixedRate:
		m.Manager = IndependentRate(p.Epsilon, c.Rate)
	case mech == MechanismIndependent:
		m.Manager = IndependentUtility(p.Epsilon, c.Accuracy, p.Confidence)
	case mech == MechanismPredictive && kind == ManagerFixedRate:
		m.Manager = FixedRate{Params: c.Params, Rate: c.Rate}
	case mech == MechanismPredictive:
		m.Manager = FixedUtility{Params: c.Params, Accuracy: c.Accuracy}
	default:
		return nil, paramErr("mechanism", c.Mechanism, `"pm" or "im"`)
	}
	if lo, hi, ok := noiseRange(m.Manager); ok {
		if CheckNoiseScale("epsilon", lo) != nil {
			r := noise.PlanarLaplace{Epsilon: lo}.RadiusQuantile(NoiseRadiusConfidence)
			what := fmt.Sprintf("noise the tangent plane can represent: the smallest per-step noise this manager can draw, ε_N = %.3g per metre, exceeds %s with probability 1e-9, beyond MaxNoiseRadius (%g km)", lo, noiseKm(r), MaxNoiseRadius/1000)
			switch kind {
			case ManagerFixedUtility:
				return nil, paramErr("accuracy", c.Accuracy, what+"; lower the accuracy α")
			case ManagerPlanned:
				return nil, paramErr("queries", c.Queries, what+"; release fewer points (thin the trace) or raise the budget epsilon")
			}
			return nil, paramErr("rate", c.Rate, what+"; raise the rate (per metre per step) or the budget epsilon")
		}
		for _, e := range []float64{lo, hi} {
			if _, err := SamplingEpsilon(e, c.Noise.Grid); err != nil {
				return nil, err
			}
		}
	}
	if _, err := NewPlane(c.Origin); err != nil {
		return nil, paramErr("origin", c.Origin, "a valid WGS84 position (a public point such as the city centre)")
	}
	return m, nil
}

// noiseRange bounds the ε_N of every hard step the package's managers can
// configure, from their public parameters alone; ok is false for other
// managers (whose steps are still checked when sampled).
//
// FixedRate: ε_N = ρ/((1-s)((1-PR)+k)) with PR in [0, 1) and 1-s in
// [1/4, 1], so ε_N is in [ρ/(1+k), ρ/(k/4)], and never above ε/(1+k), the
// most a hard step can cost; a scaled last step may halve it. Independent:
// PerStep (halved at most when ScaleLast). FixedUtility: c_N/α exactly.
// Planned: see its proof.
func noiseRange(mgr Manager) (lo, hi float64, ok bool) {
	const half = lastScale / 2
	switch m := mgr.(type) {
	case Planned:
		lo, hi = m.noiseRange()
		return lo, hi, true
	case FixedRate:
		p := m.Params.withDefaults()
		k := p.TestShare()
		lo = m.Rate / (1 + k) * half
		hi = math.Min(m.Rate/(k/4), p.Epsilon/(1+k))
		return lo, math.Max(lo, hi), true
	case FixedUtility:
		p := m.Params.withDefaults()
		e := CN(p.Confidence) / m.Accuracy
		return e, e, true
	case Independent:
		lo = m.PerStep
		if m.ScaleLast {
			lo *= half
		}
		return lo, m.PerStep, true
	}
	return 0, 0, false
}

// State is everything a Session keeps between queries: the public
// configuration, the run so far and the budget spent. It holds no secret
// location, so storing it reveals nothing beyond what was released.
//
// Resume checks that Spent matches the run's accounting, which catches
// corruption but not a consistent edit or an older copy: a state kept in a
// file should go through StateFile, which seals it.
type State struct {
	Version int     `json:"version"`
	Config  Config  `json:"config"`
	Run     Run     `json:"run"`
	Spent   float64 `json:"spent"`
	// Seal authenticates a state kept by StateFile; nil in a state an
	// application keeps itself.
	Seal *Seal `json:"seal,omitempty"`
}

// Seal makes a stored State tamper-evident (see StateFile). It holds no
// key: the MAC is keyed with a key kept in the key directory.
type Seal struct {
	// ID is the random identifier of the session (one budget).
	ID string `json:"id"`
	// PathMAC is a keyed MAC of the canonical absolute path of the state
	// file the session belongs to: a copy elsewhere is refused, and the
	// file, which is shared, does not reveal where it was kept.
	PathMAC string `json:"path_mac,omitempty"`
	// Path is the canonical absolute path itself, as version 2 states
	// wrote it; read, never written.
	//
	// Deprecated: version 2 only; PathMAC replaces it.
	Path string `json:"path,omitempty"`
	// Counter counts the state's writes: 0 when the session starts, +1 per
	// released step. It only ever grows.
	Counter uint64 `json:"counter"`
	// Prev is the MAC of the state at Counter-1, which links a state
	// written just before a crash to the record of its predecessor.
	Prev string `json:"prev_mac"`
	// MAC is HMAC-SHA256, in hex, over the canonical encoding of the state
	// with MAC empty.
	MAC string `json:"mac"`
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
	if !knownState(st.Version) {
		return nil, fmt.Errorf("geoind: session state version %d, want %d", st.Version, StateVersion)
	}
	mech, err := st.Config.NewMechanism()
	if err != nil {
		return nil, err
	}
	plane, err := NewPlane(st.Config.Origin)
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
	if st.Seal != nil {
		seal := *st.Seal
		st.Seal = &seal
	}
	return &Session{st: st, mech: mech, plane: plane, src: src}, nil
}

// State returns a copy of the session state, ready for json.Marshal.
func (s *Session) State() State {
	st := s.st
	st.Run = append(Run(nil), s.st.Run...)
	if st.Seal != nil {
		seal := *st.Seal
		st.Seal = &seal
	}
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
	if err := s.plane.CheckLocation(p); err != nil {
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
