package bdp

import (
	"math"
	"testing"
)

// Example 2.25 (Alice and Bob): X₁ ~ Bern(½), Pr[X₂ = X₁] = 0.9, release
// X₁ + X₂ + Lap(1/ε). The adversary knowing nothing (K = ∅) about Bob leaks
// ln((0.9e^{2ε} + 0.1e^ε)/(0.1e^ε + 0.9)), ≈ 1.7761 at ε = 1 (the θ → ∞
// limit; thesis_part1 §2.10), more than the DP ε; knowing Bob leaks ε.
func TestLeakageLaplaceExample225(t *testing.T) {
	j := Joint{States: 2, N: 2, P: []float64{0.45, 0.05, 0.05, 0.45}}
	for _, eps := range []float64{0.5, 1, 2} {
		r, err := LeakageLaplace(j, SumQuery(j), 1/eps)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Log((0.9*math.Exp(2*eps) + 0.1*math.Exp(eps)) / (0.1*math.Exp(eps) + 0.9))
		near(t, "Example 2.25 BDPL", r.BDPL, want, 1e-12)
		if len(r.Known) != 0 {
			t.Errorf("ε=%v: attained with K = %v, want ∅", eps, r.Known)
		}
		if eps == 1 {
			near(t, "Example 2.25 at ε=1", r.BDPL, 1.7761, 5.01e-5)
		}
	}
	// Independent records: exactly ε.
	ind := product([]float64{0.5, 0.5}, 2)
	r, _ := LeakageLaplace(ind, SumQuery(ind), 1)
	near(t, "independent", r.BDPL, 1, 1e-12)
}

// Theorem 6.20 for the Laplace count on stationary chains, and the general
// bound: leakage ≤ min(τ + 4 ln γ, nτ).
func TestLeakageLaplaceMarkov(t *testing.T) {
	t.Parallel()
	for _, p := range [][][]float64{
		{{0.8, 0.2}, {0.3, 0.7}},
		{{0.818, 0.182}, {0.371, 0.629}},
		{{0.55, 0.45}, {0.4, 0.6}},
	} {
		w, _ := Stationary(p)
		mk, _ := NewMarkov(p, 1e-12)
		for n := 2; n <= 6; n++ {
			j, _ := MarkovJoint(p, w, n)
			for _, tau := range []float64{0.3, 1, 3} {
				r, err := LeakageLaplace(j, SumQuery(j), 1/tau)
				if err != nil {
					t.Fatal(err)
				}
				mb, _ := mk.Leakage(tau)
				if r.BDPL < tau-1e-12 || r.BDPL > math.Min(mb, float64(n)*tau)+1e-12 {
					t.Errorf("n=%d τ=%v: BDPL %v outside [τ, min(%v, %v)]", n, tau, r.BDPL, mb, float64(n)*tau)
				}
			}
		}
	}
}

// The exact sup agrees with a dense grid search over θ (it can only be
// larger, and not by more than the grid's resolution).
func TestLeakageLaplaceGridCheck(t *testing.T) {
	p := [][]float64{{0.7, 0.3}, {0.2, 0.8}}
	w, _ := Stationary(p)
	j, _ := MarkovJoint(p, w, 3)
	q := SumQuery(j)
	const b = 0.8
	r, _ := LeakageLaplace(j, q, b)
	// Grid over θ for the adversary found, scanning all value pairs.
	dens := func(key func(x int) bool, theta float64) float64 {
		num, mass := 0.0, 0.0
		for x, px := range j.P {
			if key(x) {
				num += px * math.Exp(-math.Abs(theta-q[x])/b)
				mass += px
			}
		}
		return num / mass
	}
	grid := 0.0
	for _, known := range [][]int{r.Known} {
		for kv := 0; kv < 1<<len(known); kv++ {
			for a := range 2 {
				for c := range 2 {
					if a == c {
						continue
					}
					match := func(v int) func(x int) bool {
						return func(x int) bool {
							if j.digit(x, r.Target) != v {
								return false
							}
							for bit, k := range known {
								if j.digit(x, k) != kv>>bit&1 {
									return false
								}
							}
							return true
						}
					}
					for th := -30.0; th <= 33; th += 0.01 {
						grid = math.Max(grid, math.Log(dens(match(a), th)/dens(match(c), th)))
					}
				}
			}
		}
	}
	if grid > r.BDPL+1e-9 || grid < r.BDPL-1e-3 {
		t.Errorf("grid search %v vs exact %v", grid, r.BDPL)
	}
}
