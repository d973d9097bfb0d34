package cip

import (
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/param"
)

// TestParamErrors: a bad parameter of cip is a *param.Error naming it, so
// that callers read the name from the value, never from the text.
func TestParamErrors(t *testing.T) {
	_, gapErr := PriorPosteriorGap(1, 0.5, 0.1)
	_, deltaErr := PriorPosteriorGap(1, 2, 1)
	_, targetErr := TargetLossFactor(1, 2, -3, 1)
	_, renyiErr := RenyiGaussian(-1, nil, nil, nil, nil)
	_, methodErr := ParseMethod("bogus")
	_, uniformErr := IndependentUniform(0, 1)
	_, targetsErr := expandTargets([]float64{1, 2}, 3)
	_, targetIErr := expandTargets([]float64{1, -2}, 2)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"lambda", gapErr},
		{"delta", deltaErr},
		{"radius", targetErr},
		{"lambda", renyiErr},
		{"method", methodErr},
		{"n", uniformErr},
		{"targets", targetsErr},
		{"targets[1]", targetIErr},
		{"KLoc", Secret{Indices: []int{0}, KLoc: -1}.Validate(2)},
	} {
		var pe *param.Error
		if !errors.As(c.err, &pe) || !errors.Is(c.err, param.ErrInvalid) {
			t.Errorf("%s: %v is not a *param.Error", c.name, c.err)
			continue
		}
		if pe.Name != c.name {
			t.Errorf("%v names %q, want %q", c.err, pe.Name, c.name)
		}
	}
	// Negative control: a good parameter is no error.
	if _, err := PriorPosteriorGap(1, 2, 0.1); err != nil {
		t.Errorf("valid gap: %v", err)
	}
}
