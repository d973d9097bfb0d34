package attack_test

import (
	"bytes"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
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
	adv := attack.Adversary{Family: prior.Family{Kernel: gp.KernelMatern32, LengthscaleMin: 10, LengthscaleMax: 600}}
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

// One dimension of a release: a smooth path of 120 points, 10 s apart,
// released with independent noise of 50 m standard deviation. The
// adversary of a Matérn-5/2 family (lengthscales 30 s to 30 minutes)
// chooses its prior from the release alone and reconstructs every point.
func ExampleReconstruct() {
	n := 120
	ts, truth, z := make([]float64, n), make([]float64, n), make([]float64, n)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range n {
		ts[i] = 10 * float64(i)
		truth[i] = 500 * math.Sin(ts[i]/300)
		z[i] = truth[i] + 50*rng.NormFloat64()
	}
	sigmaG := mat.NewDiagDense(n, nil)
	for i := range n {
		sigmaG.SetDiag(i, 50*50)
	}
	adv := attack.Adversary{Family: prior.Family{Kernel: gp.KernelMatern52, LengthscaleMin: 30, LengthscaleMax: 1800}}
	est, err := attack.Reconstruct(ts, z, sigmaG, adv)
	if err != nil {
		log.Fatal(err)
	}
	var release, recon, stated float64
	for i := range n {
		release += (z[i] - truth[i]) * (z[i] - truth[i]) / float64(n)
		recon += (est.Mean[i] - truth[i]) * (est.Mean[i] - truth[i]) / float64(n)
		stated += est.Variance[i] / float64(n)
	}
	fmt.Printf("prior chosen by %s, %s mean\n", est.Fit.Choice, est.Fit.Mean)
	fmt.Printf("RMSE: release %.0f m, reconstruction %.0f m (the adversary states %.0f m)\n",
		math.Sqrt(release), math.Sqrt(recon), math.Sqrt(stated))
	// Output:
	// prior chosen by restricted likelihood, linear mean
	// RMSE: release 49 m, reconstruction 9 m (the adversary states 11 m)
}

// The library round trip behind "tracepriv attack": sanitise a trace
// (the bundled synthetic sample) with package sanitize, keep only the
// certificate (here written and read back), and attack the release from
// it. The seed makes the example reproducible; a real release leaves
// Source nil.
func ExampleFromCertificate() {
	traces, err := sample.Traces()
	if err != nil {
		log.Fatal(err)
	}
	orig := traces[:1] // a made-up person's commute
	prior, err := sample.Prior()
	if err != nil {
		log.Fatal(err)
	}
	released, cert, err := sanitize.Release(orig, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(4)})
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if err := sanitize.WriteCertificate(&file, cert); err != nil {
		log.Fatal(err)
	}
	public, err := sanitize.ReadCertificate(&file)
	if err != nil {
		log.Fatal(err)
	}
	rep, _, err := attack.FromCertificate(public, orig, released, attack.CertOptions{})
	if err != nil {
		log.Fatal(err)
	}
	p := rep.Persons[0]
	fmt.Printf("person %s: %d secret points, certified epsilon %.3g\n", p.UID, rep.SecretPoints, p.EpsilonCertified)
	fmt.Printf("reconstruction no worse than the release: %v\n", rep.RMSE <= rep.ReleaseRMSE)
	fmt.Printf("release RMSE %.0f m, reconstruction RMSE %.0f m\n", rep.ReleaseRMSE, rep.RMSE)
	// Output:
	// person synth-1: 268 secret points, certified epsilon 1
	// reconstruction no worse than the release: true
	// release RMSE 309 m, reconstruction RMSE 239 m
}
