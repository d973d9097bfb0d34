package param_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/tracepriv/tracepriv/param"
)

func TestAsFlag(t *testing.T) {
	inner := param.Positive("epsilon", -1)
	wrapped := fmt.Errorf("person %q: %w", "alice", inner)
	for _, c := range []struct {
		err   error
		flags map[string]string
		want  string
	}{
		{inner, nil, "--epsilon: epsilon = -1: must be positive and finite"},
		{wrapped, nil, `--epsilon: person "alice": epsilon = -1: must be positive and finite`},
		{param.Invalid("out", "x", "holds a release"), map[string]string{"out": "output"}, "--output: out = x: holds a release"},
		{param.Invalid("lambda", 1, "must be > 1"), map[string]string{"out": "output"}, "--lambda: lambda = 1: must be > 1"},
	} {
		got, ok := param.AsFlag(c.err, c.flags)
		if !ok || got.Error() != c.want {
			t.Errorf("AsFlag(%v) = %q, %v; want %q, true", c.err, got, ok, c.want)
		}
		var pe *param.Error
		if !errors.As(got, &pe) || !errors.Is(got, param.ErrInvalid) {
			t.Errorf("AsFlag(%v) no longer wraps the *param.Error", c.err)
		}
	}
	// Negative control: an error that is not a parameter's is not a flag's,
	// even when its text looks like one.
	other := fmt.Errorf("epsilon = -1: must be positive and finite: %w", fs.ErrNotExist)
	if got, ok := param.AsFlag(other, nil); ok || got != other {
		t.Errorf("AsFlag(%v) = %v, %v; want it unchanged, false", other, got, ok)
	}
}
