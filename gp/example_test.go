package gp_test

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/gp"
)

// Fit an RBF prior to one smooth series with the paper's recipe.
func ExampleFit() {
	ts := gp.Indices(40)
	y := make([]float64, len(ts))
	for i, t := range ts {
		y[i] = math.Sin(t/4) + 0.5*math.Cos(t/9)
	}
	res, err := gp.Fit(gp.RBF{Variance: 1, Lengthscale: 8}, []gp.Series{{T: ts, Y: y}}, gp.PaperFitOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("lengthscale %.2f samples\n", res.Kernel.(gp.RBF).Lengthscale)
	// Output:
	// lengthscale 7.57 samples
}

// Condition a prior on one observed point.
func ExampleCondition() {
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 2}, gp.Indices(3))
	c, _ := gp.Condition(sigma, []int{1})
	m, _ := c.Mean(nil, []float64{1})
	fmt.Printf("mean of the others %.3f %.3f, variance %.3f\n", m[0], m[1], c.C.At(0, 0))
	// Output:
	// mean of the others 0.882 0.882, variance 0.221
}
