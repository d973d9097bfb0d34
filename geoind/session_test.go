package geoind

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

var beijing = geo.Point{Lat: 39.9, Lon: 116.4}

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
	if !strings.Contains(string(b), `"version":3`) {
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
	st.Version = 1
	if _, err := Resume(st, nil); err == nil {
		t.Error("state version 1 accepted")
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
		func(c *Config) { c.Noise.Grid = 0 }, // continuous output: refused
		// Noise wider than the plane can represent (the CLI's --radius 1e7).
		func(c *Config) { c.Params.Epsilon = math.Ln10 / 1e7; c.Rate = c.Params.Epsilon * 0.033 },
		func(c *Config) { c.Manager = "fixed-utility"; c.Accuracy = 1e6 },
	} {
		c := paperConfig()
		mod(&c)
		if _, err := NewSession(c, nil); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
