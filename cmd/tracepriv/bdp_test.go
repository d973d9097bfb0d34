package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBDPCalibrateCLI(t *testing.T) {
	v := riskRunJSON(t, "bdp", "calibrate", "--model", "gaussian", "--m", "3", "--rho", "0.275", "--epsilon", "1")
	riskClose(t, "tau", riskNum(t, v, "tau"), 0.539535, 5.01e-7)
	riskClose(t, "factor", riskNum(t, v, "factor"), 1.853448, 5.01e-7)
	v = riskRunJSON(t, "bdp", "calibrate", "--model", "groups", "--m", "4", "--epsilon", "2")
	riskClose(t, "groups tau", riskNum(t, v, "tau"), 0.5, 0)
	v = riskRunJSON(t, "bdp", "calibrate", "--model", "markov", "--gamma", "3.29", "--epsilon", "10")
	riskClose(t, "markov tau", riskNum(t, v, "tau"), 10-4.7636, 5.01e-5)

	dir := t.TempDir()
	p := filepath.Join(dir, "P.csv")
	os.WriteFile(p, []byte("# Electricity 80 kWh\n0.818,0.182\n0.371 0.629\n"), 0o644)
	v = riskRunJSON(t, "bdp", "calibrate", "--model", "markov", "--transition", p, "--epsilon", "5", "--n", "731")
	if v["model"] != "groups(m=731)" {
		t.Errorf("below the Markov floor: model %v", v["model"])
	}
	cov := filepath.Join(dir, "cov.csv")
	os.WriteFile(cov, []byte("225,101.25\n101.25,225\n"), 0o644)
	v = riskRunJSON(t, "bdp", "calibrate", "--model", "gaussian", "--cov", cov, "--epsilon", "1")
	riskClose(t, "cov factor", riskNum(t, v, "factor"), 1.45, 1e-12)

	eq := filepath.Join(dir, "eq.csv")
	os.WriteFile(eq, []byte("1,0.275,0.275\n0.275,1,0.275\n0.275,0.275,1\n"), 0o644)
	v = riskRunJSON(t, "bdp", "calibrate", "--model", "gaussian", "--cov", eq, "--exact", "--epsilon", "1")
	riskClose(t, "exact factor", riskNum(t, v, "factor"), 1.55, 1e-12)

	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("0.5,0.5\n0.5,oops\n"), 0o644)
	err := riskRunErr(t, "bdp", "calibrate", "--model", "markov", "--transition", bad, "--epsilon", "5")
	if err == nil || !strings.Contains(err.Error(), `bad.csv:2:5: value 2, "oops", is not a finite number`) {
		t.Errorf("bad file: %v", err)
	}
	// ρ(m−2) = 1: the Gaussian bound does not apply, the general one answers
	// and the report says why.
	v = riskRunJSON(t, "bdp", "calibrate", "--model", "gaussian", "--m", "4", "--rho", "0.5", "--epsilon", "1")
	cands, _ := v["candidates"].([]any)
	if v["model"] != "groups(m=4)" || len(cands) != 2 || !strings.Contains(cands[0].(map[string]any)["error"].(string), "rho·(m−2) < 1") {
		t.Errorf("ρ(m−2) = 1: %v", v)
	}
	if err := riskRunErr(t, "bdp", "calibrate", "--model", "gaussian", "--m", "3", "--rho", "1.2", "--epsilon", "1"); err == nil {
		t.Error("ρ = 1.2 accepted")
	}
}
