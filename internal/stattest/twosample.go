package stattest

import (
	"math"
	"slices"
)

// KS2 returns the two-sample Kolmogorov–Smirnov statistic
// D = sup|F_a(x) - F_b(x)| of the empirical CDFs of xs and ys, and its
// p-value from the Kolmogorov distribution at λ = (√m + 0.12 + 0.11/√m)·D
// with m = n_a·n_b/(n_a + n_b) (Stephens 1970), accurate for samples of
// a few dozen or more. It compares two samplers that should have the same
// law, such as two implementations of one mechanism. Ties between the
// samples are counted together, so a shared value moves both CDFs at once.
func KS2(xs, ys []float64) (d, p float64) {
	if len(xs) == 0 || len(ys) == 0 {
		return math.NaN(), math.NaN()
	}
	a, b := slices.Clone(xs), slices.Clone(ys)
	slices.Sort(a)
	slices.Sort(b)
	na, nb := float64(len(a)), float64(len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		v := math.Min(a[i], b[j])
		for i < len(a) && a[i] == v {
			i++
		}
		for j < len(b) && b[j] == v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/na-float64(j)/nb))
	}
	sm := math.Sqrt(na * nb / (na + nb))
	return d, kolmogorovQ((sm + 0.12 + 0.11/sm) * d)
}

// CovarianceSE returns the standard error of the sample covariance of n
// pairs from a bivariate normal with variances vi, vj and covariance cij:
// √((vi·vj + cij²)/n) (Isserlis' theorem; for i = j it is the variance's
// √(2/n)·vi). A check accepts when the sample covariance is within z of
// them, like CheckVariance.
func CovarianceSE(vi, vj, cij float64, n int) float64 {
	return math.Sqrt((vi*vj + cij*cij) / float64(n))
}
