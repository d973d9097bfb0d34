package param

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalid is wrapped by every *Error.
var ErrInvalid = errors.New("invalid parameter")

// Error reports an invalid parameter. Its fields are in the order name,
// value, reason, so that &param.Error{Name: "epsilon", Value: eps, Why:
// "must be positive"} reads as the sentence it prints.
type Error struct {
	// Name is the parameter's name as the caller spells it: an option, a
	// flag, a JSON or ledger field ("epsilon", "orders[2]").
	Name string
	// Value is the offending value (any type; nil when it is missing).
	Value any
	// Why says what is wrong or what is wanted ("must be in (0, 1)").
	Why string
	// Err, when set, is the error that made the parameter invalid (a prior
	// file's own *Error, a typed error of the package that checked it), so
	// that errors.As and errors.Is reach it through this one instead of
	// reading its text; Why then says it in words (Wrap: its text).
	Err error
}

// Error returns "name = value: why".
func (e *Error) Error() string {
	return fmt.Sprintf("%s = %v: %s", e.Name, e.Value, e.Why)
}

// Unwrap makes errors.Is(err, ErrInvalid) true for every *Error, and lets
// errors.Is and errors.As reach Err when it is set.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// Wrap returns an *Error for the parameter name whose value err rejected:
// Why is err's text and Err is err, which errors.As and errors.Is reach.
func Wrap(name string, value any, err error) error {
	return &Error{Name: name, Value: value, Why: err.Error(), Err: err}
}

// Invalid returns an *Error.
func Invalid(name string, value any, why string) error {
	return &Error{Name: name, Value: value, Why: why}
}

// First returns the first non-nil error, so that several checks read as
// one: param.First(param.Positive("sigma", s), param.Probability("delta", d)).
func First(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Finite accepts any finite v.
func Finite(name string, v float64) error {
	if !finite(v) {
		return Invalid(name, v, "must be finite")
	}
	return nil
}

// Positive accepts finite v > 0.
func Positive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return Invalid(name, v, "must be positive and finite")
	}
	return nil
}

// NonNegative accepts finite v ≥ 0.
func NonNegative(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 1) {
		return Invalid(name, v, "must be non-negative and finite")
	}
	return nil
}

// Greater accepts finite v > lo.
func Greater(name string, v, lo float64) error {
	if !(v > lo) || math.IsInf(v, 1) {
		return Invalid(name, v, fmt.Sprintf("must be finite and > %v", lo))
	}
	return nil
}

// AtLeast accepts finite v ≥ lo.
func AtLeast(name string, v, lo float64) error {
	if !(v >= lo) || math.IsInf(v, 1) {
		return Invalid(name, v, fmt.Sprintf("must be finite and >= %v", lo))
	}
	return nil
}

// Probability accepts v in [0, 1].
func Probability(name string, v float64) error { return In(name, v, 0, 1) }

// In accepts v in the closed interval [lo, hi].
func In(name string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) {
		return Invalid(name, v, fmt.Sprintf("must be in [%v, %v]", lo, hi))
	}
	return nil
}

// InOpen accepts v in the open interval (lo, hi).
func InOpen(name string, v, lo, hi float64) error {
	if !(v > lo && v < hi) {
		return Invalid(name, v, fmt.Sprintf("must be in (%v, %v)", lo, hi))
	}
	return nil
}

// InLeftOpen accepts v in (lo, hi].
func InLeftOpen(name string, v, lo, hi float64) error {
	if !(v > lo && v <= hi) {
		return Invalid(name, v, fmt.Sprintf("must be in (%v, %v]", lo, hi))
	}
	return nil
}

// InRightOpen accepts v in [lo, hi).
func InRightOpen(name string, v, lo, hi float64) error {
	if !(v >= lo && v < hi) {
		return Invalid(name, v, fmt.Sprintf("must be in [%v, %v)", lo, hi))
	}
	return nil
}

// Integer accepts a whole v with |v| ≤ 2^53, so that int(v) is exact
// (counts given as floats, such as ledger fields).
func Integer(name string, v float64) error {
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return Invalid(name, v, "must be an integer")
	}
	return nil
}

// AtLeastInt accepts n ≥ lo.
func AtLeastInt(name string, n, lo int) error {
	if n < lo {
		return Invalid(name, n, fmt.Sprintf("must be at least %d", lo))
	}
	return nil
}
