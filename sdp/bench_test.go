package sdp

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// benchSDPA50 is the paper's SDP_A for a basic secret at the Figure 2a
// setting: RBF kernel on indices 0..49, l^2 = 36, unit variance, secret
// index 24, trace budget c = 1.
func benchSDPA50() *Model {
	at, ct := basicSecret(rbf(50, 36), 24)
	m, _, _, _ := sdpAModel(at, ct, 1.0)
	return m
}

// benchMaxCut100 is the max-cut relaxation of a fixed random graph on 100
// vertices (edge probability 0.1, seed 100).
func benchMaxCut100() *SDPA { return maxCutSDPA(randomGraph(100, 0.1, 100)) }

func BenchmarkSDPA50(b *testing.B) {
	m := benchSDPA50()
	for b.Loop() {
		sol, err := m.Solve(nil)
		if err != nil || sol.Status != Optimal {
			b.Fatalf("status %v err %v", sol.Status, err)
		}
		b.ReportMetric(float64(sol.Result.Iterations), "iters")
	}
}

func BenchmarkMaxCut100(b *testing.B) {
	p := benchMaxCut100()
	for b.Loop() {
		r, err := SolveSDPA(p, nil)
		if err != nil || r.Status != Optimal {
			b.Fatalf("status %v err %v", r.Status, err)
		}
		b.ReportMetric(float64(r.Iterations), "iters")
	}
}

// TestWriteBenchProblems writes the two benchmark problems as SDPA files
// into $SDP_BENCH_DIR, so that bench/sdp/cvxopt_bench.py solves exactly the
// same data. It does nothing unless the variable is set.
func TestWriteBenchProblems(t *testing.T) {
	dir := os.Getenv("SDP_BENCH_DIR")
	if dir == "" {
		t.Skip("SDP_BENCH_DIR not set")
	}
	a, err := benchSDPA50().Problem().SDPA()
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*SDPA{"sdpa50.dat-s": a, "maxcut100.dat-s": benchMaxCut100()} {
		var buf bytes.Buffer
		if err := WriteSDPA(&buf, p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
