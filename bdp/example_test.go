package bdp_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/bdp"
)

// Calibrate a Laplace count over a day of 5-minute activity states (n = 288)
// whose transitions are modelled by a Markov chain: the Markov bound beats
// the general bound above its floor 4 ln γ.
func ExampleBestOf() {
	mk, _ := bdp.NewMarkov([][]float64{{0.818, 0.182}, {0.371, 0.629}}, 1e-9)
	for _, eps := range []float64{5, 20} {
		c, _ := bdp.BestOf(eps, bdp.Groups{M: 288}, mk)
		fmt.Printf("ε=%g: τ=%.4f (factor %.1f) from %s\n", eps, c.Tau, c.Factor, c.Model)
	}
	// Output:
	// ε=5: τ=0.0174 (factor 288.0) from groups(m=288)
	// ε=20: τ=13.9886 (factor 1.4) from markov(gamma=4.495)
}

// Galton heights: groups of m = 3 relatives with correlation at most 0.275.
func ExampleGaussian_Factor() {
	h, _ := bdp.Gaussian{M: 3, Rho: 0.275}.Factor()
	fmt.Printf("h = %.4f, τ = ε/h = %.4f·ε\n", h, 1/h)
	// Output: h = 1.8534, τ = ε/h = 0.5395·ε
}

// Example 2.25 of the thesis: Alice and Bob share a house, Pr[same health]
// = 0.9, and a Laplace count with ε = 1 leaks more than ε about Alice.
func ExampleLeakageLaplace() {
	j := bdp.Joint{States: 2, N: 2, P: []float64{0.45, 0.05, 0.05, 0.45}}
	r, _ := bdp.LeakageLaplace(j, bdp.SumQuery(j), 1)
	fmt.Printf("BDPL %.4f > ε = 1, adversary knows %d records\n", r.BDPL, len(r.Known))
	// Output: BDPL 1.7761 > ε = 1, adversary knows 0 records
}
