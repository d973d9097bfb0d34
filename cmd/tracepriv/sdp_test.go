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

func runSDP(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCmd(&stdout, &stderr)
	root.SetArgs(args)
	err := root.Execute()
	return stdout.String(), err
}

// Example 1 of the SDPA manual: optimum -41.9 in CSDP's signs.
func TestSDPSolveCommand(t *testing.T) {
	file := filepath.Join("..", "..", "sdp", "testdata", "example1.dat-s")
	sol := filepath.Join(t.TempDir(), "sol.json")
	out, err := runSDP(t, "sdp", "solve", file, "--json", "--solution", sol)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Status     string  `json:"status"`
		Primal     float64 `json:"primal_objective"`
		Dual       float64 `json:"dual_objective"`
		Iterations int     `json:"iterations"`
		Seconds    float64 `json:"seconds"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Status != "optimal" || math.Abs(res.Primal+41.9) > 1e-6 || math.Abs(res.Dual+41.9) > 1e-6 || res.Iterations == 0 {
		t.Errorf("result %+v", res)
	}
	data, err := os.ReadFile(sol)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Version int           `json:"version"`
		Y       []float64     `json:"y"`
		X       [][][]float64 `json:"x"`
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Version != 1 || len(s.Y) != 3 || len(s.X) != 1 || len(s.X[0]) != 2 {
		t.Errorf("solution file %v: %s", err, data)
	}

	text, err := runSDP(t, "sdp", "solve", file)
	if err != nil || !strings.Contains(text, "status            optimal") || !strings.Contains(text, "primal_objective  -41.9") {
		t.Errorf("text output %v:\n%s", err, text)
	}
}

func TestSDPSolveBadFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.dat-s")
	os.WriteFile(bad, []byte("1\n1\n2\n1\n0 1 1 1 zz\n"), 0o644)
	_, err := runSDP(t, "sdp", "solve", bad)
	if err == nil || !strings.Contains(err.Error(), "bad.dat-s: sdpa: line 5: value") {
		t.Errorf("error %v", err)
	}
}
