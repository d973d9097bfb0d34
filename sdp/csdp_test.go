package sdp

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// csdpObjectives runs the csdp binary on p and returns its primal and dual
// objective values (SDPA sign convention, like ours).
func csdpObjectives(t *testing.T, bin string, p *SDPA) (primal, dual float64) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "p.dat-s")
	var buf bytes.Buffer
	if err := WriteSDPA(&buf, p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, in).CombinedOutput()
	if err != nil {
		t.Fatalf("csdp: %v\n%s", err, out)
	}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		for _, f := range []struct {
			prefix string
			dst    *float64
		}{{"Primal objective value:", &primal}, {"Dual objective value:", &dual}} {
			if rest, ok := strings.CutPrefix(line, f.prefix); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err != nil {
					t.Fatalf("csdp output %q: %v", line, err)
				}
				*f.dst = v
				found++
			}
		}
	}
	if found != 2 {
		t.Fatalf("csdp output without objectives:\n%s", out)
	}
	return primal, dual
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
		cp, cd := csdpObjectives(t, bin, p)
		if relErr(r.PrimalObj, cp) > 1e-6 || relErr(r.DualObj, cd) > 1e-6 {
			t.Errorf("problem %d (m=%d blocks=%v): ours (%.10g, %.10g), csdp (%.10g, %.10g)",
				k, sh.m, sh.blocks, r.PrimalObj, r.DualObj, cp, cd)
		}
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
	cp, cd := csdpObjectives(t, bin, p)
	if relErr(r.PrimalObj, cp) > 1e-6 || relErr(r.DualObj, cd) > 1e-6 {
		t.Errorf("ours (%.10g, %.10g), csdp (%.10g, %.10g)", r.PrimalObj, r.DualObj, cp, cd)
	}
}
