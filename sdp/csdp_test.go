package sdp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/tracepriv/tracepriv/internal/csdptest"
)

// csdpObjectives runs the csdp binary on p and returns its answer.
func csdpObjectives(t *testing.T, bin string, p *SDPA) csdptest.Reply {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSDPA(&buf, p); err != nil {
		t.Fatal(err)
	}
	return csdptest.Run(t, bin, buf.Bytes())
}

// compareCSDP checks r against csdp's answer a and reports whether it
// could compare (logging why not).
func compareCSDP(t *testing.T, name string, r *SDPAResult, a csdptest.Reply) bool {
	t.Helper()
	compared, err := a.Compare(r.PrimalObj, r.DualObj)
	switch {
	case !compared:
		t.Logf("%s: not compared: %v", name, err)
	case err != nil:
		t.Errorf("%s: %v", name, err)
	}
	return compared
}

// Random strictly feasible problems (fixed seed), solved by us and by CSDP,
// must agree to 1e-6 relative in both objectives.
func TestAgainstCSDP(t *testing.T) {
	bin, err := exec.LookPath("csdp")
	if err != nil {
		t.Skip("csdp not installed (Debian package coinor-csdp)")
	}
	rng := rand.New(rand.NewPCG(3, 2026))
	shapes := []struct {
		m      int
		blocks []int
	}{
		{3, []int{4}},
		{5, []int{6, -3}},
		{8, []int{5, 3}},
		{10, []int{8, -4, 2}},
		{12, []int{10}},
		{20, []int{12, -6}},
	}
	if testing.Short() {
		shapes = shapes[:3]
	} else {
		// Random shapes too: one or two dense blocks, an optional LP block,
		// and at most half as many constraints as the cone has dimensions
		// (so that the A_i are independent).
		for k := 0; k < 30; k++ {
			blocks := []int{2 + rng.IntN(15)}
			if rng.IntN(2) == 0 {
				blocks = append(blocks, -(1 + rng.IntN(5)))
			}
			if rng.IntN(3) == 0 {
				blocks = append(blocks, 1+rng.IntN(6))
			}
			dim := 0
			for _, b := range blocks {
				if b < 0 {
					dim -= b
				} else {
					dim += b * (b + 1) / 2
				}
			}
			shapes = append(shapes, struct {
				m      int
				blocks []int
			}{max(1, min(1+rng.IntN(30), dim/2)), blocks})
		}
	}
	compared := 0
	for k, sh := range shapes {
		p := randomFeasibleSDPA(rng, sh.m, sh.blocks)
		r, err := SolveSDPA(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Optimal {
			t.Errorf("problem %d: status %v", k, r.Status)
			continue
		}
		if compareCSDP(t, fmt.Sprintf("problem %d (m=%d blocks=%v)", k, sh.m, sh.blocks), r, csdpObjectives(t, bin, p)) {
			compared++
		}
	}
	// csdp's own failures are not ours, but a cross-check that compares
	// nothing checks nothing.
	if compared < len(shapes)*3/4 {
		t.Errorf("csdp answered only %d of %d problems well enough to compare", compared, len(shapes))
	}
}

// Max-cut on a fixed random graph with n = 30 against CSDP.
func TestMaxCutAgainstCSDP(t *testing.T) {
	bin, err := exec.LookPath("csdp")
	if err != nil {
		t.Skip("csdp not installed (Debian package coinor-csdp)")
	}
	p := maxCutSDPA(randomGraph(30, 0.3, 7))
	r := solveSDPA(t, p)
	if r.Status != Optimal {
		t.Fatalf("status %v", r.Status)
	}
	if !compareCSDP(t, "max-cut n=30", r, csdpObjectives(t, bin, p)) {
		t.Skip("csdp gave no answer to compare against (logged above)")
	}
}
