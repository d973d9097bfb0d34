package attack_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/gp"
)

// A walk of 20 minutes sampled every 5 s, released with correlated noise
// of 100 m RMS, attacked by the strongest adversary of a Matérn-3/2 family
// with lengthscales from 10 s to 10 minutes.
func ExampleAttack() {
	n := 240
	ts := make([]float64, n)
	truth := attack.Planar{East: make([]float64, n), North: make([]float64, n)}
	for i := range n {
		t := 5 * float64(i)
		ts[i] = t
		truth.East[i] = 1.4*t + 80*math.Sin(t/150)
		truth.North[i] = 300 * math.Sin(t/400)
	}
	// The noise covariance is public: 4950 m^2 correlated over 30 s plus
	// 50 m^2 of white noise per dimension.
	var sigmaG mat.SymDense
	sigmaG.ScaleSym(4950, gp.Gram(gp.Matern52{Variance: 1, Lengthscale: 30}, ts))
	for i := range n {
		sigmaG.SetSym(i, i, sigmaG.At(i, i)+50)
	}
	// A stand-in for the release of package sanitize: truth plus one
	// seeded draw of N(0, SigmaG) per dimension.
	var chol mat.Cholesky
	if !chol.Factorize(&sigmaG) {
		panic("noise covariance not positive definite")
	}
	var l mat.TriDense
	chol.LTo(&l)
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(x []float64) []float64 {
		w := mat.NewVecDense(n, nil)
		for i := range n {
			w.SetVec(i, rng.NormFloat64())
		}
		var g mat.VecDense
		g.MulVec(&l, w)
		z := make([]float64, n)
		for i := range n {
			z[i] = x[i] + g.AtVec(i)
		}
		return z
	}
	released := attack.Planar{East: draw(truth.East), North: draw(truth.North)}

	every := make([]int, n)
	for i := range every {
		every[i] = i
	}
	adv := attack.Adversary{Family: gp.Family{Kernel: gp.KernelMatern32, LengthscaleMin: 10, LengthscaleMax: 600}}
	r, _, err := attack.Attack(ts, truth, released, &sigmaG, adv, every, 50)
	if err != nil {
		panic(err)
	}
	fmt.Printf("release RMSE %.0f m, reconstruction RMSE %.0f m\n", r.ReleasedRMSE, r.ReconstructedRMSE)
	fmt.Printf("within 50 m: release %.0f%%, reconstruction %.0f%%\n", 100*r.ReleaseWithinRadius, 100*r.WithinRadius)
	fmt.Printf("better than the release: %v; mean model %s\n", r.ReconstructedRMSE < r.ReleasedRMSE, r.Adversary.East.Mean)
	// Output:
	// release RMSE 91 m, reconstruction RMSE 32 m
	// within 50 m: release 25%, reconstruction 98%
	// better than the release: true; mean model linear
}
