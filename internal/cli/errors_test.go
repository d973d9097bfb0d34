package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
)

// TestPriorFileIsInput: a bad field of a prior file is bad input, while
// the same *param.Error from a call's parameter is a bad flag (the
// negative control) and a missing file is an I/O error.
func TestPriorFileIsInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 4, "family": [{"kernel": "nope", "lengthscale_s": 60, "variance_m2": 1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := prior.ReadFile(bad)
	if err == nil {
		t.Fatal("a prior with an unknown kernel was read")
	}
	if c := ErrorCode(fmt.Errorf("--prior: %w", err)); c != CodeInvalidInput {
		t.Errorf("bad prior file %v: code %s, want %s", err, c, CodeInvalidInput)
	}
	if c := ErrorCode(param.Invalid("epsilon", -1, "must be positive")); c != CodeInvalidFlag {
		t.Errorf("a parameter error: code %s, want %s", c, CodeInvalidFlag)
	}
	_, err = prior.ReadFile(filepath.Join(dir, "missing.json"))
	if c := ErrorCode(err); c != CodeIO {
		t.Errorf("missing prior file %v: code %s, want %s", err, c, CodeIO)
	}
}

// TestNotCoveredIsRefused: a CIP release at a smaller order or radius
// than its person's account is refused (once internal); a covered one is
// admitted (the control).
func TestNotCoveredIsRefused(t *testing.T) {
	acct := func(string) (*budget.Account, error) {
		return &budget.Account{UID: "bob", Lambda: 2, RadiusM: 100}, nil
	}
	req := budget.Request{Mechanism: budget.CIP, Lambda: 4, RadiusM: 50, Epsilon: map[string]float64{"bob": 0.1}}
	err := budget.CheckRequest("ledger.json", req, acct)
	if c := ErrorCode(err); c != CodeRefused || !errors.Is(err, budget.ErrNotCovered) {
		t.Errorf("a release at lambda 4 within 50 m on an account at 2 within 100 m: %v, code %s; want %s", err, c, CodeRefused)
	}
	req.Lambda, req.RadiusM = 2, 100
	if err := budget.CheckRequest("ledger.json", req, acct); err != nil {
		t.Errorf("a covered release: %v", err)
	}
}
