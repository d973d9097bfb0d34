package attack

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
)

// randomTrace draws n irregular sorted times (gaps from 1 s to an hour,
// some repeated) and a release: a smooth path plus noise from noise and
// white noise.
func randomTrace(rng *rand.Rand, n int, noise gp.Kernel, white float64) (ts, z []float64) {
	t := 0.0
	for i := range n {
		switch u := rng.Float64(); {
		case i == 0:
		case u < 0.03:
			// a repeated time
		case u < 0.08:
			t += 600 + 3000*rng.Float64()
		default:
			t += 1 + 20*rng.Float64()
		}
		ts = append(ts, t)
	}
	g := gp.Gram(noise, ts)
	for i := range n {
		g.SetSym(i, i, g.At(i, i)+white)
	}
	var c mat.Cholesky
	if !c.Factorize(withJitter(g, 1e-6)) {
		panic("noise covariance not positive definite")
	}
	var l mat.TriDense
	c.LTo(&l)
	e := make([]float64, n)
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	var ge mat.VecDense
	ge.MulVec(&l, mat.NewVecDense(n, e))
	for i := range n {
		z = append(z, 300*math.Sin(ts[i]/900)+0.02*ts[i]+ge.AtVec(i))
	}
	return ts, z
}

func withJitter(a *mat.SymDense, j float64) *mat.SymDense {
	b := mat.NewSymDense(a.SymmetricDim(), nil)
	b.CopySym(a)
	for i := range b.SymmetricDim() {
		b.SetSym(i, i, b.At(i, i)+j)
	}
	return b
}

// envelopeNoise is a noise kernel shaped like a certificate's envelope: Matérn
// 1/2 and 3/2 components from seconds to days (variances in m^2).
func envelopeNoise(scale float64) gp.Kernel {
	terms := []gp.Kernel{
		gp.Matern12{Variance: 0.1 * scale, Lengthscale: 11.6},
		gp.Matern12{Variance: 0.4 * scale, Lengthscale: 1.6e5},
		gp.Matern32{Variance: 0.03 * scale, Lengthscale: 16.4},
		gp.Matern32{Variance: 1.3 * scale, Lengthscale: 92.6},
		gp.Matern32{Variance: 0.7 * scale, Lengthscale: 440},
		gp.Matern32{Variance: 0.6 * scale, Lengthscale: 8385},
		gp.Matern12{Variance: 0.05 * scale, Lengthscale: 1e9}, // a route component
	}
	var k gp.Kernel = terms[0]
	for _, t := range terms[1:] {
		k = gp.Sum{K1: k, K2: t}
	}
	return k
}

// maxRel returns the largest |a_i - b_i| / scale.
func maxDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// compareLinearDense runs the adversary on the linear-time and the dense
// path and returns the largest differences of the posterior means and
// variances (relative to the noise's standard deviation and variance) and
// of the log likelihoods.
func compareLinearDense(t *testing.T, ts, z []float64, noise gp.Kernel, adv Adversary) (dMean, dVar, dLL float64, lin, den *Estimate) {
	t.Helper()
	lin, err := ReconstructKernel(ts, z, noise, adv)
	if err != nil {
		t.Fatalf("linear: %v", err)
	}
	den, err = Reconstruct(ts, z, gp.Gram(noise, ts), adv)
	if err != nil {
		t.Fatalf("dense: %v", err)
	}
	if lin.Fit.Path != PathStateSpace || den.Fit.Path != PathDense {
		t.Fatalf("paths %q and %q", lin.Fit.Path, den.Fit.Path)
	}
	g0 := noise.Eval(0, 0) + adv.Nugget
	return maxDiff(lin.Mean, den.Mean) / math.Sqrt(g0), maxDiff(lin.Variance, den.Variance) / g0,
		math.Abs(lin.Fit.LogLikelihood - den.Fit.LogLikelihood), lin, den
}

// The linear-time path gives the dense path's posterior: on random
// irregular traces (repeated times, gaps of an hour), for every Matérn
// prior and a certificate-like noise of seven Matérn components plus
// white noise, the posterior means agree to 1e-7 of the noise's standard
// deviation, the variances (with the mean's share) to 1e-7 of its
// variance, and the restricted likelihoods to 1e-6 nats, for a known,
// constant and linear mean.
func TestLinearMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	noise := envelopeNoise(1e4)
	for _, kernel := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52, gp.KernelMatern72} {
		for _, mean := range []MeanModel{MeanLinear, MeanConstant, MeanKnown} {
			ts, z := randomTrace(rng, 300, noise, 1e-3)
			l := 50 + 2000*rng.Float64()
			adv := Adversary{Family: prior.Family{Kernel: kernel, LengthscaleMin: l, LengthscaleMax: l}, Variance: 2e4, Nugget: 1e-3, Mean: mean, Unguarded: true}
			dm, dv, dll, lin, den := compareLinearDense(t, ts, z, noise, adv)
			t.Logf("%s l=%.0f s, %s mean: |dmean| %.2g sd, |dvar| %.2g var, |dll| %.2g", kernel, l, mean, dm, dv, dll)
			if dm > 1e-7 || dv > 1e-7 || dll > 1e-6 {
				t.Errorf("%s, %s mean: linear and dense differ: mean %.3g, variance %.3g, log likelihood %.3g", kernel, mean, dm, dv, dll)
			}
			for j := range lin.Fit.Coefficients {
				if d := math.Abs(lin.Fit.Coefficients[j] - den.Fit.Coefficients[j]); d > 1e-6*den.Fit.StdErrors[j] {
					t.Errorf("%s: mean coefficient %d: %v vs %v", kernel, j, lin.Fit.Coefficients[j], den.Fit.Coefficients[j])
				}
			}
		}
	}
}

// With the prior chosen by the search (lengthscale range and variance),
// both paths choose the same prior and reconstruct alike, guard included.
func TestLinearMatchesDenseSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 2))
	noise := envelopeNoise(1e4)
	for _, kernel := range []string{gp.KernelMatern32, gp.KernelMatern52} {
		ts, z := randomTrace(rng, 250, noise, 1e-3)
		adv := Adversary{Family: prior.Family{Kernel: kernel, LengthscaleMin: 60, LengthscaleMax: 7200, Variance: 100}, Nugget: 1e-3}
		dm, dv, dll, lin, den := compareLinearDense(t, ts, z, noise, adv)
		t.Logf("%s: lengthscale %.6g vs %.6g, variance %.6g vs %.6g; |dmean| %.2g sd, |dvar| %.2g, |dll| %.2g; %d vs %d evaluations",
			kernel, lin.Fit.Lengthscale, den.Fit.Lengthscale, lin.Fit.Variance, den.Fit.Variance, dm, dv, dll, lin.Fit.Evaluations, den.Fit.Evaluations)
		if math.Abs(lin.Fit.Lengthscale/den.Fit.Lengthscale-1) > 1e-6 || math.Abs(lin.Fit.Variance/den.Fit.Variance-1) > 1e-6 {
			t.Errorf("%s: the paths chose different priors: (%v, %v) vs (%v, %v)", kernel, lin.Fit.Lengthscale, lin.Fit.Variance, den.Fit.Lengthscale, den.Fit.Variance)
		}
		if dm > 1e-6 || dv > 1e-6 || dll > 1e-5 || math.Abs(lin.Fit.ReleaseWeight-den.Fit.ReleaseWeight) > 1e-6 {
			t.Errorf("%s: linear and dense differ: mean %.3g, variance %.3g, log likelihood %.3g, release weight %v vs %v",
				kernel, dm, dv, dll, lin.Fit.ReleaseWeight, den.Fit.ReleaseWeight)
		}
	}
}

// Negative control: a transition with a lengthscale 2 % off (the prior's,
// or one noise component's) makes the same comparison fail.
func TestLinearWrongTransitionFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	noise := envelopeNoise(1e4)
	ts, z := randomTrace(rng, 300, noise, 1e-3)
	adv := Adversary{Family: prior.Family{Kernel: gp.KernelMatern32, LengthscaleMin: 400, LengthscaleMax: 400}, Variance: 2e4, Nugget: 1e-3, Unguarded: true}
	for _, target := range []float64{400, 92.6} {
		t.Run(fmt.Sprintf("lengthscale %g", target), func(t *testing.T) {
			defer func(f func(gp.Kernel) (*gp.StateModel, error)) { stateSpaceOf = f }(stateSpaceOf)
			stateSpaceOf = func(k gp.Kernel) (*gp.StateModel, error) {
				m, err := gp.StateSpace(k)
				if err == nil && m.Lengthscale == target {
					wrong := *m
					wrong.Lambda *= 1.02
					m = &wrong
				}
				return m, err
			}
			dm, dv, dll, _, _ := compareLinearDense(t, ts, z, noise, adv)
			t.Logf("wrong transition: |dmean| %.2g sd, |dvar| %.2g var, |dll| %.2g", dm, dv, dll)
			if dm <= 1e-7 && dv <= 1e-7 && dll <= 1e-6 {
				t.Error("a transition 2 % off passed the equality test")
			}
		})
	}
}

// The noise's degrees of freedom by the moment recursion equal the sum
// over every entry of the Gram matrix.
func TestMaternFrobenius(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	noise := envelopeNoise(3)
	ts, _ := randomTrace(rng, 400, noise, 0)
	g := &noiseLaw{ts: ts, terms: kernelTerms(noise), white: 0.25}
	fro, err := g.maternFrobenius()
	if err != nil {
		t.Fatal(err)
	}
	gm := g.block(seq(0, len(ts)))
	want := 0.0
	for i := range len(ts) {
		for j := range len(ts) {
			want += gm.At(i, j) * gm.At(i, j)
		}
	}
	if math.Abs(fro/want-1) > 1e-10 {
		t.Errorf("Frobenius norm^2 %v by recursion, %v by summation", fro, want)
	}
	d, exact := g.dof()
	if want := noiseDOF(gm); !exact || math.Abs(d/want-1) > 1e-10 {
		t.Errorf("dof %v (exact %v), want %v", d, exact, want)
	}
}

// The bounded dense path (PathLocal): where the prior and the noise
// decorrelate within the local windows' margins and the mean is known, it
// is the dense posterior to rounding. With a linear mean estimated per
// window and a prior twice as long as a window it is an approximation:
// on this synthetic release (10 m of noise) it recovers the truth to
// 1.5 m RMS where the exact path does to 1.2 m; the test asks that it
// stay a strong attack (below a quarter of the release's error).
func TestLocalPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	n := 400
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = 10 * float64(i)
	}
	noise := gp.Matern12{Variance: 100, Lengthscale: 3}
	z := make([]float64, n)
	for i := range z {
		z[i] = 30*math.Sin(ts[i]/40) + 10*rng.NormFloat64()
	}
	adv := Adversary{Family: prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 5, LengthscaleMax: 5}, Variance: 900, Mean: MeanKnown, Nugget: 1e-3, Unguarded: true}
	exact, err := ReconstructKernel(ts, z, noise, adv)
	if err != nil {
		t.Fatal(err)
	}
	adv.DenseWindow = 80
	local, err := ReconstructKernel(ts, z, noise, adv)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Fit.Path != PathDense || local.Fit.Path != PathLocal || local.Fit.LocalWindow != 40 {
		t.Fatalf("paths %q and %q (window %d)", exact.Fit.Path, local.Fit.Path, local.Fit.LocalWindow)
	}
	if dm, dv := maxDiff(exact.Mean, local.Mean), maxDiff(exact.Variance, local.Variance); dm > 1e-8 || dv > 1e-8 {
		t.Errorf("local windows differ from the dense posterior: mean %.3g m, variance %.3g m^2", dm, dv)
	}

	// A long prior, a linear mean and a lengthscale range: compare errors.
	truth := make([]float64, n)
	for i := range truth {
		truth[i] = 200*math.Sin(ts[i]/700) + 0.05*ts[i]
		z[i] = truth[i] + 10*rng.NormFloat64()
	}
	adv = Adversary{Family: prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 50, LengthscaleMax: 2000}, Nugget: 1e-3}
	exact, err = ReconstructKernel(ts, z, noise, adv)
	if err != nil {
		t.Fatal(err)
	}
	adv.DenseWindow = 200
	local, err = ReconstructKernel(ts, z, noise, adv)
	if err != nil {
		t.Fatal(err)
	}
	rmse := func(e *Estimate) float64 {
		s := 0.0
		for i := range truth {
			s += (e.Mean[i] - truth[i]) * (e.Mean[i] - truth[i])
		}
		return math.Sqrt(s / float64(n))
	}
	t.Logf("exact RMSE %.2f m (lengthscale %.0f s), local %.2f m (lengthscale %.0f s), release 10 m", rmse(exact), exact.Fit.Lengthscale, rmse(local), local.Fit.Lengthscale)
	release := 0.0
	for i := range truth {
		release += (z[i] - truth[i]) * (z[i] - truth[i])
	}
	release = math.Sqrt(release / float64(n))
	if rmse(local) > release/4 || local.Fit.Path != PathLocal {
		t.Errorf("local path RMSE %.2f m against the exact %.2f m and the release's %.2f m", rmse(local), rmse(exact), release)
	}
}

// The noise law the attack reads from a certificate (its kernel terms and
// white noise) is the covariance sanitize recomputes from it
// (Certificate.NoiseCovariance), plus the output grid's nugget: an
// equality to 1e-12 of the variance, as strict on the 200 points of a
// person as on 600 (before session 43).
func TestCertNoiseMatchesCertificate(t *testing.T) {
	pr, err := sample.Prior()
	if err != nil {
		t.Fatal(err)
	}
	orig := benchPerson(200, 9)
	for _, design := range []cip.Method{sanitize.DesignEnvelope, sanitize.DesignProportional} {
		opt := sanitize.Options{Prior: pr, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(2), Design: design}
		if design == sanitize.DesignProportional {
			p := *pr
			p.FamilySet = &prior.FamilySet{Kernels: []prior.Family{{Kernel: p.Kernel, LengthscaleMin: p.Lengthscale, LengthscaleMax: p.Lengthscale, Variance: p.Variance}}}
			opt.Prior = &p
		}
		_, cert, err := sanitize.Release(orig, opt)
		if err != nil {
			t.Fatalf("%s: %v", design, err)
		}
		pc := cert.Persons[0]
		var times []time.Time
		for _, tr := range orig {
			for _, p := range tr.Points {
				times = append(times, p.Time)
			}
		}
		ts, err := gp.Seconds(times)
		if err != nil {
			t.Fatal(err)
		}
		const nugget = 1e-6
		g, err := certNoise(cert, pc, ts, false, nugget)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cert.NoiseCovariance(pc, ts)
		if err != nil {
			t.Fatal(err)
		}
		got := g.block(seq(0, len(ts)))
		worst := 0.0
		for i := range len(ts) {
			for j := range len(ts) {
				w := want.At(i, j)
				if i == j {
					w += nugget
				}
				worst = math.Max(worst, math.Abs(got.At(i, j)-w)/want.At(0, 0))
			}
		}
		t.Logf("%s: %d noise components, largest difference %.2g of the variance", design, len(g.terms), worst)
		if worst > 1e-12 || !g.stateSpace() {
			t.Errorf("%s: the attack's noise differs from the certificate's by %.3g of the variance (state space %v)", design, worst, g.stateSpace())
		}
	}
}
