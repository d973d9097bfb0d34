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

// model is a release drawn from the adversary's own model: a trend plus a
// GP sample of a member of the family, plus correlated noise.
type model struct {
	ts            []float64
	sigmaG        *mat.SymDense
	prior, noise  *noise.MultiNormal
	level, slope  float64 // trend: level at the mean time, metres per second
	tbar          float64
	src           noise.Source
	family        prior.Family
	trueVariance  float64
	trueLengthscl float64
}

func newModel(t testing.TB, n int, seed uint64) *model {
	t.Helper()
	src := noise.Seeded(seed)
	ts := make([]float64, n)
	for i := 1; i < n; i++ {
		ts[i] = ts[i-1] + 1 + 5*noise.Uniform(src) // irregular, 1-6 s gaps
	}
	m := &model{ts: ts, src: src, level: 250, slope: 1.2, trueVariance: 500, trueLengthscl: 60,
		family: prior.Family{Kernel: gp.KernelMatern52, LengthscaleMin: 10, LengthscaleMax: 600}}
	for _, v := range ts {
		m.tbar += v / float64(n)
	}
	var err error
	if m.prior, err = noise.NewMultiNormalCholesky(gp.Gram(gp.Matern52{Variance: m.trueVariance, Lengthscale: m.trueLengthscl}, ts)); err != nil {
		t.Fatal(err)
	}
	m.sigmaG = testReleaseNoise(ts)
	if m.noise, err = noise.NewMultiNormalCholesky(m.sigmaG); err != nil {
		t.Fatal(err)
	}
	return m
}

// testReleaseNoise is the noise of the real-data tests: per dimension
// 4950 Gram(Matern52{1, 30 s}) + 50 I square metres, an RMS planar
// displacement of 100 m.
func testReleaseNoise(ts []float64) *mat.SymDense {
	g := gp.Gram(gp.Matern52{Variance: 4950, Lengthscale: 30}, ts)
	for i := range ts {
		g.SetSym(i, i, g.At(i, i)+50)
	}
	return g
}

// draw returns a truth and its release.
func (m *model) draw() (x, z []float64) {
	x = m.prior.Rand(nil, m.src)
	for i, t := range m.ts {
		x[i] += m.level + m.slope*(t-m.tbar)
	}
	z = m.noise.Rand(nil, m.src)
	for i := range z {
		z[i] += x[i]
	}
	return x, z
}

// On data drawn from the model the adversary beats the release by far,
// its stated uncertainty matches its error, the nominal 95 % intervals
// cover about 95 % of the truth, and GLS recovers the trend: with the true
// prior (fixed, unguarded: the posterior formulas) and as deployed
// (restricted likelihood over the family, guarded).
//
// The setting is the one of the reported bug: a prior variance (500 m^2)
// small against the noise (5,000 m^2), so the reconstruction leans on the
// estimated mean and the mean-estimation term of the variance decides the
// calibration (without it the true-prior coverage is 0.77).
//
// Tolerances: 60 replicate traces of 150 points. Points of one trace are
// correlated, so the coverage's standard error is taken from the spread of
// the per-trace coverages; the test asks |coverage - 0.95| <= 0.02 and
// within 3 standard errors, and RMSE / stated sd within 10 % of 1. The
// trend's z-scores (estimate - truth) / SE must have mean within
// 3/sqrt(60) of 0 and standard deviation in [0.75, 1.3] (3.3 standard
// errors of a standard deviation from 60 draws). The plug-in prior ignores
// its own estimation error, so the deployed adversary covers a little less
// than the true-prior one.
//
// -short runs the deployed adversary (3 CPU-s of the 3.4) on 30 traces,
// the true prior on 60: a bound fixed at 60 draws would not hold at 30, so
// with 30 the coverage must be within 3 of its standard errors, the RMSE
// ratio within 3 of its standard errors (delta method over the traces) and
// never tighter than 10 %, the z-scores' standard deviation within 3.3 of
// its standard errors, 1 +- 3.3/sqrt(2 (reps-1)). Dropping the mean-estimation
// term (the reported bug) still fails both subtests at that size (checked
// by planting it).
func TestSyntheticCalibration(t *testing.T) {
	const n = 150
	for _, c := range []struct {
		name   string
		choose func(m *model) Adversary
		short  int // replicate traces with -short
	}{
		{"true prior", func(m *model) Adversary {
			f := m.family
			f.LengthscaleMin, f.LengthscaleMax = m.trueLengthscl, m.trueLengthscl
			return Adversary{Family: f, Variance: m.trueVariance, Unguarded: true}
		}, 60},
		{"restricted likelihood", func(m *model) Adversary { return Adversary{Family: m.family} }, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			reps := 60
			if testing.Short() {
				reps = c.short
			}
			m := newModel(t, n, 7)
			var relSE, recSE, postV float64
			var recRep, postRep []float64 // per trace, for the ratio's standard error
			cover := make([]float64, 0, reps)
			var zLevel, zSlope []float64
			weight := 0.0
			for range reps {
				x, z := m.draw()
				est, err := Reconstruct(m.ts, z, m.sigmaG, c.choose(m))
				if err != nil {
					t.Fatal(err)
				}
				k := 0
				var a, b float64
				for i := range n {
					relSE += (z[i] - x[i]) * (z[i] - x[i])
					d := est.Mean[i] - x[i]
					a += d * d
					b += est.Variance[i]
					if math.Abs(d) <= 1.959964*math.Sqrt(est.Variance[i]) {
						k++
					}
				}
				recSE += a
				postV += b
				recRep, postRep = append(recRep, a), append(postRep, b)
				cover = append(cover, float64(k)/n)
				f := est.Fit
				zLevel = append(zLevel, (f.Coefficients[0]-m.level)/f.StdErrors[0])
				zSlope = append(zSlope, (f.Coefficients[1]-m.slope)/f.StdErrors[1])
				weight += f.ReleaseWeight / float64(reps)
			}
			nr := float64(reps * n)
			rel, rec, post := math.Sqrt(relSE/nr), math.Sqrt(recSE/nr), math.Sqrt(postV/nr)
			cm := stattest.SampleMoments(cover)
			covSE := math.Sqrt(cm.Variance / float64(reps))
			covTol, ratioTol, sdLo, sdHi := 0.02, 0.1, 0.75, 1.3
			if reps < 60 {
				// Bounds for this many traces: the ratio of sums A/B has
				// standard error sd(a - (A/B) b) / (sqrt(reps) mean(b)), and
				// its square root half that relative error.
				q := recSE / postV
				dev := make([]float64, reps)
				for i := range dev {
					dev[i] = recRep[i] - q*postRep[i]
				}
				ratioSE := math.Sqrt(stattest.SampleMoments(dev).Variance/float64(reps)) / (postV / float64(reps)) / q / 2
				covTol = 3 * covSE
				ratioTol = math.Max(0.1, 3*ratioSE)
				k := 3.3 / math.Sqrt(2*float64(reps-1))
				sdLo, sdHi = 1-k, 1+k
				t.Logf("%d traces: coverage within %.4f, RMSE ratio within %.3f, z sd in [%.2f, %.2f]", reps, covTol, ratioTol, sdLo, sdHi)
			}
			lm, sm := stattest.SampleMoments(zLevel), stattest.SampleMoments(zSlope)
			t.Logf("per dimension: release RMSE %.1f m, reconstruction %.1f m, stated sd %.1f m; 95%% coverage %.4f (SE %.4f); mean release weight %.3f",
				rel, rec, post, cm.Mean, covSE, weight)
			t.Logf("trend z-scores: level mean %.2f sd %.2f, slope mean %.2f sd %.2f", lm.Mean, math.Sqrt(lm.Variance), sm.Mean, math.Sqrt(sm.Variance))
			if !(rec < 0.7*rel) {
				t.Errorf("reconstruction RMSE %.1f not below 0.7 x release %.1f", rec, rel)
			}
			if r := rec / post; math.Abs(r-1) > ratioTol {
				t.Errorf("reconstruction RMSE / stated sd = %.3f, want 1 +- %.3f", r, ratioTol)
			}
			if d := math.Abs(cm.Mean - 0.95); d > covTol || d > 3*covSE {
				t.Errorf("95%% coverage %.4f (SE %.4f)", cm.Mean, covSE)
			}
			for name, mo := range map[string]stattest.Moments{"level": lm, "slope": sm} {
				if sd := math.Sqrt(mo.Variance); math.Abs(mo.Mean) > 3/math.Sqrt(float64(reps)) || sd < sdLo || sd > sdHi {
					t.Errorf("%s z-scores: mean %.3f, sd %.3f", name, mo.Mean, sd)
				}
			}
		})
	}
}

// A large planted trend is recovered within three standard errors from one
// trace, and the trend model beats a constant mean on it.
func TestSyntheticPlantedTrend(t *testing.T) {
	m := newModel(t, 200, 11)
	m.level, m.slope = -3000, 8 // 8 m/s drift: 5.6 km over the trace
	x, z := m.draw()
	lin, err := Reconstruct(m.ts, z, m.sigmaG, Adversary{Family: m.family})
	if err != nil {
		t.Fatal(err)
	}
	f := lin.Fit
	t.Logf("level %.1f +- %.1f (planted %v), slope %.3f +- %.3f m/s (planted %v); lengthscale %.3g s, variance %.3g (true %v, %v)",
		f.Coefficients[0], f.StdErrors[0], m.level, f.Coefficients[1], f.StdErrors[1], m.slope, f.Lengthscale, f.Variance, m.trueLengthscl, m.trueVariance)
	if math.Abs(f.Coefficients[0]-m.level) > 3*f.StdErrors[0] || math.Abs(f.Coefficients[1]-m.slope) > 3*f.StdErrors[1] {
		t.Errorf("trend (%v, %v) +- (%v, %v), planted (%v, %v)", f.Coefficients[0], f.Coefficients[1], f.StdErrors[0], f.StdErrors[1], m.level, m.slope)
	}
	if f.StdErrors[1] > 0.1*m.slope {
		t.Errorf("slope standard error %v: trend not resolved", f.StdErrors[1])
	}
	rmse := func(e *Estimate) float64 {
		s := 0.0
		for i := range x {
			s += (e.Mean[i] - x[i]) * (e.Mean[i] - x[i])
		}
		return math.Sqrt(s / float64(len(x)))
	}
	con, err := Reconstruct(m.ts, z, m.sigmaG, Adversary{Family: m.family, Mean: MeanConstant})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RMSE: linear mean %.1f m, constant mean %.1f m (lengthscale %.3g s, variance %.3g)", rmse(lin), rmse(con), con.Fit.Lengthscale, con.Fit.Variance)
}

// BenchmarkReconstruct times one dimension of 300 points with a
// lengthscale range (the search and the guarded posterior).
func BenchmarkReconstruct(b *testing.B) {
	m := newModel(b, 300, 5)
	_, z := m.draw()
	adv := Adversary{Family: m.family}
	evals := 0
	for b.Loop() {
		est, err := Reconstruct(m.ts, z, m.sigmaG, adv)
		if err != nil {
			b.Fatal(err)
		}
		evals = est.Fit.Evaluations
	}
	b.ReportMetric(float64(evals), "evaluations/op")
}
