package attack

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
)

// With a prior that does not describe the truth (a small variance and a
// constant mean, as in the certificate prior of the reported bug, against
// a truth with a trend and a step), the risk estimate is still unbiased for the squared
// error, the plain posterior mean is worse than the release, and the
// guarded reconstruction is not. 200 noise draws of one fixed truth (160
// points at 5 s: about 18 effective degrees of freedom of noise; 100 with
// -short); the tolerance of the unbiasedness check is 4 standard errors
// of the mean difference, computed from the draws.
func TestGuardAgainstMisfitPrior(t *testing.T) {
	const n = 160
	reps := 200
	if testing.Short() {
		reps = 100
	}
	ts := make([]float64, n)
	x := make([]float64, n)
	for i := range n {
		ts[i] = 5 * float64(i)
		x[i] = 150*math.Sin(ts[i]/60) + 0.8*ts[i]
		if i >= n/2 {
			x[i] += 120
		}
	}
	g := releaseNoise(ts)
	mn, err := noise.NewMultiNormalCholesky(g)
	if err != nil {
		t.Fatal(err)
	}
	src := noise.Seeded(3)
	fixed := prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 34, LengthscaleMax: 34}
	plain := Adversary{Family: fixed, Variance: 183, Mean: MeanConstant, Unguarded: true}
	guarded := Adversary{Family: fixed, Variance: 183, Mean: MeanConstant}
	var sseRel, ssePlain, sseGuard, weight float64
	var diff []float64
	for range reps {
		z := mn.Rand(nil, src)
		for i := range z {
			z[i] += x[i]
		}
		p, err := Reconstruct(ts, z, g, plain)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Reconstruct(ts, z, g, guarded)
		if err != nil {
			t.Fatal(err)
		}
		var sp, risk float64
		for i := range n {
			sseRel += (z[i] - x[i]) * (z[i] - x[i])
			sp += (p.Mean[i] - x[i]) * (p.Mean[i] - x[i])
			sseGuard += (q.Mean[i] - x[i]) * (q.Mean[i] - x[i])
			risk += p.Risk[i]
		}
		ssePlain += sp
		diff = append(diff, risk-sp)
		weight += q.Fit.ReleaseWeight / float64(reps)
	}
	k := float64(n * reps)
	rel, pl, gu := math.Sqrt(sseRel/k), math.Sqrt(ssePlain/k), math.Sqrt(sseGuard/k)
	d := stattest.SampleMoments(diff)
	t.Logf("RMSE: release %.1f m, posterior mean %.1f m, guarded %.1f m (mean release weight %.2f); risk estimate - squared error: %.0f +- %.0f m^2 per trace (squared error %.0f)",
		rel, pl, gu, weight, d.Mean, math.Sqrt(d.Variance/float64(reps)), ssePlain/float64(reps))
	if math.Abs(d.Mean) > 4*math.Sqrt(d.Variance/float64(reps)) {
		t.Errorf("risk estimate biased: mean difference %.0f, SE %.0f", d.Mean, math.Sqrt(d.Variance/float64(reps)))
	}
	if !(pl > rel) {
		t.Errorf("misfit posterior mean RMSE %.1f not worse than the release %.1f: the test does not exercise the guard", pl, rel)
	}
	if !(gu <= rel) || !(gu < pl) {
		t.Errorf("guarded RMSE %.1f, release %.1f, posterior mean %.1f", gu, rel, pl)
	}
}

// The guard's weight is estimated from the release, so with noise along a
// few directions it is not used unless decisive.
func TestGuardNeedsNoiseDOF(t *testing.T) {
	n := 50
	white := mat.NewSymDense(n, nil)
	one := mat.NewSymDense(n, nil)
	for i := range n {
		white.SetSym(i, i, 4)
		one.SetSym(i, i, 1e-6)
	}
	one.SetSym(20, 20, 400)
	if d := noiseDOF(white); math.Abs(d-float64(n)) > 1e-9 {
		t.Errorf("white noise: %v degrees of freedom, want %d", d, n)
	}
	if d := noiseDOF(one); d > 1.01 {
		t.Errorf("noise on one point: %v degrees of freedom, want about 1", d)
	}
	ts := make([]float64, n)
	z := make([]float64, n)
	for i := range n {
		ts[i] = float64(i)
		z[i] = 10 * math.Sin(float64(i)/6)
	}
	z[20] += 25 // a noisy secret point
	fam := prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 6, LengthscaleMax: 6}
	est, err := Reconstruct(ts, z, one, Adversary{Family: fam, Variance: 50})
	if err != nil {
		t.Fatal(err)
	}
	if est.Fit.ReleaseWeight != 0 {
		t.Errorf("release weight %v with one degree of freedom of noise", est.Fit.ReleaseWeight)
	}
	t.Logf("secret point: release %.2f, reconstruction %.2f, truth %.2f", z[20], est.Mean[20], z[20]-25)
}
