// Package csdptest runs the external SDP solver CSDP (Debian's
// coinor-csdp) on a problem in SDPA sparse format, for the tests that
// check an SDP solve of ours against an independent solver (sdp's own
// solver, cip's SDP_B), and reads its answer within the accuracy it
// reports: an external solver's reduced accuracy is what it is, never a
// failure of ours.
package csdptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Reply is what the csdp binary said of a problem.
type Reply struct {
	// Code is csdp's exit status: 0 solved, 3 solved with reduced
	// accuracy ("partial success"), others a failure of csdp's own.
	Code         int
	Primal, Dual float64
	// Accuracy is the largest of the relative infeasibilities and gaps
	// csdp reports for its answer (its DIMACS error measures).
	Accuracy float64
}

// Tolerance returns the relative difference within which our objectives
// must agree with a, and ok false (with the reason) when a is no answer
// to compare against: an external solver's reduced accuracy is what it is,
// never a failure of ours.
func (a Reply) Tolerance() (tol float64, ok bool, why string) {
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

// Parse reads csdp's output and exit status.
func Parse(out []byte, code int) (Reply, error) {
	a := Reply{Code: code}
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

// Compare checks our objectives against a within the accuracy csdp
// reports; compared is false (with the reason in err) when a is no answer
// to compare against, and err non-nil with compared true is a disagreement.
func (a Reply) Compare(primal, dual float64) (compared bool, err error) {
	tol, ok, why := a.Tolerance()
	if !ok {
		return false, errors.New(why)
	}
	if relErr(primal, a.Primal) > tol || relErr(dual, a.Dual) > tol {
		return true, fmt.Errorf("ours (%.10g, %.10g), csdp (%.10g, %.10g), csdp exit %d, tolerance %.2g",
			primal, dual, a.Primal, a.Dual, a.Code, tol)
	}
	return true, nil
}

// Run runs the csdp binary bin on a problem in SDPA sparse format (as
// sdp.WriteSDPA writes it) and returns its answer; a csdp that cannot be
// started fails the test.
func Run(t testing.TB, bin string, sdpa []byte) Reply {
	t.Helper()
	in := filepath.Join(t.TempDir(), "p.dat-s")
	if err := os.WriteFile(in, sdpa, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, in).CombinedOutput()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("csdp: %v\n%s", err, out)
	}
	a, err := Parse(out, code)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Binary returns the path of the csdp binary, or skips the test without
// it (Debian's package coinor-csdp, which .ci/run installs).
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("csdp")
	if err != nil {
		t.Skip("csdp not installed (Debian package coinor-csdp)")
	}
	return bin
}

// relErr is |got - want| / max(|want|, 1): relative, absolute near 0.
func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(1, math.Abs(want))
}
