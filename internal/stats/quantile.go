// Package stats holds the small statistics helpers that tracepriv's
// packages share and that gonum does not provide.
package stats

import "math"

// Quantile7 returns the type 7 quantile (linear interpolation between
// order statistics, numpy's and R's default) of sorted x at p in [0, 1].
// gonum's stat.Quantile offers only the empirical (type 1) and type 4
// definitions, and the papers' numbers are numpy's.
func Quantile7(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}
