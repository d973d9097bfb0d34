package stattest

import (
	"fmt"
	"math"
)

// SupportResult is the outcome of a support attack: how many releases drawn
// from M(x) a support model proves impossible under a neighbour x'.
type SupportResult struct {
	Tested     int
	Impossible int
}

// Rate returns Impossible/Tested, an unbiased estimate of P(M(x) ∉
// supp M(x')).
func (r SupportResult) Rate() float64 {
	if r.Tested == 0 {
		return 0
	}
	return float64(r.Impossible) / float64(r.Tested)
}

// DeltaLowerBound returns a one-sided lower confidence bound, at z standard
// errors, on P(M(x) ∉ supp M(x')). That event has probability 0 under x', so
// M is not (ε, δ)-DP for any ε when δ is below this probability: an attack
// with a positive bound refutes every finite ε at that δ.
func (r SupportResult) DeltaLowerBound(z float64) float64 {
	if r.Tested == 0 {
		return 0
	}
	p := r.Rate()
	return math.Max(0, p-z*math.Sqrt(p*(1-p)/float64(r.Tested)))
}

// SupportAttack counts the releases for which possible reports false.
// possible must over-approximate the neighbour's support (never call a
// reachable output impossible), so that each count is a proof; the attack
// is Mironov's (CCS 2012) against floating-point samplers, whose reachable
// outputs depend on the input's low-order bits.
func SupportAttack[T any](releases []T, possible func(T) bool) SupportResult {
	r := SupportResult{Tested: len(releases)}
	for _, y := range releases {
		if !possible(y) {
			r.Impossible++
		}
	}
	return r
}

// maxListedMissing caps LatticeCoverage.Missing.
const maxListedMissing = 10

// LatticeCoverage describes how a sample of releases covers the lattice
// points k·g in a window.
type LatticeCoverage struct {
	// OffLattice counts outputs that are not finite exact multiples of g.
	OffLattice int
	// Points is the number of lattice points in the window and Hit how
	// many of them occurred at least once.
	Points, Hit int64
	// Missing lists up to 10 lattice points in the window never hit.
	Missing []float64
}

// Fraction returns Hit/Points.
func (c LatticeCoverage) Fraction() float64 {
	if c.Points == 0 {
		return 0
	}
	return float64(c.Hit) / float64(c.Points)
}

// CoverLattice measures how ys cover the lattice points k·g in [lo, hi]. It
// is a black-box test of a lattice mechanism: a sampler whose output set is
// the whole lattice hits every point of non-negligible probability, while a
// floating-point sampler rounded to a lattice finer than its own float
// spacing reaches only a fraction of them. g should be a power of two, for
// which y/g and k·g are exact and the multiple test is exact. It errors on
// g <= 0 or a window that is empty or wider than 2^52 points.
func CoverLattice(ys []float64, g, lo, hi float64) (LatticeCoverage, error) {
	if !(g > 0) || math.IsInf(g, 1) || !(hi >= lo) {
		return LatticeCoverage{}, fmt.Errorf("stattest: lattice coverage needs g > 0 and lo <= hi, got g=%v, [%v, %v]", g, lo, hi)
	}
	kmin, kmax := math.Ceil(lo/g), math.Floor(hi/g)
	if !(kmax-kmin < 0x1p52) || kmax < kmin {
		return LatticeCoverage{}, fmt.Errorf("stattest: lattice window [%v, %v] at step %v has no points or too many", lo, hi, g)
	}
	c := LatticeCoverage{Points: int64(kmax-kmin) + 1}
	hit := make(map[int64]bool)
	for _, y := range ys {
		q := y / g
		if math.IsNaN(q) || math.IsInf(q, 0) || q != math.Trunc(q) {
			c.OffLattice++
			continue
		}
		if q >= kmin && q <= kmax {
			hit[int64(q-kmin)] = true
		}
	}
	c.Hit = int64(len(hit))
	for k := int64(0); k < c.Points && len(c.Missing) < maxListedMissing && c.Hit < c.Points; k++ {
		if !hit[k] {
			c.Missing = append(c.Missing, (kmin+float64(k))*g)
		}
	}
	return c, nil
}

// MissProbability returns (1-p)^n, the probability that an outcome of
// probability p never occurs in n independent draws; summed over the
// lattice points of a window it bounds CoverLattice's false-alarm rate.
func MissProbability(p float64, n int) float64 {
	return math.Exp(float64(n) * math.Log1p(-p))
}
