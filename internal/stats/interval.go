package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// ClopperPearson returns the exact two-sided confidence interval for a
// binomial proportion with k successes out of n at the given level: the
// ends solve P[X ≥ k | lo] = (1−level)/2 and P[X ≤ k | hi] = (1−level)/2,
// with lo = 0 at k = 0 and hi = 1 at k = n. Invalid arguments (n < 1, k
// outside [0, n], level outside (0, 1)) give NaNs.
//
// It is the one implementation behind risk.ClopperPearson and the audits of
// trajdb and repro; gonum has no binomial interval.
func ClopperPearson(k, n int, level float64) (lo, hi float64) {
	if n < 1 || k < 0 || k > n || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	alpha := 1 - level
	if k > 0 {
		lo = mathext.InvRegIncBeta(float64(k), float64(n-k+1), alpha/2)
	}
	hi = 1
	if k < n {
		hi = mathext.InvRegIncBeta(float64(k+1), float64(n-k), 1-alpha/2)
	}
	return lo, hi
}
