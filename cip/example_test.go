package cip_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// The loss of isotropic noise on a 50-point trace with a median GeoLife
// dependence (RBF, l_eff = 6.1 samples), at order lambda = 2 for a
// displacement of r = 0.1 prior standard deviations.
func ExampleLossFactor() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	noise, _ := cip.IndependentUniform(50, 1.0)
	l, _ := cip.LossFactor(sigma, noise, cip.Basic(24))
	fmt.Printf("loss factor %.1f, epsilon %.2f\n", l, cip.Epsilon(l, 2, 0.1, 1))
	// Output:
	// loss factor 264.6, epsilon 2.65
}

// The closed-form optimal noise (E2) for the same secret and budget.
func ExampleOptimalBasic() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	d, _ := cip.OptimalBasic(sigma, 24, 1.0)
	adv, _ := cip.NewPosterior(sigma, d.SigmaG)
	twoSigma, _ := adv.TwoSigma(cip.Basic(24))
	fmt.Printf("budget %.2f, loss factor %.2f, epsilon %.3f, posterior 2-sigma %.2f\n",
		d.Budget, d.LossFactor, cip.Epsilon(d.LossFactor, 2, 0.1, 1), twoSigma)
	// Output:
	// budget 1.00, loss factor 7.72, epsilon 0.077, posterior 2-sigma 0.68
}

// Target mode: the least noise for epsilon = 0.5 at lambda = 2, r = 0.5.
func ExampleOptimalBasicTarget() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	t, _ := cip.TargetLossFactor(0.5, 2, 0.5, 1)
	d, _ := cip.OptimalBasicTarget(sigma, 24, t)
	fmt.Printf("target %.1f: budget %.3f, certified %.4f\n", t, d.Budget, d.LossFactor)
	// Output:
	// target 2.0: budget 4.540, certified 2.0000
}

// Theorem 3.1's example: epsilon = 0.1 at lambda = 5.
func ExamplePriorPosteriorGap() {
	for _, delta := range []float64{0.01, 0.1} {
		g, _ := cip.PriorPosteriorGap(0.1, 5, delta)
		fmt.Printf("delta %.2f: log-odds gap %.3f\n", delta, g)
	}
	// Output:
	// delta 0.01: log-odds gap 1.251
	// delta 0.10: log-odds gap 0.676
}
