package cip

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/sdp"
)

// The paper's mechanisms on Figure 2's settings (RBF on indices, n = 50,
// total noise 1.0; l_eff 6.1, compound at l_eff 5.2 as cip-math.md
// section 7). Run the Multiple Secrets benchmark with -benchtime 1x: one
// solve is 50 closed-form SDP_A plus an SDP_B with 50 LMIs of order 50.

func BenchmarkPaperSDPABasic50(b *testing.B) {
	sigma := rbf(6.1, 50)
	for b.Loop() {
		if _, err := PaperSDPA(sigma, Basic(24), 1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaperSDPABasic50Generic(b *testing.B) {
	sigma := rbf(6.1, 50)
	for b.Loop() {
		if _, err := PaperSDPA(sigma, Basic(24), 1, &PaperOptions{Generic: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaperSDPACompound50(b *testing.B) {
	sigma := rbf(math.Sqrt(27), 50)
	for b.Loop() {
		if _, err := PaperSDPA(sigma, Compound(24, 25), 1, &PaperOptions{Stabilisation: 1000}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaperMultipleSecrets50(b *testing.B) {
	sigma := rbf(6.1, 50)
	for b.Loop() {
		if _, _, err := PaperMultipleSecrets(sigma, EveryPoint(50), 1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteSDPB2c writes the SDP_B of Figure 2c at l_eff = 6.1 (50 LMIs of
// order 50 over the 50 SDP_A designs) as an SDPA file into
// $CIP_BENCH_DIR, so that CVXOPT and CSDP solve exactly the same data
// (bench/sdp/run_sdpb.sh). It does nothing unless the variable is set.
func TestWriteSDPB2c(t *testing.T) {
	dir := os.Getenv("CIP_BENCH_DIR")
	if dir == "" {
		t.Skip("CIP_BENCH_DIR not set")
	}
	sigma := rbf(6.1, 50)
	fs := make([]*mat.SymDense, 50)
	for i := range fs {
		d, err := PaperSDPA(sigma, Basic(i), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		fs[i] = d.SigmaG
	}
	m, _, err := paperSDPBModel(fs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Problem().SDPA()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sdp.WriteSDPA(&buf, p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sdpb2c.dat-s"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
