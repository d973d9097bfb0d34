package bdp

import (
	"fmt"
	"math"
	"sort"

	"github.com/tracepriv/tracepriv/param"
)

// ChakrabartiFlip is the flip probability of per-record randomised response
// that Chakrabarti et al. give for BDP on a lazy, symmetric, stationary
// binary Markov chain with switching probability r ∈ (0, ½) (thesis Sec.
// 6.4.2.1, l.3752–3756):
//
//	ρ = [4 + r(re^ε − 2) − √(r²e^ε(4 + r(re^ε − 4)))] / [8 + 2r(re^ε + r − 4)].
//
// It is transcribed from the thesis and not verified against the original
// paper; note that at r = ½ (independence) it does not reduce to the
// standard 1/(1+e^ε). The thesis calls r "P_ss"; in its matrix r is the
// off-diagonal entry, and that is how it is used here.
func ChakrabartiFlip(r, eps float64) (float64, error) {
	if err := param.InOpen("r", r, 0, 0.5); err != nil {
		return 0, err
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	re := r * math.Exp(eps)
	num := 4 + r*(re-2) - math.Sqrt(r*re*(4+r*(re-4)))
	den := 8 + 2*r*(re+r-4)
	return num / den, nil
}

// rrCountPMF returns the distribution of Z, the number of reported 1s when
// n records of which n1 are 1 each flip with probability rho:
// Z = Bin(n − n1, ρ) + Bin(n1, 1 − ρ), by direct convolution of log-space
// binomial probabilities. (The thesis's Eq. 6.71–6.72 have wrong exponents;
// this is the correct convolution.)
func rrCountPMF(n, n1 int, rho float64) []float64 {
	binom := func(m int, p float64) []float64 {
		out := make([]float64, m+1)
		lm, _ := math.Lgamma(float64(m + 1))
		for k := range out {
			lk, _ := math.Lgamma(float64(k + 1))
			lr, _ := math.Lgamma(float64(m - k + 1))
			out[k] = math.Exp(lm - lk - lr + float64(k)*math.Log(p) + float64(m-k)*math.Log1p(-p))
		}
		return out
	}
	a, b := binom(n-n1, rho), binom(n1, 1-rho)
	z := make([]float64, n+1)
	for i, pa := range a {
		for j, pb := range b {
			z[i+j] += pa * pb
		}
	}
	return z
}

func checkRR(n, n1 int, rho float64) error {
	if n < 1 {
		return param.AtLeastInt("n", n, 1)
	}
	if n1 < 0 || n1 > n {
		return param.Invalid("n1", n1, fmt.Sprintf("must be in [0, n] = [0, %d]", n))
	}
	return param.InOpen("rho", rho, 0, 0.5)
}

// RRCountBeta is the exact probability that the unbiased estimate
// n̂₁ = (Z − nρ)/(1 − 2ρ) of the number of 1s misses n1 by at least α,
// Pr[|n̂₁ − n₁| ≥ α], under per-record randomised response with flip
// probability ρ.
func RRCountBeta(n, n1 int, rho, alpha float64) (float64, error) {
	if err := checkRR(n, n1, rho); err != nil {
		return 0, err
	}
	if math.IsNaN(alpha) || alpha < 0 {
		return 0, param.Invalid("alpha", alpha, "must be non-negative")
	}
	pmf := rrCountPMF(n, n1, rho)
	mu := float64(n1)*(1-2*rho) + float64(n)*rho
	t := alpha * (1 - 2*rho)
	beta := 0.0
	for k, p := range pmf {
		if math.Abs(float64(k)-mu) >= t-1e-12*math.Max(1, t) {
			beta += p
		}
	}
	return math.Min(beta, 1), nil
}

// RRCountAlpha returns the accuracy of that estimate at level β: the
// infimum α* such that Pr[|n̂₁ − n₁| ≥ α] ≤ β for every α > α*. The error
// takes finitely many values, so this is exact, with no bisection.
func RRCountAlpha(n, n1 int, rho, beta float64) (float64, error) {
	if err := checkRR(n, n1, rho); err != nil {
		return 0, err
	}
	if err := param.InOpen("beta", beta, 0, 1); err != nil {
		return 0, err
	}
	pmf := rrCountPMF(n, n1, rho)
	mu := float64(n1)*(1-2*rho) + float64(n)*rho
	type dev struct{ d, p float64 }
	devs := make([]dev, len(pmf))
	for k, p := range pmf {
		devs[k] = dev{math.Abs(float64(k) - mu), p}
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].d > devs[j].d })
	// Walk from the largest deviation down while the tail strictly beyond
	// the current deviation stays within β.
	tail := 0.0
	for i := 0; i < len(devs); {
		d := devs[i].d
		mass := 0.0
		for ; i < len(devs) && devs[i].d == d; i++ {
			mass += devs[i].p
		}
		if tail+mass > beta {
			return d / (1 - 2*rho), nil
		}
		tail += mass
	}
	return 0, nil
}
