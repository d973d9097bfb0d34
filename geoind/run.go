package geoind

import (
	"encoding/json"
	"fmt"
	"time"
)

// Mode says how a step used the test, after the budget manager's choice.
type Mode int

const (
	// ModeTest runs Θ(ε_θ, l, z̃): the prediction is reported if the test
	// passes, fresh noise otherwise.
	ModeTest Mode = iota
	// ModeNoise skips the test, Θ(0, -∞, z̃): fresh noise, no test cost.
	ModeNoise
	// ModePredict skips the test, Θ(0, +∞, z̃): the prediction is reported
	// for free.
	ModePredict
)

var modeNames = [...]string{"test", "noise", "predict"}

func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// MarshalJSON writes the mode's name.
func (m Mode) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

// UnmarshalJSON reads a mode name.
func (m *Mode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for i, n := range modeNames {
		if n == s {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("geoind: unknown step mode %q", s)
}

// Decision is a budget manager's output β(r) = (ε_θ, ε_N, l) for the next
// step, with the skip conventions of the paper's section III-C carried by
// Mode: ModeNoise is (0, ε_N, -∞) and ModePredict is (0, 0, +∞).
type Decision struct {
	Mode      Mode    `json:"mode"`
	EpsTheta  float64 `json:"eps_theta"` // per metre; 0 unless ModeTest
	EpsN      float64 `json:"eps_n"`     // per metre; 0 for ModePredict
	Threshold float64 `json:"threshold"` // l in metres; 0 unless ModeTest
}

// Cost returns the budget the step spends given its public hard flag:
// β_θ(r) + b·β_N(r), the summand of eq. (5).
func (d Decision) Cost(hard bool) float64 {
	if hard {
		return d.EpsTheta + d.EpsN
	}
	return d.EpsTheta
}

// Step is one element (z, b) of a run, with the public configuration that
// produced it. A Step never holds the secret.
type Step struct {
	Time     time.Time `json:"time"`
	Z        Vec       `json:"z"`    // reported location, plane metres
	Hard     bool      `json:"hard"` // b: fresh noise was used
	Decision Decision  `json:"decision"`
	Cost     float64   `json:"cost"` // budget spent by this step
}

// Run is the mechanism's output so far, r = [(z₁, b₁), …]. Everything in it
// is public.
type Run []Step

// Spent returns Σ cost over the run, the budget ε(r) consumed so far.
func (r Run) Spent() float64 {
	s := 0.0
	for _, st := range r {
		s += st.Cost
	}
	return s
}

// lastHard returns the index of the last hard step, or -1.
func (r Run) lastHard() int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i].Hard {
			return i
		}
	}
	return -1
}

// Stats summarises a run with the quantities of the paper's Figs 8-9.
type Stats struct {
	Steps          int     `json:"steps"`
	Hard           int     `json:"hard"`
	Tested         int     `json:"tested"`          // steps that ran Θ
	Easy           int     `json:"easy"`            // tested steps whose prediction passed
	Skipped        int     `json:"skipped"`         // steps reported by ModePredict
	Spent          float64 `json:"spent"`           // ε(r)
	TestSpent      float64 `json:"test_spent"`      // Σ ε_θ
	PredictionRate float64 `json:"prediction_rate"` // easy / tested (0 if none tested)
}

// Stats computes the run's summary.
func (r Run) Stats() Stats {
	var s Stats
	s.Steps = len(r)
	for _, st := range r {
		if st.Hard {
			s.Hard++
		}
		switch st.Decision.Mode {
		case ModeTest:
			s.Tested++
			if !st.Hard {
				s.Easy++
			}
		case ModePredict:
			s.Skipped++
		}
		s.Spent += st.Cost
		s.TestSpent += st.Decision.EpsTheta
	}
	if s.Tested > 0 {
		s.PredictionRate = float64(s.Easy) / float64(s.Tested)
	}
	return s
}
