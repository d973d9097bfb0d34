package stattest

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// normalInterval returns Φ(b) - Φ(a) for a <= b, from whichever tail keeps
// the difference free of cancellation.
func normalInterval(a, b float64) float64 {
	if a > 0 {
		return numeric.Phi(-a) - numeric.Phi(-b)
	}
	return numeric.Phi(b) - numeric.Phi(a)
}

// NormalCellProbs returns the probabilities that X ~ N(mu, sigma²) rounds
// to the lattice cell k·g, P((k-1/2)g < X < (k+1/2)g), for k = kmin..kmax,
// with the first and last entries absorbing the tails (X < (kmin+1/2)g and
// X > (kmax-1/2)g), so the result sums to 1 and suits ChiSquare. It panics
// if kmax <= kmin.
func NormalCellProbs(mu, sigma, g float64, kmin, kmax int) []float64 {
	if kmax <= kmin {
		panic(fmt.Sprintf("stattest: NormalCellProbs needs kmin < kmax, got %d, %d", kmin, kmax))
	}
	p := make([]float64, kmax-kmin+1)
	for k := kmin; k <= kmax; k++ {
		a := ((float64(k)-0.5)*g - mu) / sigma
		b := ((float64(k)+0.5)*g - mu) / sigma
		if k == kmin {
			a = math.Inf(-1)
		}
		if k == kmax {
			b = math.Inf(1)
		}
		p[k-kmin] = normalInterval(a, b)
	}
	return p
}

// bvnPanel is the widest x-panel of BivariateNormalRect's quadrature and
// bvnNodes its Gauss–Legendre order: with s = √(1-ρ²) >= 0.3 the integrand
// is analytic and varies on a scale of s, so 20 nodes per half unit give
// about 1e-15 absolute accuracy.
const (
	bvnPanel = 0.5
	bvnNodes = 20
	bvnCut   = 9 // Φ(-9) ≈ 1e-19: the x-range beyond it is dropped
)

// BivariateNormalRect returns P(a1 < X < b1, a2 < Y < b2) for standard
// normal X, Y with correlation rho, as the one-dimensional integral
// ∫_{a1}^{b1} φ(x)[Φ((b2-ρx)/s) - Φ((a2-ρx)/s)] dx, s = √(1-ρ²), by
// Gauss–Legendre quadrature on panels of width 1/2 over [a1, b1] ∩ [-9, 9].
// Infinite bounds are allowed. Accuracy is about 1e-14 for |rho| <= 0.95;
// it panics for |rho| > 0.95, where the integrand's scale s would need
// finer panels.
func BivariateNormalRect(a1, b1, a2, b2, rho float64) float64 {
	if !(math.Abs(rho) <= 0.95) {
		panic(fmt.Sprintf("stattest: BivariateNormalRect supports |rho| <= 0.95, got %v", rho))
	}
	lo, hi := math.Max(a1, -bvnCut), math.Min(b1, bvnCut)
	if !(hi > lo) || !(b2 > a2) {
		return 0
	}
	s := math.Sqrt(1 - rho*rho)
	f := func(x float64) float64 {
		phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		return phi * normalInterval((a2-rho*x)/s, (b2-rho*x)/s)
	}
	panels := int(math.Ceil((hi - lo) / bvnPanel))
	w := (hi - lo) / float64(panels)
	sum := 0.0
	for p := range panels {
		sum += quad.Fixed(f, lo+float64(p)*w, lo+float64(p+1)*w, bvnNodes, quad.Legendre{}, 0)
	}
	return sum
}

// PoolSmall merges the bins whose expected count n·probs[i] is below
// minExpected into one extra bin appended at the end (if any were merged),
// so that ChiSquare's normal approximation holds without dropping samples.
// It returns the new counts and probabilities.
func PoolSmall(counts []int, probs []float64, minExpected float64) ([]int, []float64) {
	n := 0
	for _, c := range counts {
		n += c
	}
	var oc []int
	var op []float64
	poolC, poolP, pooled := 0, 0.0, false
	for i, p := range probs {
		if float64(n)*p < minExpected {
			poolC += counts[i]
			poolP += p
			pooled = true
			continue
		}
		oc = append(oc, counts[i])
		op = append(op, p)
	}
	if pooled {
		oc = append(oc, poolC)
		op = append(op, poolP)
	}
	return oc, op
}
