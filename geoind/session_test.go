package geoind

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

var beijing = LatLon{Lat: 39.9, Lon: 116.4}

func paperConfig() Config {
	return Config{
		Mechanism: "pm", Manager: "fixed-rate",
		Params: Params{Epsilon: paperEps, PR0: 0.5},
		Rate:   paperEps * 0.033, Origin: beijing,
		Noise: PlanarLaplace{Grid: 1},
	}
}

func TestSessionRoundTrip(t *testing.T) {
	s, err := NewSession(paperConfig(), noise.Seeded(20))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2008, 10, 24, 2, 9, 59, 0, time.UTC)
	for i := range 5 {
		p := geo.Point{Lat: 39.98 + 0.0001*float64(i), Lon: 116.32}
		rep, err := s.Query(p, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Step != i || rep.Spent > paperEps || math.Abs(rep.Spent+rep.Remaining-paperEps) > 1e-15 {
			t.Errorf("report %d: %+v", i, rep)
		}
	}
	b, err := json.Marshal(s.State())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"version":1`) {
		t.Errorf("state JSON lacks the version: %s", b[:80])
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	s2, err := Resume(st, noise.Seeded(21))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s2.State().Spent, s.State().Spent; got != want {
		t.Errorf("resumed spent %g, want %g", got, want)
	}
	// Tampering with the spent budget is detected.
	st.Spent /= 2
	if _, err := Resume(st, nil); err == nil {
		t.Error("state with rolled-back budget accepted")
	}
	st.Spent *= 2
	st.Version = 2
	if _, err := Resume(st, nil); err == nil {
		t.Error("state version 2 accepted")
	}
}

// TestQueryFileCrash simulates a crash while the state is written: nothing
// is released, the file keeps the previous state (it is neither corrupted
// nor rolled back), and the session continues from it.
func TestQueryFileCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	cfg := paperConfig()
	src := noise.Seeded(22)
	t0 := time.Unix(1.2e9, 0)
	p := geo.Point{Lat: 39.98, Lon: 116.32}
	if _, err := QueryFile(path, &cfg, p, t0, src); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	orig := writeStateFile
	t.Cleanup(func() { writeStateFile = orig })
	crash := errors.New("simulated crash")
	// A crash in the middle of the write: part of the bytes hit a
	// temporary file, which is never renamed over the state.
	writeStateFile = func(path string, data []byte) error {
		tmp := path + ".partial"
		if err := os.WriteFile(tmp, data[:len(data)/2], 0o600); err != nil {
			return err
		}
		return crash
	}
	rep, err := QueryFile(path, nil, p, t0.Add(time.Minute), src)
	if !errors.Is(err, crash) {
		t.Fatalf("query during crash: err = %v", err)
	}
	if rep != (Report{}) {
		t.Errorf("a point was released although the state was not saved: %+v", rep)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("state file changed by a failed query")
	}

	writeStateFile = orig
	rep, err = QueryFile(path, nil, p, t0.Add(2*time.Minute), src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Run) != 2 || rep.Step != 1 {
		t.Errorf("after recovery: %d steps, report step %d; want 2 and 1", len(st.Run), rep.Step)
	}
	if st.Spent != rep.Spent || st.Spent != st.Run.Spent() {
		t.Errorf("persisted spent %g, reported %g, run %g", st.Spent, rep.Spent, st.Run.Spent())
	}
	// A missing state without a configuration is an error, not a new budget.
	if _, err := QueryFile(filepath.Join(t.TempDir(), "none.json"), nil, p, t0, src); err == nil {
		t.Error("query on a missing state without config succeeded")
	}
}

// TestQueryFileLocked: a second query while one holds the state fails
// instead of spending from the same snapshot.
func TestQueryFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	unlock, err := lockState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	cfg := paperConfig()
	if _, err := QueryFile(path, &cfg, geo.Point{Lat: 39.9, Lon: 116.4}, time.Unix(0, 0), noise.Seeded(1)); err == nil {
		t.Skip("flock not enforced on this platform")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Mechanism = "xx" },
		func(c *Config) { c.Manager = "xx" },
		func(c *Config) { c.Rate = 0 },
		func(c *Config) { c.Rate = 2 * c.Params.Epsilon },
		func(c *Config) { c.Params.Epsilon = -1 },
		func(c *Config) { c.Params.Gamma = 2 },
		func(c *Config) { c.Predictor = "oracle" },
		func(c *Config) { c.Origin.Lat = 91 },
		func(c *Config) { c.Manager = "fixed-utility"; c.Accuracy = 0 },
		func(c *Config) { c.Noise.Grid = -1 },
	} {
		c := paperConfig()
		mod(&c)
		if _, err := NewSession(c, nil); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
