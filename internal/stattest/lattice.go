package stattest

import "math"

// BivariateCellProbs returns the probabilities that (X, Y), normal with
// means mu1, mu2, standard deviations s1, s2 and correlation rho, rounds to
// each lattice cell (c1+i, c2+j)·g for i, j in -half..half (row-major, i
// first), followed by the probability of every other cell, so the result
// sums to 1 and suits ChiSquare after PoolSmall. The limits of
// BivariateNormalRect apply (|rho| <= 0.95).
func BivariateCellProbs(mu1, mu2, s1, s2, rho, g float64, c1, c2, half int) []float64 {
	side := 2*half + 1
	p := make([]float64, side*side+1)
	in := 0.0
	for i := range side {
		for j := range side {
			k1, k2 := float64(c1+i-half), float64(c2+j-half)
			v := BivariateNormalRect(((k1-0.5)*g-mu1)/s1, ((k1+0.5)*g-mu1)/s1,
				((k2-0.5)*g-mu2)/s2, ((k2+0.5)*g-mu2)/s2, rho)
			p[i*side+j] = v
			in += v
		}
	}
	p[side*side] = math.Max(0, 1-in)
	return p
}

// CoverLatticeFalseAlarm bounds the probability that CoverLattice reports
// a miss for a correct sampler: Σ over the lattice points k·g in [lo, hi]
// of (1 - p_k)^n, p_k the probability that N(mu, sigma²) rounds to k·g
// (a union bound over the points).
func CoverLatticeFalseAlarm(mu, sigma, g, lo, hi float64, n int) float64 {
	kmin, kmax := int(math.Ceil(lo/g)), int(math.Floor(hi/g))
	if kmax < kmin {
		return 0
	}
	// Cells kmin-1 and kmax+1 absorb the tails; the points are inside.
	probs := NormalCellProbs(mu, sigma, g, kmin-1, kmax+1)
	s := 0.0
	for _, p := range probs[1 : len(probs)-1] {
		s += MissProbability(p, n)
	}
	return s
}
