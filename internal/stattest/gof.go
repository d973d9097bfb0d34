package stattest

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ChiSquare returns Pearson's statistic Σ(o-e)²/e for the observed counts
// against n·probs (n = Σ observed), the degrees of freedom len(probs)-1 and
// the p-value P(χ²_df >= stat). probs must be positive and sum to 1 within
// 1e-9.
func ChiSquare(observed []int, probs []float64) (chi2 float64, df int, p float64, err error) {
	if len(observed) != len(probs) || len(probs) < 2 {
		return 0, 0, 0, fmt.Errorf("stattest: chi-square needs >= 2 bins and equal lengths, got %d counts and %d probabilities", len(observed), len(probs))
	}
	n := 0
	sum := 0.0
	for i, pr := range probs {
		if !(pr > 0) {
			return 0, 0, 0, fmt.Errorf("stattest: chi-square bin %d has probability %v, want > 0", i, pr)
		}
		sum += pr
		n += observed[i]
	}
	if math.Abs(sum-1) > 1e-9 {
		return 0, 0, 0, fmt.Errorf("stattest: chi-square probabilities sum to %v, want 1", sum)
	}
	obs := make([]float64, len(observed))
	exp := make([]float64, len(probs))
	for i := range probs {
		obs[i] = float64(observed[i])
		exp[i] = float64(n) * probs[i]
	}
	chi2 = stat.ChiSquare(obs, exp)
	df = len(probs) - 1
	p = distuv.ChiSquared{K: float64(df)}.Survival(chi2)
	return chi2, df, p, nil
}

// KS returns the one-sample Kolmogorov–Smirnov statistic
// D = sup|F_n(x) - F(x)| of xs against the continuous CDF cdf, and its
// p-value from the Kolmogorov distribution at λ = (√n + 0.12 + 0.11/√n)·D
// (Stephens 1970), accurate for n >= 5 or so.
func KS(xs []float64, cdf func(float64) float64) (d, p float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	fn := float64(n)
	for i, x := range s {
		f := cdf(x)
		d = math.Max(d, math.Max(float64(i+1)/fn-f, f-float64(i)/fn))
	}
	sn := math.Sqrt(fn)
	return d, kolmogorovQ((sn + 0.12 + 0.11/sn) * d)
}

// kolmogorovQ returns Q(λ) = 2Σ_{k>=1}(-1)^{k-1}e^{-2k²λ²}, the asymptotic
// P(√n D > λ), clipped to [0, 1].
func kolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1 // the series converges slowly here and Q is 1 to 1e-9
	}
	sum := 0.0
	for k := 1; k <= 100; k++ {
		term := math.Exp(-2 * float64(k*k) * lambda * lambda)
		if k%2 == 0 {
			sum -= term
		} else {
			sum += term
		}
		if term < 1e-17 {
			break
		}
	}
	return math.Min(math.Max(2*sum, 0), 1)
}
