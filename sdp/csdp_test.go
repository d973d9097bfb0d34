package sdp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// csdpAnswer is what the csdp binary said of a problem.
type csdpAnswer struct {
	// Code is csdp's exit status: 0 solved, 3 solved with reduced
	// accuracy ("partial success"), others a failure of csdp's own.
	Code         int
	Primal, Dual float64
	// Accuracy is the largest of the relative infeasibilities and gaps
	// csdp reports for its answer (its DIMACS error measures).
	Accuracy float64
}

// tolerance returns the relative difference within which our objectives
// must agree with a, and ok false (with the reason) when a is no answer
// to compare against: an external solver's reduced accuracy is what it is,
// never a failure of ours.
func (a csdpAnswer) tolerance() (tol float64, ok bool, why string) {
	switch a.Code {
	case 0:
		return 1e-6, true, ""
	case 3:
		// Compare within ten times the accuracy csdp reports.
		tol = max(1e-6, 10*a.Accuracy)
		if tol > 1e-3 {
			return 0, false, fmt.Sprintf("csdp solved it with reduced accuracy %.2g only", a.Accuracy)
		}
		return tol, true, ""
	}
	return 0, false, fmt.Sprintf("csdp exited %d (its own failure on this problem)", a.Code)
}

// parseCSDP reads csdp's output and exit status.
func parseCSDP(out []byte, code int) (csdpAnswer, error) {
	a := csdpAnswer{Code: code}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		for _, f := range []struct {
			prefix string
			dst    *float64
		}{{"Primal objective value:", &a.Primal}, {"Dual objective value:", &a.Dual}} {
			if rest, ok := strings.CutPrefix(line, f.prefix); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err != nil {
					return a, fmt.Errorf("csdp output %q: %v", line, err)
				}
				*f.dst = v
				found++
			}
		}
		if rest, ok := strings.CutPrefix(line, "DIMACS error measures:"); ok {
			for _, w := range strings.Fields(rest) {
				v, err := strconv.ParseFloat(w, 64)
				if err != nil {
					return a, fmt.Errorf("csdp output %q: %v", line, err)
				}
				a.Accuracy = max(a.Accuracy, math.Abs(v))
			}
		}
	}
	if found != 2 && (code == 0 || code == 3) {
		return a, fmt.Errorf("csdp output without objectives:\n%s", out)
	}
	return a, nil
}

// csdpObjectives runs the csdp binary on p and returns its answer.
func csdpObjectives(t *testing.T, bin string, p *SDPA) csdpAnswer {
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
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("csdp: %v\n%s", err, out)
	}
	a, err := parseCSDP(out, code)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// compare checks our objectives against a within the accuracy csdp
// reports; compared is false (with the reason in err) when a is no answer
// to compare against, and err non-nil with compared true is a disagreement.
func (a csdpAnswer) compare(primal, dual float64) (compared bool, err error) {
	tol, ok, why := a.tolerance()
	if !ok {
		return false, errors.New(why)
	}
	if relErr(primal, a.Primal) > tol || relErr(dual, a.Dual) > tol {
		return true, fmt.Errorf("ours (%.10g, %.10g), csdp (%.10g, %.10g), csdp exit %d, tolerance %.2g",
			primal, dual, a.Primal, a.Dual, a.Code, tol)
	}
	return true, nil
}

// compareCSDP checks r against csdp's answer a and reports whether it
// could compare (logging why not).
func compareCSDP(t *testing.T, name string, r *SDPAResult, a csdpAnswer) bool {
	t.Helper()
	compared, err := a.compare(r.PrimalObj, r.DualObj)
	switch {
	case !compared:
		t.Logf("%s: not compared: %v", name, err)
	case err != nil:
		t.Errorf("%s: %v", name, err)
	}
	return compared
}

// A reduced-accuracy answer (csdp exit 3, "Partial Success") is compared
// within the accuracy it reports; one too inaccurate, or a csdp failure,
// is not compared; a full answer at 1e-6.
func TestCSDPAnswerTolerance(t *testing.T) {
	partial := []byte(`CSDP 6.2.0
Partial Success: SDP solved with reduced accuracy
Primal objective value: 2.0000100e+00 
Dual objective value: 2.0000000e+00 
Relative primal infeasibility: 1.20e-07 
Relative dual infeasibility: 3.00e-08 
Real Relative Gap: 2.50e-06 
XZ Relative Gap: 1.00e-07 
DIMACS error measures: 1.20e-07 0.00e+00 3.00e-08 0.00e+00 2.50e-06 1.00e-07
`)
	a, err := parseCSDP(partial, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.Primal != 2.00001 || a.Dual != 2 || a.Accuracy != 2.5e-6 {
		t.Fatalf("parsed %+v", a)
	}
	tol, ok, _ := a.tolerance()
	if !ok || tol != 2.5e-5 {
		t.Fatalf("tolerance %g, %v; want 2.5e-5 (ten times the reported gap)", tol, ok)
	}
	// Our answer within the reported accuracy passes; one off by more
	// than it fails (a wrong solver of ours is still caught).
	if compared, err := a.compare(2.00001, 2.000001); !compared || err != nil {
		t.Errorf("an answer within csdp's reported accuracy: compared %v, %v", compared, err)
	}
	if compared, err := a.compare(2.001, 2.000001); !compared || err == nil {
		t.Errorf("an answer 5e-4 off: compared %v, %v; want a disagreement", compared, err)
	}
	if _, ok, why := (csdpAnswer{Code: 3, Accuracy: 0.01}).tolerance(); ok || why == "" {
		t.Error("a 1 % accurate answer is compared")
	}
	if _, ok, why := (csdpAnswer{Code: 7}).tolerance(); ok || why == "" {
		t.Error("a csdp failure is compared")
	}
	if _, err := parseCSDP([]byte("Success: SDP solved\n"), 0); err == nil {
		t.Error("an answer without objectives parsed")
	}
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
