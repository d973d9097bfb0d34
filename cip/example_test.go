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

// One entry point for every designer. At the paper's Figure 2a setting
// (one basic secret, total noise 1) tracepriv's optimum against the paper's
// SDP_A; then target mode for a few sensitive places, epsilon = 0.5 at
// lambda = 2 for displacements of half a prior standard deviation.
func ExampleDesignNoise() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	for _, m := range []cip.Method{cip.MethodE3, cip.MethodPaper} {
		d, err := cip.DesignNoise(cip.DesignRequest{Method: m, Sigma: sigma, Secrets: []cip.Secret{cip.Basic(24)}, Budget: 1})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: total noise %.2f, loss factor %.3g\n", d.Method, d.Budget, d.LossFactors[0])
	}

	secrets := []cip.Secret{cip.Basic(10), cip.Compound(24, 25), cip.Basic(40)}
	targets, _ := cip.TargetLossFactors(secrets, 0.5, 2, 0.5)
	d, err := cip.DesignNoise(cip.DesignRequest{Sigma: sigma, Secrets: secrets, Targets: targets})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (solver %s): total noise %.2f, lower bound %.2f\n", d.Method, d.Solver, d.Budget, d.LowerBound)
	for i, s := range secrets {
		fmt.Printf("secret %v: epsilon %.3f\n", s.Indices, cip.Epsilon(d.LossFactors[i], 2, 0.5, s.NumLocations()))
	}
	// Output:
	// e3: total noise 1.00, loss factor 7.72
	// paper-sdp-a: total noise 1.00, loss factor 21.6
	// e3 (solver e3-barrier): total noise 415.48, lower bound 415.48
	// secret [10]: epsilon 0.500
	// secret [24 25]: epsilon 0.500
	// secret [40]: epsilon 0.500
}

// Certify independent noise on a 50-point trace for one point and a pair
// of consecutive points, and state the guarantee at lambda = 2 for secrets
// within r = 0.1 prior standard deviations.
func ExampleAssess() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	noise, _ := cip.IndependentUniform(50, 1.0)
	secrets := []cip.Secret{cip.Basic(24), cip.Compound(30, 31)}
	a, err := cip.Assess(sigma, noise, secrets, cip.AssessOptions{Lambda: 2, Radius: 0.1})
	if err != nil {
		panic(err)
	}
	for _, s := range a.Secrets {
		fmt.Printf("secret %v: loss factor %.1f, epsilon %.2f\n", s.Indices, s.LossFactor, *s.Epsilon)
	}
	fmt.Printf("worst epsilon %.2f\n", *a.Epsilon)
	// Output:
	// secret [24]: loss factor 264.6, epsilon 2.65
	// secret [30 31]: loss factor 4291.3, epsilon 85.83
	// worst epsilon 85.83
}

// The bounds behind the places and route classes of a release: the
// largest 1' R^-1 1 of a window of one lengthscale under each Matérn
// kernel (none for the RBF), and the route's 1' K^-1 1 for the common
// noise component over a day of fixes every 10 s.
func ExamplePlaceNorm() {
	for _, k := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52, gp.KernelRBF} {
		v, ok := cip.PlaceNorm(k, 1)
		fmt.Printf("%s: %.4f %v\n", k, v, ok)
	}
	ts := make([]float64, 8640)
	for i := range ts {
		ts[i] = 10 * float64(i)
	}
	fmt.Printf("route factor over a day: %.6f\n", cip.RouteFactor(ts))
	// Output:
	// matern12: 1.5000 true
	// matern32: 1.4330 true
	// matern52: 1.5443 true
	// rbf: +Inf false
	// route factor over a day: 1.000043
}
