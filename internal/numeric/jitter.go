package numeric

import "math"

// JitterLadder is the schedule of diagonal jitters tried when the Cholesky
// factorisation of a nearly singular covariance (smooth kernels make them)
// fails: after a failure at jitter j the next attempt uses
// min(max(Factor·j, Floor), Cap), and a failure at Cap is final. Starting
// from j = 0 (the matrix as given) the ladder is 0, Floor, Factor·Floor, …,
// Cap; a caller with a certified starting jitter (noise.MultiNormal) starts
// there instead and keeps the same steps.
//
// The jitter actually used must be reported: it perturbs the covariance
// and so the privacy accounting.
type JitterLadder struct {
	Floor  float64 // the smallest non-zero jitter tried
	Factor float64 // the growth per failed attempt, > 1
	Cap    float64 // the largest jitter tried
}

// Next returns the jitter to try after a failure at j, and false when j
// already reached Cap.
func (l JitterLadder) Next(j float64) (float64, bool) {
	if !(j < l.Cap) {
		return 0, false
	}
	return math.Min(math.Max(l.Factor*j, l.Floor), l.Cap), true
}
