package accountant_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tracepriv/tracepriv/accountant"
)

// A DP-SGD-style run: 1000 Gaussian releases with σ = 40 (unit
// sensitivity), accounted three ways.
func ExampleRDPAccountant() {
	acc, err := accountant.NewRDPAccountant(nil)
	if err != nil {
		panic(err)
	}
	ev := accountant.Gaussian{Sigma: 40, Sensitivity: 1}
	if err := acc.Compose(ev, 1000); err != nil {
		panic(err)
	}
	eps, order, _ := acc.Epsilon(1e-5)
	fmt.Printf("RDP:  ε = %.4f at order %g\n", eps, order)

	zeps, _ := accountant.ZCDPEpsilon(1000*ev.Rho(), 1e-5)
	fmt.Printf("zCDP: ε = %.4f\n", zeps)

	mu, _ := accountant.ComposeGDP(make1000(ev.Mu())...)
	geps, _ := accountant.GDPEpsilon(mu, 1e-5)
	fmt.Printf("GDP:  μ = %.4f, ε = %.4f (exact)\n", mu, geps)
	// Output:
	// RDP:  ε = 3.6171 at order 6.6
	// zCDP: ε = 3.6170
	// GDP:  μ = 0.7906, ε = 3.3414 (exact)
}

func make1000(mu float64) []float64 {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = mu
	}
	return v
}

func ExampleGaussianDelta() {
	// Balle & Wang's analytic Gaussian mechanism and its inverse.
	delta, _ := accountant.GaussianDelta(10, 0.1, 1)
	sigma, _ := accountant.GaussianSigma(0.1, delta, 1)
	fmt.Printf("δ = %.12f, σ = %.6f\n", delta, sigma)
	// Output: δ = 0.008751768146, σ = 10.000000
}

func ExampleParallel() {
	// Laplace counts on the cells of a map grid, bounded DP.
	grid := accountant.Parallel{Granularity: accountant.Bounded, Partition: accountant.ByValue}
	_, err := grid.Epsilon(0.5, 0.5, 0.5)
	var ng *accountant.NoGuaranteeError
	fmt.Println("run on the cells as separate databases:", errors.As(err, &ng))

	grid.CommonDomain = true // each count reads the whole database
	eps, _ := grid.Epsilon(0.5, 0.5, 0.5)
	fmt.Println("counts defined on the whole database: ε =", eps)
	// Output:
	// run on the cells as separate databases: true
	// counts defined on the whole database: ε = 1
}

func ExampleMetric_Pullback() {
	// Planar Laplace at 0.01 per metre, sequentially three times, then fed
	// coordinates in kilometres.
	one, _ := accountant.PlanarLaplace(0.01, "m").Of()
	total := accountant.Sequential(one, one, one)
	km, _ := total.Pullback(accountant.Map{Name: "km to m", From: "euclidean_km", To: "euclidean_m", Lipschitz: 1000})
	fmt.Println(total)
	fmt.Println(km)
	// Output:
	// 0.03·euclidean_m
	// 30·euclidean_km
}

func ExampleParseEventLog() {
	l, err := accountant.ParseEventLog(strings.NewReader(`
version: 1
events:
  - type: gaussian
    sigma: 4
    count: 4
`))
	if err != nil {
		panic(err)
	}
	rep, _ := l.DeltaAt(1)
	fmt.Printf("μ = %g, δ(1) = %.6f via %s\n", rep.GDP.Mu, rep.Delta, rep.Method)
	// Output: μ = 0.5, δ(1) = 0.006830 via gdp
}
