package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// runJSON runs tracepriv with args plus --json and decodes stdout.
func riskRunJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetArgs(append(args, "--json", "-q"))
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %v (stderr %s)", args, err, errb.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("%v: bad JSON %q: %v", args, out.String(), err)
	}
	return v
}

func riskRunErr(t *testing.T, args ...string) error {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetArgs(args)
	return root.Execute()
}

func riskNum(t *testing.T, v map[string]any, key string) float64 {
	t.Helper()
	f, ok := v[key].(float64)
	if !ok {
		t.Fatalf("field %q missing or not a number in %v", key, v)
	}
	return f
}

func riskClose(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.8g, want %.8g (tol %g)", name, got, want, tol)
	}
}

func TestRiskRadCLI(t *testing.T) {
	// anchors.md §D.1: Laplace, m = 11, (A.18).
	v := riskRunJSON(t, "risk", "rad", "--mechanism", "laplace", "--epsilon", "1", "--m", "11")
	riskClose(t, "laplace rad", riskNum(t, v, "rad"), 0.044337, 5.01e-7)
	riskClose(t, "laplace tv", riskNum(t, v, "tv_bound"), 0.357699, 5.01e-7)
	// thesis_part2 §5.3 m = 11 table at ε = 2.
	v = riskRunJSON(t, "risk", "rad", "--mechanism", "grr", "--epsilon", "2", "--m", "11")
	riskClose(t, "grr rad", riskNum(t, v, "rad"), 0.33402, 5.01e-6)
	v = riskRunJSON(t, "risk", "rad", "--mechanism", "oue", "--epsilon", "2", "--m", "11")
	riskClose(t, "oue rad", riskNum(t, v, "rad"), 0.20880, 5.01e-6)
	// (A.12) at σ = 1, m = 2: ½(2Φ(½) − 1) = Φ(½) − ½ = 0.191462.
	v = riskRunJSON(t, "risk", "rad", "--mechanism", "gaussian", "--sigma", "1", "--m", "2")
	riskClose(t, "gaussian rad", riskNum(t, v, "rad"), 0.191462, 5.01e-7)
	// Gaussian by (ε, δ): σ = 10 is the analytic Gaussian for ε = 0.1,
	// δ = 0.008751768145810 (issue 7's known value).
	v = riskRunJSON(t, "risk", "rad", "--mechanism", "gaussian", "--epsilon", "0.1", "--delta", "0.008751768145810", "--m", "2")
	riskClose(t, "gaussian sigma", riskNum(t, v, "sigma"), 10, 1e-7)
	for _, bad := range [][]string{
		{"risk", "rad", "--mechanism", "rappor", "--epsilon", "1", "--m", "3"},
		{"risk", "rad", "--mechanism", "laplace", "--m", "3"},
		{"risk", "rad", "--mechanism", "laplace", "--epsilon", "1", "--m", "1"},
		{"risk", "rad", "--mechanism", "gaussian", "--epsilon", "1", "--sigma", "2", "--m", "3"},
	} {
		if err := riskRunErr(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestRiskCalibrateCLI(t *testing.T) {
	v := riskRunJSON(t, "risk", "calibrate", "--mechanism", "grr", "--risk", "0.1", "--m", "100")
	riskClose(t, "grr epsilon", riskNum(t, v, "epsilon"), 2.504379, 5.01e-7)
	v = riskRunJSON(t, "risk", "calibrate", "--mechanism", "laplace", "--risk", "0.1", "--m", "10")
	riskClose(t, "laplace epsilon", riskNum(t, v, "epsilon"), 2.1201, 5.01e-5)
	v = riskRunJSON(t, "risk", "calibrate", "--mechanism", "dpsgd", "--risk", "0.1", "--m", "10", "--steps", "100")
	riskClose(t, "dpsgd sigma", riskNum(t, v, "sigma"), 21.933, 5.01e-4)
	// Calibrated σ fed back to "risk rad" gives the risk.
	v = riskRunJSON(t, "risk", "calibrate", "--mechanism", "gaussian", "--risk", "0.05", "--m", "7")
	s := riskNum(t, v, "sigma")
	v = riskRunJSON(t, "risk", "rad", "--mechanism", "gaussian", "--sigma", riskFormat(s), "--m", "7")
	riskClose(t, "round trip", riskNum(t, v, "rad"), 0.05, 1e-9)
	if err := riskRunErr(t, "risk", "calibrate", "--mechanism", "oue", "--risk", "0.5", "--m", "10"); err == nil || !strings.Contains(err.Error(), "supremum") {
		t.Errorf("OUE above its supremum: %v", err)
	}
}

func riskFormat(f float64) string { return strings.TrimSpace(riskJSONNum(f)) }

func riskJSONNum(f float64) string { b, _ := json.Marshal(f); return string(b) }
