package accountant

import (
	"errors"
	"fmt"
)

// ErrUnsupported is matched (with errors.Is) by errors reporting that an
// accountant cannot bound an event, for instance an (ε, δ) event with δ > 0
// in an RDP accountant.
var ErrUnsupported = errors.New("event not supported by this accountant")

// ParamError reports an invalid parameter of an event or a call. Param is
// the parameter's name as spelled in the ledger format, so that ledger
// errors can point at the offending field.
type ParamError struct {
	Param string
	Value float64
	Msg   string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s = %v: %s", e.Param, e.Value, e.Msg)
}

// NoGuaranteeError reports a composition that yields no privacy guarantee
// at all (the composed metric is infinite), such as parallel composition of
// bounded-DP mechanisms over a value-based partition (thesis Example 2.16).
// Callers that branch on it use errors.As.
type NoGuaranteeError struct {
	Rule   string // the composition rule that was asked for
	Reason string // why it gives no guarantee, with the reference
}

func (e *NoGuaranteeError) Error() string {
	return fmt.Sprintf("%s gives no privacy guarantee: %s", e.Rule, e.Reason)
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || v > maxFinite {
		return &ParamError{Param: name, Value: v, Msg: "must be positive and finite"}
	}
	return nil
}

func checkNonNegative(name string, v float64) error {
	if !(v >= 0) || v > maxFinite {
		return &ParamError{Param: name, Value: v, Msg: "must be non-negative and finite"}
	}
	return nil
}

func checkProbability(name string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return &ParamError{Param: name, Value: v, Msg: "must be in [0, 1]"}
	}
	return nil
}

func checkInteger(name string, v float64) error {
	if v != float64(int64(v)) {
		return &ParamError{Param: name, Value: v, Msg: "must be an integer"}
	}
	return nil
}

const maxFinite = 1.7976931348623157e308
