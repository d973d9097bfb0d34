package cip

import "errors"

// The package's numerical failures, for errors.Is; the error returned
// wraps one of them with what failed ("secret [3]: Sigma_SS: …"). A
// matrix that must be positive definite and is not (a prior block, the
// (E3) solution, a Newton system) wraps gp.ErrNotPositiveDefinite. Bad
// input is a *param.Error instead, and the caller adds its own context
// once (the command, the release), so no error here starts with "cip: ".
var (
	// ErrNoConvergence: an eigendecomposition or SVD did not converge.
	ErrNoConvergence = errors.New("did not converge")
	// ErrNotCertified: a designer's noise could not be certified for its
	// target by (E1) within its refinement steps.
	ErrNotCertified = errors.New("could not be certified")
	// ErrSolverStatus: the SDP solver stopped without an optimal or
	// near-optimal answer (the error names its sdp.Status).
	ErrSolverStatus = errors.New("SDP solver stopped without an optimum")
)
