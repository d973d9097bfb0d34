package stattest

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Z is the default z-value of the moment checks: the two-sided 99.9995%
// quantile of the standard normal, as in Google's DP library tests.
const Z = 4.41717

// Kurtosis values (μ₄/σ⁴, not excess) of the distributions tracepriv tests.
const (
	KurtosisNormal  = 3
	KurtosisLaplace = 6   // also Gamma(2, θ): 3 + 6/2
	KurtosisUniform = 1.8 // 9/5
)

// Moments are the sample size, mean and unbiased variance of a sample.
type Moments struct {
	N        int
	Mean     float64
	Variance float64
}

// SampleMoments returns the sample mean and unbiased variance of xs.
func SampleMoments(xs []float64) Moments {
	m, v := stat.MeanVariance(xs, nil)
	return Moments{N: len(xs), Mean: m, Variance: v}
}

// MeanTolerance returns z·√(variance/n), the mean check's tolerance.
func MeanTolerance(n int, variance, z float64) float64 {
	return z * math.Sqrt(variance/float64(n))
}

// VarianceTolerance returns z·σ²·√((κ-1)/n), the variance check's tolerance
// for kurtosis κ (κ = 6 gives Google's z·√5·σ²/√n).
func VarianceTolerance(n int, variance, kurtosis, z float64) float64 {
	return z * variance * math.Sqrt((kurtosis-1)/float64(n))
}

// CheckMean returns an error if the sample mean of xs is farther than
// MeanTolerance(n, wantVar, z) from wantMean.
func CheckMean(xs []float64, wantMean, wantVar, z float64) error {
	if len(xs) < 2 {
		return fmt.Errorf("stattest: mean check needs at least 2 samples, got %d", len(xs))
	}
	m := SampleMoments(xs)
	tol := MeanTolerance(m.N, wantVar, z)
	if d := math.Abs(m.Mean - wantMean); !(d <= tol) {
		return fmt.Errorf("stattest: sample mean %.6g differs from %.6g by %.3g > tolerance %.3g (n=%d, z=%g)",
			m.Mean, wantMean, d, tol, m.N, z)
	}
	return nil
}

// CheckVariance returns an error if the sample variance of xs is farther
// than VarianceTolerance(n, wantVar, kurtosis, z) from wantVar.
func CheckVariance(xs []float64, wantVar, kurtosis, z float64) error {
	if len(xs) < 2 {
		return fmt.Errorf("stattest: variance check needs at least 2 samples, got %d", len(xs))
	}
	m := SampleMoments(xs)
	tol := VarianceTolerance(m.N, wantVar, kurtosis, z)
	if d := math.Abs(m.Variance - wantVar); !(d <= tol) {
		return fmt.Errorf("stattest: sample variance %.6g differs from %.6g by %.3g > tolerance %.3g (n=%d, kurtosis=%g, z=%g)",
			m.Variance, wantVar, d, tol, m.N, kurtosis, z)
	}
	return nil
}

// CheckMoments runs CheckMean and CheckVariance and returns the first error.
func CheckMoments(xs []float64, wantMean, wantVar, kurtosis, z float64) error {
	if err := CheckMean(xs, wantMean, wantVar, z); err != nil {
		return err
	}
	return CheckVariance(xs, wantVar, kurtosis, z)
}
