package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// acctRun runs the CLI in-process and returns stdout, stderr and the error.
func acctRun(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func acctJSON(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("bad JSON %q: %v", stdout, err)
	}
	return m
}

func TestAccountGDP(t *testing.T) {
	out, _, err := acctRun(t, "", "account", "gdp", "--mu", "1", "--epsilon", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if d := acctJSON(t, out)["delta"].(float64); math.Abs(d-0.1269367375066439) > 1e-14 {
		t.Errorf("delta = %.17g", d)
	}
	out, _, err = acctRun(t, "", "account", "gdp", "--mu", "0.5", "--delta", "0.006829594983114577", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if e := acctJSON(t, out)["epsilon"].(float64); math.Abs(e-1) > 1e-9 {
		t.Errorf("epsilon = %.17g", e)
	}
	out, _, err = acctRun(t, "", "account", "gdp", "--mu", "1", "--epsilon", "1")
	if err != nil || !strings.Contains(out, "delta = 0.1269367375") {
		t.Errorf("text output %q, %v", out, err)
	}
	for _, args := range [][]string{
		{"account", "gdp", "--epsilon", "1"},
		{"account", "gdp", "--mu", "1"},
		{"account", "gdp", "--mu", "1", "--epsilon", "1", "--delta", "0.1"},
		{"account", "gdp", "--mu", "-1", "--epsilon", "1"},
	} {
		if _, _, err := acctRun(t, "", args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestAccountGaussian(t *testing.T) {
	out, _, err := acctRun(t, "", "account", "gaussian", "--sigma", "10", "--epsilon", "0.1", "--sensitivity", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if d := acctJSON(t, out)["delta"].(float64); math.Abs(d-0.008751768145810) > 1e-10 {
		t.Errorf("delta = %.17g", d)
	}
	out, _, err = acctRun(t, "", "account", "gaussian", "--delta", "0.008751768145810", "--epsilon", "0.1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if s := acctJSON(t, out)["sigma"].(float64); math.Abs(s-10) > 1e-8 {
		t.Errorf("sigma = %.17g", s)
	}
	if _, _, err := acctRun(t, "", "account", "gaussian", "--sigma", "0", "--epsilon", "1"); err == nil {
		t.Error("sigma 0 accepted")
	}
}

func TestAccountLedger(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.yaml")
	doc := "version: 1\nevents:\n  - type: gaussian\n    sigma: 8\n    count: 16\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := acctRun(t, "", "account", "ledger", path, "--epsilon", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	m := acctJSON(t, out)
	gdp := m["gdp"].(map[string]any)
	if mu := gdp["mu"].(float64); math.Abs(mu-0.5) > 1e-15 {
		t.Errorf("mu = %g", mu)
	}
	if d := m["delta"].(float64); math.Abs(d-0.006829594983114577) > 1e-15 {
		t.Errorf("delta = %.17g", d)
	}
	if o := m["rdp"].(map[string]any)["order"].(float64); o <= 1 {
		t.Errorf("order = %g", o)
	}
	// Default δ = 1e-5, text output, stdin.
	out, _, err = acctRun(t, doc, "account", "ledger", "-")
	if err != nil || !strings.Contains(out, "at delta = 1e-05 (best: gdp)") || !strings.Contains(out, "optimal order") {
		t.Errorf("text output %q, %v", out, err)
	}
	// Errors name the file, the entry and the field.
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"version": 1, "events": [{"type": "laplace", "epsilon": 1}, {"type": "gaussian", "sigma": -3}]}`), 0o644)
	_, _, err = acctRun(t, "", "account", "ledger", bad)
	if err == nil || !strings.Contains(err.Error(), "bad.json: ledger: events[1].sigma: must be positive") {
		t.Errorf("err = %v", err)
	}
	if _, _, err := acctRun(t, "", "account", "ledger", filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
}

// A file that is not a ledger (a trace, GeoJSON, a list) is named, said
// not to be a ledger with what it is instead, and shown what a ledger is.
func TestAccountLedgerNotALedger(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"trace.csv":   "uid,time,lat,lon\na,2008-10-24T02:00:00Z,39.9,116.3\n",
		"map.geojson": `{"type": "FeatureCollection", "features": []}`,
		"list.json":   `[{"type": "gaussian", "sigma": 8}]`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(doc), 0o644)
		_, _, err := acctRun(t, "", "account", "ledger", path)
		if err == nil {
			t.Fatalf("%s accepted as a ledger", name)
		}
		msg := err.Error()
		for _, want := range []string{"account ledger: " + path + " is not a valid ledger", `"version": 1, "events": [`, "docs/accountant.md"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error lacks %q:\n%s", name, want, msg)
			}
		}
		if strings.Contains(msg, "struct {") || strings.Contains(msg, "json.RawMessage") {
			t.Errorf("%s: error shows Go internals:\n%s", name, msg)
		}
	}
	_, _, err := acctRun(t, "[]", "account", "ledger", "-")
	if err == nil || !strings.Contains(err.Error(), "stdin is not a valid ledger: the document is a list") {
		t.Errorf("stdin: %v", err)
	}
}
