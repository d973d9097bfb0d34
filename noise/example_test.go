package noise_test

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"

	"gonum.org/v1/gonum/mat"
)

func ExampleLazyNormal() {
	z := noise.NewLazyNormal(noise.Seeded(1)) // src nil for crypto/rand
	fmt.Printf("%.6f (error at most %.0e, %d bits known)\n", z.Float64(), z.ErrorBound(), z.Bits())
	z.Refine(noise.Seeded(2), 256)
	var lo, hi big.Float
	z.Enclosure(&lo, &hi)
	fmt.Printf("%d bits: (%.30g, ...)\n", z.Bits(), &lo)
	// Output:
	// -0.491331 (error at most 3e-16, 64 bits known)
	// 256 bits: (-0.491331047599484433321893881849, ...)
}

func ExampleGaussian() {
	// σ for (ε, δ) = (1, 1e-5) at L2 sensitivity 1, as
	// accountant.GaussianSigma(1, 1e-5, 1) calibrates it.
	const sigma = 3.7306316348159418
	g := noise.Gaussian{Sigma: sigma, Src: noise.Seeded(1)} // Src: nil for crypto/rand
	y := g.Add(10)
	fmt.Println("on the lattice:", math.Mod(y, g.Granularity()) == 0)
	// Output:
	// on the lattice: true
}

func ExampleLaplace() {
	// Release a count (sensitivity 1) with ε = 0.5. Src: nil would use
	// crypto/rand; a seeded source is for reproducible documentation only.
	l := noise.Laplace{Epsilon: 0.5, Sensitivity: 1, Src: noise.Seeded(42)}
	noisy := l.Add(120)
	fmt.Printf("scale %.1f, 90%% one-sided bound %.3f\n", l.Scale(), l.Quantile(0.9))
	fmt.Println("on the lattice:", math.Mod(noisy, l.Granularity()) == 0)
	fmt.Println("granularity 2^", math.Log2(l.Granularity()))
	// Output:
	// scale 2.0, 90% one-sided bound 3.219
	// on the lattice: true
	// granularity 2^ -39
}

// The exact release of a three-point trace on a 1 mm grid (2^-10 m) with a
// Cholesky factor: every output is a multiple of the grid, and the same
// seed gives the same release.
func ExampleMultiNormal_AddOnGrid() {
	// Covariance of three points 10 s apart under an RBF prior of
	// lengthscale 20 s and standard deviation 5 m.
	cov := mat.NewSymDense(3, nil)
	for i := range 3 {
		for j := i; j < 3; j++ {
			d := 10 * float64(i-j)
			cov.SetSym(i, j, 25*math.Exp(-d*d/(2*20*20)))
		}
	}
	mn, err := noise.NewMultiNormalCholesky(cov)
	if err != nil {
		panic(err)
	}
	east := []float64{1203.0625131, 1210.3370002, 1219.8829137}
	const g = 0x1p-10                                     // the grid, in metres
	y, err := mn.AddOnGrid(nil, east, g, noise.Seeded(1)) // src nil for crypto/rand
	if err != nil {
		panic(err)
	}
	for _, v := range y {
		fmt.Printf("%.4f m = %.0f·g\n", v, v/g)
	}
	fmt.Printf("jitter below 1e-12: %v\n", mn.Jitter() < 1e-12)
	// Output:
	// 1200.6055 m = 1229420·g
	// 1210.3496 m = 1239398·g
	// 1222.0059 m = 1251334·g
	// jitter below 1e-12: true
}

// A state-space release of a two-component Matérn noise on a 1 mm grid:
// outputs are grid multiples, and the same seed gives the same release.
func ExampleNewMarkovRelease() {
	var comps []noise.StateSpace
	for _, k := range []gp.Kernel{gp.Matern72{Variance: 0.8, Lengthscale: 8.6}, gp.Matern72{Variance: 0.6, Lengthscale: 41}} {
		m, err := gp.StateSpace(k)
		if err != nil {
			panic(err)
		}
		comps = append(comps, m)
	}
	ts := []float64{0, 1, 3, 4, 9}                                // seconds
	east := []float64{1203.06, 1204.51, 1207.43, 1208.90, 1216.2} // metres
	north := []float64{-80.12, -80.40, -81.05, -81.33, -83.0}
	r, err := noise.NewMarkovRelease(comps, 400, noise.MarkovOptions{N: len(ts), Dims: 2, Grid: 0x1p-10, Source: noise.Seeded(1)}) // Source nil for crypto/rand
	if err != nil {
		panic(err)
	}
	out := [][]float64{make([]float64, 5), make([]float64, 5)}
	if err := r.Release(out, [][]float64{east, north}, ts); err != nil {
		panic(err)
	}
	for i := range ts {
		fmt.Printf("t=%g: %.4f, %.4f\n", ts[i], out[0][i], out[1][i])
	}
	fmt.Printf("randomness %s, η below 1e-9 m²: %v\n", r.Randomness(), r.Eta() < 1e-9)
	// Output:
	// t=0: 1194.7529, -76.7627
	// t=1: 1193.7559, -76.5449
	// t=3: 1191.4121, -78.1758
	// t=4: 1190.3701, -80.6631
	// t=9: 1185.0918, -94.0029
	// randomness seeded:1, η below 1e-9 m²: true
}

// Streaming: a day's fixes arrive in batches; N bounds the day's count, so
// η is fixed before the first batch is released, and the batches' noise
// continues one recursion (the same release as one call with every point).
func ExampleMarkovRelease_Release() {
	m, err := gp.StateSpace(gp.Matern52{Variance: 1, Lengthscale: 30})
	if err != nil {
		panic(err)
	}
	r, err := noise.NewMarkovRelease([]noise.StateSpace{m}, 2500, noise.MarkovOptions{N: 86400, Dims: 2, Grid: 0x1p-10, Source: noise.Seeded(7)})
	if err != nil {
		panic(err)
	}
	batches := []struct{ ts, east, north []float64 }{
		{[]float64{0, 1, 2}, []float64{10, 11, 12.5}, []float64{-4, -4.2, -4.1}},
		{[]float64{4, 5}, []float64{15, 16.2}, []float64{-3.9, -3.5}},
	}
	for _, b := range batches {
		out := [][]float64{make([]float64, len(b.ts)), make([]float64, len(b.ts))}
		if err := r.Release(out, [][]float64{b.east, b.north}, b.ts); err != nil {
			panic(err)
		}
		fmt.Printf("%.3f %.3f\n", out[0], out[1])
	}
	fmt.Printf("released %d of 86400, η = %.1e m²\n", r.Released(), r.Eta())
	// Output:
	// [74.465 80.303 86.781] [-15.062 -16.060 -16.752]
	// [96.776 100.485] [-17.279 -16.709]
	// released 5 of 86400, η = 1.6e-02 m²
}

func ExampleNewMultiNormal() {
	// A singular covariance: the second coordinate equals the first.
	cov := mat.NewSymDense(2, []float64{1, 1, 1, 1})
	mn, err := noise.NewMultiNormal(cov)
	if err != nil {
		panic(err)
	}
	x := mn.Rand(nil, noise.Seeded(3)) // src nil for crypto/rand
	fmt.Println("rank", mn.Rank(), "equal coordinates:", math.Abs(x[0]-x[1]) < 1e-12)
	_, err = noise.NewMultiNormal(mat.NewSymDense(2, []float64{1, 2, 2, 1}))
	fmt.Println(err != nil)
	// Output:
	// rank 1 equal coordinates: true
	// true
}

func ExamplePlanarLaplace() {
	// ε = ln(4)/200 per metre: locations 200 m apart are 4-indistinguishable.
	pl := noise.PlanarLaplace{Epsilon: math.Log(4) / 200, Src: noise.Seeded(7)}
	fmt.Printf("mean error %.1f m\n", pl.Mean())
	fmt.Printf("90%% of releases within %.1f m\n", pl.AccuracyRadius(0.9))
	dx, dy := pl.Rand() // a secure source is used when Src is nil
	fmt.Println(math.Hypot(dx, dy) > 0)
	// Output:
	// mean error 288.5 m
	// 90% of releases within 561.2 m
	// true
}
