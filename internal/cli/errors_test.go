package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
