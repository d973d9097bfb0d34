package stattest

import (
	"fmt"
	"math"
)

// Bins is a histogram of N equal-width bins over [Lo, Hi). Samples outside
// the range go to the first or last bin (as Google's Bucketize does), so each
// end bin is the event "at most / at least" and no sample is lost.
type Bins struct {
	Lo, Hi float64
	N      int
}

// Index returns the bin of x; NaN goes to bin 0.
func (b Bins) Index(x float64) int {
	if b.N <= 1 || !(b.Hi > b.Lo) || !(x >= b.Lo) {
		return 0
	}
	i := int(float64(b.N) * (x - b.Lo) / (b.Hi - b.Lo))
	return min(i, b.N-1)
}

// Histogram returns the counts of xs in b.
func (b Bins) Histogram(xs []float64) []int {
	c := make([]int, max(b.N, 1))
	for _, x := range xs {
		c[b.Index(x)]++
	}
	return c
}

// Counts turns bin indices in [0, m) into a histogram; it errors on an index
// out of range rather than dropping it.
func Counts(idx []int, m int) ([]int, error) {
	c := make([]int, m)
	for i, k := range idx {
		if k < 0 || k >= m {
			return nil, fmt.Errorf("stattest: sample %d has bin %d outside [0, %d)", i, k, m)
		}
		c[k]++
	}
	return c, nil
}

// DPCheck is a per-bin empirical (ε, δ)-DP test of two output histograms,
// one from M(x) and one from a neighbour M(x'). See the package comment.
type DPCheck struct {
	Epsilon float64 // claimed ε (for metric privacy: ε·d(x, x'))
	Delta   float64 // claimed δ, 0 for pure DP
	// Z is the per-bin z-value of the slack; 0 means Z (4.41717).
	Z float64
	// MinCount pools bins with fewer samples (a plus b) into one event;
	// 0 means 100, where the normal approximation of the slack is sound.
	MinCount int
}

// BinExcess describes the worst bin found by DPCheck.Check.
type BinExcess struct {
	Bin    int     // bin index; -1 for the pooled low-count event
	AtoB   bool    // true if the excess is of a over b, false b over a
	PA, PB float64 // estimated probabilities of the bin under a and b
	Excess float64 // p̂_hi - e^ε p̂_lo - δ
	Slack  float64 // z·√((p̂_hi + e^{2ε} p̂_lo)/n)
}

// DPResult is the outcome of a DPCheck.
type DPResult struct {
	OK       bool      // no bin's excess exceeded its slack
	Worst    BinExcess // bin with the largest Excess - Slack
	Tested   int       // number of events tested (bins kept plus the pool)
	Pooled   int       // number of bins pooled into the low-count event
	MaxRatio float64   // largest p̂_a/p̂_b or p̂_b/p̂_a over tested events with both > 0
}

// Check tests the two histograms in both directions. countsA and countsB
// must have equal length; their totals may differ.
func (c DPCheck) Check(countsA, countsB []int) (DPResult, error) {
	if len(countsA) != len(countsB) || len(countsA) == 0 {
		return DPResult{}, fmt.Errorf("stattest: DP check needs two non-empty histograms of equal length, got %d and %d bins", len(countsA), len(countsB))
	}
	if !(c.Epsilon >= 0) || math.IsInf(c.Epsilon, 1) || !(c.Delta >= 0 && c.Delta < 1) {
		return DPResult{}, fmt.Errorf("stattest: DP check needs finite epsilon >= 0 and delta in [0, 1), got %v, %v", c.Epsilon, c.Delta)
	}
	z := c.Z
	if z == 0 {
		z = Z
	}
	minCount := c.MinCount
	if minCount == 0 {
		minCount = 100
	}
	na, nb := 0, 0
	for i := range countsA {
		if countsA[i] < 0 || countsB[i] < 0 {
			return DPResult{}, fmt.Errorf("stattest: negative count in bin %d", i)
		}
		na += countsA[i]
		nb += countsB[i]
	}
	if na == 0 || nb == 0 {
		return DPResult{}, fmt.Errorf("stattest: DP check needs samples on both sides, got %d and %d", na, nb)
	}
	res := DPResult{OK: true, Worst: BinExcess{Excess: math.Inf(-1), Slack: 0}}
	worstMargin := math.Inf(-1)
	ee := math.Exp(c.Epsilon)
	test := func(bin, ca, cb int) {
		pa, pb := float64(ca)/float64(na), float64(cb)/float64(nb)
		if pa > 0 && pb > 0 {
			res.MaxRatio = math.Max(res.MaxRatio, math.Max(pa/pb, pb/pa))
		}
		for _, aToB := range []bool{true, false} {
			hi, lo, nhi, nlo := pa, pb, na, nb
			if !aToB {
				hi, lo, nhi, nlo = pb, pa, nb, na
			}
			excess := hi - ee*lo - c.Delta
			slack := z * math.Sqrt(hi/float64(nhi)+ee*ee*lo/float64(nlo))
			if m := excess - slack; m > worstMargin {
				worstMargin = m
				res.Worst = BinExcess{Bin: bin, AtoB: aToB, PA: pa, PB: pb, Excess: excess, Slack: slack}
			}
			if excess > slack {
				res.OK = false
			}
		}
		res.Tested++
	}
	poolA, poolB := 0, 0
	for i := range countsA {
		if countsA[i]+countsB[i] < minCount {
			poolA += countsA[i]
			poolB += countsB[i]
			res.Pooled++
			continue
		}
		test(i, countsA[i], countsB[i])
	}
	if poolA+poolB > 0 {
		test(-1, poolA, poolB)
	}
	return res, nil
}

// ApproxDPTestValue returns Google's estimate Σ_bins max(0, (c_a - e^ε c_b)/n)
// of the smallest δ' for which the histogram of a is (ε, δ')-close to b's,
// with n the number of samples in a. Both histograms must come from the same
// number of samples.
func ApproxDPTestValue(countsA, countsB []int, eps float64) float64 {
	n := 0
	for _, c := range countsA {
		n += c
	}
	ee := math.Exp(eps)
	v := 0.0
	for i, ca := range countsA {
		v += math.Max(0, (float64(ca)-ee*float64(countsB[i]))/float64(n))
	}
	return v
}

// VerifyApproximateDP is Google's VerifyApproximateDp: it accepts if both
// directional test values are below delta + tolerance. It errors on
// histograms of different length or sample totals.
func VerifyApproximateDP(countsA, countsB []int, eps, delta, tolerance float64) (bool, error) {
	if len(countsA) != len(countsB) {
		return false, fmt.Errorf("stattest: histograms have %d and %d bins", len(countsA), len(countsB))
	}
	na, nb := 0, 0
	for i := range countsA {
		na += countsA[i]
		nb += countsB[i]
	}
	if na != nb || na == 0 {
		return false, fmt.Errorf("stattest: histograms need equal, positive sample totals, got %d and %d", na, nb)
	}
	if !(tolerance > 0 && tolerance < 1) || !(eps >= 0) || !(delta >= 0 && delta < 1) {
		return false, fmt.Errorf("stattest: need eps >= 0, delta in [0,1), tolerance in (0,1); got %v, %v, %v", eps, delta, tolerance)
	}
	return ApproxDPTestValue(countsA, countsB, eps) < delta+tolerance &&
		ApproxDPTestValue(countsB, countsA, eps) < delta+tolerance, nil
}

// ApproxDPErrorBound returns Google's bound on the error probability of
// VerifyApproximateDP with n samples, support size m and tolerance α:
// (1+e^{2ε})/(n(α - √(m/n)(1+e^{2ε}))²), or +Inf when α <= √(m/n)(1+e^{2ε})
// and the bound says nothing.
func ApproxDPErrorBound(n, m int, eps, alpha float64) float64 {
	c := 1 + math.Exp(2*eps)
	gap := alpha - math.Sqrt(float64(m)/float64(n))*c
	if gap <= 0 {
		return math.Inf(1)
	}
	return c / (float64(n) * gap * gap)
}

// Vote runs trial(0), trial(1), … up to n times and returns the majority
// outcome, stopping as soon as it is decided. n should be odd.
func Vote(n int, trial func(i int) bool) bool {
	yes, no := 0, 0
	need := n/2 + 1
	for i := 0; i < n && yes < need && no < need; i++ {
		if trial(i) {
			yes++
		} else {
			no++
		}
	}
	return yes >= need
}
