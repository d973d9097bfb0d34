package param

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"testing"
)

func TestChecks(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"finite 0", Finite("x", 0), true},
		{"finite -inf", Finite("x", -inf), false},
		{"positive 1", Positive("x", 1), true},
		{"positive 0", Positive("x", 0), false},
		{"positive inf", Positive("x", inf), false},
		{"positive nan", Positive("x", nan), false},
		{"nonneg 0", NonNegative("x", 0), true},
		{"nonneg -1e-300", NonNegative("x", -1e-300), false},
		{"nonneg inf", NonNegative("x", inf), false},
		{"greater 1.5>1", Greater("x", 1.5, 1), true},
		{"greater 1>1", Greater("x", 1, 1), false},
		{"atleast 1>=1", AtLeast("x", 1, 1), true},
		{"atleast inf", AtLeast("x", inf, 1), false},
		{"prob 1", Probability("x", 1), true},
		{"prob nan", Probability("x", nan), false},
		{"in [0,1] 0", In("x", 0, 0, 1), true},
		{"open (0,1) 0", InOpen("x", 0, 0, 1), false},
		{"open (0,1) 0.5", InOpen("x", 0.5, 0, 1), true},
		{"leftopen (0,1] 1", InLeftOpen("x", 1, 0, 1), true},
		{"leftopen (0,1] 0", InLeftOpen("x", 0, 0, 1), false},
		{"rightopen [0,1) 0", InRightOpen("x", 0, 0, 1), true},
		{"rightopen [0,1) 1", InRightOpen("x", 1, 0, 1), false},
		{"integer 3", Integer("x", 3), true},
		{"integer 1.5", Integer("x", 1.5), false},
		{"integer 2^60", Integer("x", 1<<60), false},
		{"integer nan", Integer("x", nan), false},
		{"atleastint 2", AtLeastInt("x", 2, 2), true},
		{"atleastint 1", AtLeastInt("x", 1, 2), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if (c.err == nil) != c.ok {
				t.Errorf("%s: err %v", c.name, c.err)
			}
			if c.err != nil {
				var pe *Error
				if !errors.As(c.err, &pe) || pe.Name != "x" || !errors.Is(c.err, ErrInvalid) {
					t.Errorf("%s: %v is not a *param.Error for x", c.name, c.err)
				}
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	err := fmt.Errorf("ledger: %w", InOpen("delta", 2, 0, 1))
	if got, want := err.Error(), "ledger: delta = 2: must be in (0, 1)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	// Keyed literals read as the sentence they print.
	if got := (&Error{Name: "secrets", Value: 3, Why: "are per trace"}).Error(); got != "secrets = 3: are per trace" {
		t.Errorf("%q", got)
	}
	if First(nil, Positive("a", -1), Positive("b", -1)).(*Error).Name != "a" || First(nil, nil) != nil {
		t.Error("First")
	}
}

// TestErrorWraps: a parameter rejected because of another error keeps that
// error reachable (errors.As finds an inner *Error or a typed error, and
// errors.Is a sentinel), and its text and Why are what callers used to
// build by hand from err.Error().
func TestErrorWraps(t *testing.T) {
	inner := Positive("lengthscale_s", -1)
	outer := fmt.Errorf("sanitize: %w", Wrap("prior", "", inner))
	if got, want := outer.Error(), "sanitize: prior = : lengthscale_s = -1: must be positive and finite"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	var pe *Error
	if !errors.As(outer, &pe) || pe.Name != "prior" || !errors.Is(outer, ErrInvalid) {
		t.Fatalf("%v: outer *Error not found", outer)
	}
	if pe.Why != inner.Error() {
		t.Errorf("Why %q, want the inner error's text %q", pe.Why, inner)
	}
	var in *Error
	if !errors.As(pe.Err, &in) || in.Name != "lengthscale_s" {
		t.Errorf("%v: inner *Error not reached", outer)
	}
	// A sentinel and a typed error behind the parameter are reached too.
	errSentinel := errors.New("not positive definite")
	withWhy := &Error{Name: "prior", Value: "p.json", Why: "cannot be factorised", Err: fmt.Errorf("kernel 2: %w", errSentinel)}
	if !errors.Is(withWhy, errSentinel) || !errors.Is(withWhy, ErrInvalid) {
		t.Errorf("%v: sentinel not reached", withWhy)
	}
	var pathErr *fs.PathError
	typed := Wrap("prior", "p.json", &fs.PathError{Op: "open", Path: "p.json", Err: fs.ErrNotExist})
	if !errors.As(typed, &pathErr) || !errors.Is(typed, fs.ErrNotExist) {
		t.Errorf("%v: typed error not reached", typed)
	}
	// Negative control: the same text without Err reaches nothing but
	// ErrInvalid.
	if plain := Invalid("prior", "", inner.Error()); errors.Is(plain, errSentinel) || errors.As(plain.(*Error).Err, &in) || plain.Error() != Wrap("prior", "", inner).Error() {
		t.Errorf("%v reaches an error it does not hold, or reads otherwise", plain)
	}
}
