package cip_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// The paper's Figure 2c setting in budget mode: every point of a 50-point
// trace (RBF, l_eff = 6.1) is a secret, and the total noise is 17.2. The
// paper's Multiple Secrets reaches a worst loss factor of 7.45 there.
func ExampleOptimalBudget() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	d, err := cip.OptimalBudget(sigma, cip.EveryPoint(50), 17.2, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: total noise %.1f, worst loss factor %.3f, lower bound %.3f\n",
		d.Method, d.Budget, d.LossFactor, d.LowerBound)
	// Output:
	// proportional: total noise 17.2, worst loss factor 2.907, lower bound 2.907
}

// Target mode for a few sensitive places: two basic secrets and a
// two-point compound secret, all at epsilon = 0.5 for lambda = 2 and a
// displacement of half a prior standard deviation.
func ExampleOptimalTarget() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50))
	secrets := []cip.Secret{cip.Basic(10), cip.Compound(24, 25), cip.Basic(40)}
	targets := make([]float64, len(secrets))
	for i, s := range secrets {
		targets[i], _ = cip.TargetLossFactor(0.5, 2, 0.5, s.NumLocations())
	}
	d, err := cip.OptimalTarget(sigma, secrets, targets, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: total noise %.3f, within 1e-6 of optimal: %v\n",
		d.Method, d.Budget, d.Budget-d.LowerBound <= 1e-6*d.Budget)
	for i, s := range secrets {
		fmt.Printf("secret %v: loss factor %.4f (target %.1f)\n", s.Indices, d.PerSecret[i], targets[i])
	}
	// Output:
	// e3-barrier: total noise 415.484, within 1e-6 of optimal: true
	// secret [10]: loss factor 2.0000 (target 2.0)
	// secret [24 25]: loss factor 1.0000 (target 1.0)
	// secret [40]: loss factor 2.0000 (target 2.0)
}
