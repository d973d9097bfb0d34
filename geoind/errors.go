package geoind

import (
	"errors"
	"fmt"
)

// ErrParam is wrapped by every parameter-validation error of this package
// (each one a *ParamError).
var ErrParam = errors.New("geoind: invalid parameter")

// ParamError says which parameter is invalid, its value and what is
// wanted. Callers that map parameters to their own names (a CLI's flags, a
// form's fields) branch on Name with errors.As; errors.Is(err, ErrParam)
// holds for every ParamError.
type ParamError struct {
	Name  string // the Config/JSON name: "epsilon", "rate", "grid", ...
	Value any
	Want  string
}

func (e *ParamError) Error() string {
	v := e.Value
	if f, ok := v.(float64); ok {
		v = fmt.Sprintf("%.6g", f)
	}
	return fmt.Sprintf("%v: %s = %v, want %s", ErrParam, e.Name, v, e.Want)
}

// Unwrap makes errors.Is(err, ErrParam) true.
func (e *ParamError) Unwrap() error { return ErrParam }

func paramErr(name string, v any, want string) error {
	return &ParamError{Name: name, Value: v, Want: want}
}

// Errors of sealed session state files (StateFile). Each is wrapped with
// the file, what was found and how to proceed; branch with errors.Is.
var (
	// ErrStateModified: the state's MAC does not verify under the key, so
	// it was edited (or written with another key directory).
	ErrStateModified = errors.New("geoind: session state was modified outside tracepriv")
	// ErrStateRolledBack: the state is older than its record (an earlier
	// copy was restored), or belongs to a budget since replaced.
	ErrStateRolledBack = errors.New("geoind: session state is older than its record")
	// ErrStateMissing: the state file is gone but its record knows it; a
	// new budget must be started explicitly (StateFile.NewBudget).
	ErrStateMissing = errors.New("geoind: session state is missing")
	// ErrStateUnknown: a sealed state without a matching record (copied
	// from another path, or the record or key directory is not the one it
	// was created with).
	ErrStateUnknown = errors.New("geoind: session state has no record")
)
