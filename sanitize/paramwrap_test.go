package sanitize

import (
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/param"
)

// A prior rejected by its own validation is the "prior" parameter's error,
// and the prior's *param.Error (the field at fault) is still reachable
// through it: callers name the field from the value, never from the text.
func TestPriorErrorKeepsItsField(t *testing.T) {
	bad := singlePrior()
	bad.Variance = -1
	err := options(bad).Check()
	var pe *param.Error
	if !errors.As(err, &pe) || pe.Name != "prior" || !errors.Is(err, param.ErrInvalid) {
		t.Fatalf("%v: want the prior's *param.Error", err)
	}
	var inner *param.Error
	if !errors.As(pe.Err, &inner) || inner.Name != "variance_m2" {
		t.Fatalf("%v: the prior file's own *param.Error (variance_m2) is not reachable through the wrap", err)
	}
	// Negative control: a valid prior has no error.
	if err := options(singlePrior()).Check(); err != nil {
		t.Errorf("valid prior: %v", err)
	}
}
