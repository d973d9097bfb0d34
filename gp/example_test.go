package gp_test

import (
	"fmt"
	"log"
	"math"
	"strings"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
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

// A kernel by name, as prior files and the command line give it, and its
// covariance matrix at a trace's timestamps.
func ExampleNewKernel() {
	k, err := gp.NewKernel(gp.KernelMatern52, 100, 30, 0) // 100 m^2, 30 s
	if err != nil {
		log.Fatal(err)
	}
	sigma := gp.Gram(k, []float64{0, 10, 30, 90})
	fmt.Print(gp.KernelName(k), ":")
	for _, p := range k.Params() {
		fmt.Printf(" %s %g", p.Name, p.Value)
	}
	fmt.Println()
	fmt.Printf("covariance with the first point: %.1f %.1f %.1f %.1f\n", sigma.At(0, 0), sigma.At(0, 1), sigma.At(0, 2), sigma.At(0, 3))
	if _, err := gp.NewKernel("gaussian", 1, 1, 0); err != nil {
		fmt.Println("unknown names are refused")
	}
	// Output:
	// matern52: variance 100 lengthscale 30
	// covariance with the first point: 100.0 91.6 52.4 2.8
	// unknown names are refused
}

// A prior file as "tracepriv fit" writes it, read back: the family of
// adversary priors a release is certified against.
func ExamplePrior() {
	p, err := prior.Read(strings.NewReader(`{"version": 2, "kernel": "rbf", "variance_m2": 2500,
		"lengthscale_s": 20, "lengthscale_min_s": 10, "lengthscale_max_s": 40,
		"origin": {"lat": 39.98, "lon": 116.32, "note": "corpus centre"}}`))
	if err != nil {
		log.Fatal(err)
	}
	f := p.Family()
	fmt.Printf("family: %v (single lengthscale: %v)\n", f, f.Single())
	for _, l := range []float64{f.LengthscaleMin, f.LengthscaleMax} {
		k, err := f.Member(p.Variance, l)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("member at %g s: correlation at 10 s %.3f\n", l, k.Eval(0, 10)/k.Eval(0, 0))
	}
	if _, err := prior.Read(strings.NewReader(`{"version": 2, "kernel": "rbf", "variance_m2": 1, "lengthscale_s": 20, "lenghtscale_min_s": 10}`)); err != nil {
		fmt.Println("a misspelt field is an error")
	}
	// Output:
	// family: rbf, lengthscale in [10, 40] s (single lengthscale: false)
	// member at 10 s: correlation at 10 s 0.607
	// member at 40 s: correlation at 10 s 0.969
	// a misspelt field is an error
}
