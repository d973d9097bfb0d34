package prior

import "errors"

// The fit's failures on well-formed input, for errors.Is; the error
// returned wraps one of them with the counts behind it. Bad input is a
// *param.Error instead, and the caller adds its own context once (the
// command, the pipeline), so no error here starts with "prior: ".
var (
	// ErrNoWindows: no window of the corpus could be fitted (the error
	// says how many were cut and why each was skipped).
	ErrNoWindows = errors.New("no window could be fitted")
	// ErrNoKernelWon: in the comparison, no kernel won MinWinShare of the
	// windows, so the family would be empty.
	ErrNoKernelWon = errors.New("no kernel won its share of the windows")
)
