package risk

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"
)

// ExactDensity evaluates Theorem 5.3 for a mechanism with a real-valued
// output and density dens(θ, x) over m candidates, for the adversary s
// (prior, auxiliary knowledge, success tolerance η as in Exact):
//
//	η-RAD = ∫ Σ_z max_{x'} Σ_{x∈a⁻¹(z), ℓ(x,x')≤η} (p(θ|x) − p(θ))·π_x dθ,
//
// by Gauss–Legendre quadrature with `nodes` points on each panel between
// consecutive knots (0 means 64). The integrand is smooth except where the
// maximising guess changes or a density has a kink, so the knots should
// include those points (for a location family under a uniform prior with
// η = 0, the candidate values and their midpoints) and span the range
// outside which the output has negligible mass.
func ExactDensity(dens func(theta float64, x int) float64, m int, s Setting, knots []float64, nodes int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	ev, err := newEvaluator(m, s)
	if err != nil {
		return 0, err
	}
	if len(knots) < 2 {
		return 0, errorf("need at least 2 knots, got %d", len(knots))
	}
	k := slices.Clone(knots)
	slices.Sort(k)
	k = slices.Compact(k)
	for _, v := range k {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, errorf("knots must be finite")
		}
	}
	if nodes <= 0 {
		nodes = 64
	}
	p := make([]float64, m)
	f := func(t float64) float64 {
		for x := range m {
			p[x] = dens(t, x)
		}
		return ev.at(p)
	}
	total := 0.0
	for i := 1; i < len(k); i++ {
		total += quad.Fixed(f, k[i-1], k[i], nodes, nil, 0)
	}
	return total, nil
}
