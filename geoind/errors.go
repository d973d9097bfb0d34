package geoind

import (
	"errors"

	"github.com/tracepriv/tracepriv/param"
)

// ErrParam is wrapped by every parameter-validation error of this package
// (each one a *param.Error). It is param.ErrInvalid.
//
// Deprecated: use param.ErrInvalid.
var ErrParam = param.ErrInvalid

func paramErr(name string, v any, want string) error {
	return param.Invalid(name, v, "want "+want)
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
