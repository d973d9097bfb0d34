package accountant

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const gaussLedgerJSON = `{
  "version": 1,
  "name": "daily release",
  "events": [
    {"type": "gaussian", "sigma": 8, "sensitivity": 1, "count": 9},
    {"type": "composed", "events": [
      {"type": "gaussian", "sigma": 8},
      {"type": "gaussian", "sigma": 8, "count": 6}
    ]}
  ]
}`

// 16 Gaussians with σ = 8 are one Gaussian with σ = 2: μ = 1/2.
func TestLedgerGaussianIsExactGDP(t *testing.T) {
	l, err := ParseEventLog(strings.NewReader(gaussLedgerJSON))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.DeltaAt(1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 16 || rep.GDP == nil || !near(rep.GDP.Mu, 0.5, 1e-15) {
		t.Fatalf("report %+v", rep)
	}
	if !near(rep.GDP.Delta, 0.006829594983114577, 1e-13) || rep.Method != "gdp" || rep.Delta != rep.GDP.Delta {
		t.Errorf("δ(1) = %g via %s, want 0.006829594983114577 via gdp", rep.Delta, rep.Method)
	}
	if rep.ZCDP == nil || !near(rep.ZCDP.Rho, 0.125, 1e-15) || rep.RDP == nil || rep.RDP.Delta < rep.GDP.Delta {
		t.Errorf("zcdp/rdp: %+v %+v", rep.ZCDP, rep.RDP)
	}
	rep2, err := l.EpsilonAt(rep.GDP.Delta)
	if err != nil || math.Abs(rep2.Epsilon-1) > 1e-9 || rep2.RDP.Order == 0 {
		t.Errorf("ε(δ(1)) = %+v, %v", rep2, err)
	}
	if _, err := json.Marshal(rep2); err != nil {
		t.Error(err)
	}
}

const mixedLedgerYAML = `
version: 1
events:
  - type: laplace
    epsilon: 0.1
    count: 20
  - type: grr
    epsilon: 1
    categories: 4
  - type: epsilon_delta
    epsilon: 0.5
    delta: 1e-7
  - type: planar_laplace
    epsilon: 0.01
    count: 3
  - type: rdp
    name: cip
    rho: 0.02
`

func TestLedgerMixedYAML(t *testing.T) {
	l, err := ParseEventLog(strings.NewReader(mixedLedgerYAML))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.EpsilonAt(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if rep.GDP != nil || rep.ZCDP != nil || rep.Approx == nil || rep.Metric == nil {
		t.Fatalf("report %+v", rep)
	}
	if w := rep.Metric.Weight("euclidean_m"); !near(w, 0.03, 1e-15) {
		t.Errorf("metric weight %g", w)
	}
	// The RDP part, recomputed by hand on the default grid with the
	// approximate event's δ set aside, plus its ε.
	acc, _ := NewRDPAccountant(nil)
	_ = acc.Compose(LaplaceForEpsilon(0.1, 1), 20)
	_ = acc.Compose(GRR{Epsilon: 1, Categories: 4}, 1)
	_ = acc.Compose(RDPCurve{Rho: 0.02}, 1)
	e, o, _ := acc.Epsilon(1e-5 - 1e-7)
	if !near(rep.Epsilon, e+0.5, 1e-14) || rep.RDP.Order != o {
		t.Errorf("ε = %g at %g, want %g at %g", rep.Epsilon, rep.RDP.Order, e+0.5, o)
	}
	// Basic composition of the pure parts bounds it from above.
	if basic := 20*0.1 + 1 + 0.5 + 0.02*1e9; rep.Epsilon > basic {
		t.Errorf("ε = %g above basic composition", rep.Epsilon)
	}
}

func TestLedgerErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{``, "empty document"},
		{`{"events": []}`, "version: missing"},
		{`{"version": 2, "events": []}`, "version: unsupported version 2"},
		{`{"version": 1}`, "events: missing"},
		{`{"version": 1, "events": [], "extra": 1}`, `extra: unknown field`},
		{`{"version": 1, "events": [{"type": "gaussian", "sigma": -1}]}`, "events[0].sigma: must be positive"},
		{`{"version": 1, "events": [{"type": "gaussian"}]}`, "events[0].sigma: missing"},
		{`{"version": 1, "events": [{"type": "gaussian", "sigma": "big"}]}`, "events[0].sigma: expected float64"},
		{`{"version": 1, "events": [{"type": "gaussian", "sigma": 1, "sigmaa": 2}]}`, "events[0].sigmaa: unknown field"},
		{`{"version": 1, "events": [{"type": "gaussian", "sigma": 1, "epsilon": 2}]}`, "events[0].epsilon: does not apply to a gaussian event"},
		{`{"version": 1, "events": [{"type": "gausian", "sigma": 1}]}`, `events[0].type: unknown event type "gausian"`},
		{`{"version": 1, "events": [{"sigma": 1}]}`, "events[0].type: missing"},
		{`{"version": 1, "events": [{"type": "laplace", "scale": 1, "epsilon": 1}]}`, "events[0].scale: give exactly one of scale and epsilon"},
		{`{"version": 1, "events": [{"type": "laplace", "epsilon": 1, "count": -2}]}`, "events[0].count: must be non-negative"},
		{`{"version": 1, "events": [{"type": "discrete_laplace", "epsilon": 1, "sensitivity": 1.5}]}`, "events[0].sensitivity: must be an integer"},
		{`{"version": 1, "events": [{"type": "grr", "epsilon": 1}]}`, "events[0].categories: missing"},
		{`{"version": 1, "events": [{"type": "grr", "epsilon": 1, "categories": 1}]}`, "events[0].categories: must be at least 2"},
		{`{"version": 1, "events": [{"type": "epsilon_delta", "epsilon": 1, "delta": 2}]}`, "events[0].delta: must be in [0, 1]"},
		{`{"version": 1, "events": [{"type": "rdp", "orders": [2, 0.5], "epsilons": [1, 2]}]}`, "events[0].orders[1]: must be finite and > 1"},
		{`{"version": 1, "events": [{"type": "laplace", "epsilon": 1}, {"type": "composed", "events": [{"type": "zcdp", "rho": -1}]}]}`, "events[1].events[0].rho: must be non-negative"},
		{`{"version": 1, "events": [{"type": "composed", "events": [{"type": "zcdp", "rh": 1}]}]}`, "events[0].events[0].rh: unknown field"},
		{"version: 1\nevents:\n  - type: gaussian\n    sigma: [1\n", "invalid YAML"},
		{`{"version": 1, "events": [`, "invalid JSON"},
		// Documents that are not ledgers say what they are.
		{"uid,time,lat,lon\na,2008-10-24T02:00:00Z,39.9,116.3\n", `the document is plain text, not an object with "version" and "events"`},
		{`[1, 2]`, "the document is a list, not an object"},
		{"- type: gaussian\n  sigma: 1\n", "the document is a list, not an object"},
		{`42`, "the document is a single value, not an object"},
		{`{"type": "FeatureCollection", "features": []}`, `type: unknown field (an event log has only "version", "name" and "events")`},
	} {
		_, err := ParseEventLog(strings.NewReader(c.doc))
		var le *EventLogError
		if err == nil || !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  err = %v\n  want an EventLogError containing %q", c.doc, err, c.want)
		}
	}
}

func TestLedgerAccountErrors(t *testing.T) {
	l, err := ParseEventLog(strings.NewReader(`{"version": 1, "events": [{"type": "epsilon_delta", "epsilon": 1, "delta": 1e-3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.EpsilonAt(1e-4); err == nil {
		t.Error("δ target below the spent δ accepted")
	}
	rep, err := l.DeltaAt(0.5)
	if err != nil || rep.Delta != 1 {
		t.Errorf("ε below the spent ε: %+v, %v; want δ = 1", rep, err)
	}
	rep, err = l.DeltaAt(1)
	if err != nil || !near(rep.Delta, 1e-3, 1e-12) {
		t.Errorf("δ(1) = %+v, %v; want 1e-3", rep, err)
	}
	if _, err := l.EpsilonAt(0); err == nil {
		t.Error("δ = 0 accepted")
	}
}

// The example ledger in docs/accountant.md parses and composes.
func TestLedgerDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "accountant.md"))
	if err != nil {
		t.Skip("docs not present:", err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml block in docs/accountant.md")
	}
	l, err := ParseEventLog(strings.NewReader(block))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.EpsilonAt(1e-5)
	if err != nil || rep.Runs != 25 || rep.RDP == nil || rep.Approx == nil || rep.Metric == nil {
		t.Errorf("report %+v, %v", rep, err)
	}
}

// FuzzParseLedger checks that no input makes the parser or the accountants
// panic, and that accepted ledgers compose or fail with an error.
func FuzzParseLedger(f *testing.F) {
	f.Add(gaussLedgerJSON)
	f.Add(mixedLedgerYAML)
	f.Add(`{"version": 1, "events": [null]}`)
	f.Add(`[1, 2]`)
	f.Add("version: 1\nevents:\n  - type: composed\n    count: 3\n    events: [{type: zcdp, rho: 1e308}]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		l, err := ParseEventLog(strings.NewReader(doc))
		if err != nil {
			var le *EventLogError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not an EventLogError", err)
			}
			return
		}
		if rep, err := l.EpsilonAt(1e-5); err == nil {
			if _, err := json.Marshal(rep); err != nil {
				t.Fatalf("report does not encode: %v", err)
			}
		}
		if rep, err := l.DeltaAt(1); err == nil {
			if _, err := json.Marshal(rep); err != nil {
				t.Fatalf("report does not encode: %v", err)
			}
		}
	})
}
