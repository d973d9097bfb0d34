package risk

import "github.com/tracepriv/tracepriv/internal/stats"

// ClopperPearson returns the exact two-sided confidence interval for a
// binomial proportion with k successes out of n at the given level. Invalid
// arguments (n < 1, k outside [0, n], level outside (0, 1)) give NaNs.
// The Auditor's black-box bounds and trajdb's audits use the same interval.
func ClopperPearson(k, n int, level float64) (lo, hi float64) {
	return stats.ClopperPearson(k, n, level)
}
