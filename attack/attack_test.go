package attack

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// bruteUK is universal kriging by the textbook formulas with explicit
// inverses, for well-conditioned test problems: the GLS coefficients, the
// posterior mean, the posterior variance with the mean-estimation term and
// the restricted log likelihood.
func bruteUK(t *testing.T, sigma, sigmaG mat.Symmetric, h *mat.Dense, z []float64) (beta, xhat, pv []float64, reml float64) {
	t.Helper()
	n := len(z)
	_, p := h.Dims()
	var m mat.SymDense
	m.AddSym(sigma, sigmaG)
	var minv mat.Dense
	if err := minv.Inverse(&m); err != nil {
		t.Fatal(err)
	}
	zv := mat.NewVecDense(n, z)
	var a, ainv, mh mat.Dense
	mh.Mul(&minv, h)
	a.Mul(h.T(), &mh) // H^T M^-1 H
	if err := ainv.Inverse(&a); err != nil {
		t.Fatal(err)
	}
	var hmz, bv mat.VecDense
	hmz.MulVec(mh.T(), zv)
	bv.MulVec(&ainv, &hmz)
	beta = mat.Col(nil, 0, &bv)
	var hb, r, alpha, sa mat.VecDense
	hb.MulVec(h, &bv)
	r.SubVec(zv, &hb)
	alpha.MulVec(&minv, &r)
	sa.MulVec(sigma, &alpha)
	xhat = make([]float64, n)
	for i := range n {
		xhat[i] = hb.AtVec(i) + sa.AtVec(i)
	}
	// Sigma - Sigma M^-1 Sigma + W (H^T M^-1 H)^-1 W^T, W = H - Sigma M^-1 H.
	var smi, smis, w, wa, wawt mat.Dense
	smi.Mul(sigma, &minv)
	smis.Mul(&smi, sigma)
	w.Mul(sigma, &mh)
	w.Sub(h, &w)
	wa.Mul(&w, &ainv)
	wawt.Mul(&wa, w.T())
	pv = make([]float64, n)
	for i := range n {
		pv[i] = sigma.At(i, i) - smis.At(i, i) + wawt.At(i, i)
	}
	var hh mat.Dense
	hh.Mul(h.T(), h)
	logdet := func(x mat.Matrix) float64 {
		var lu mat.LU
		lu.Factorize(x)
		ld, _ := lu.LogDet()
		return ld
	}
	reml = -0.5 * (float64(n-p)*math.Log(2*math.Pi) + logdet(&m) + logdet(&a) - logdet(&hh) + mat.Dot(&r, &alpha))
	return beta, xhat, pv, reml
}

// testNoise is a well-conditioned correlated noise covariance.
func testNoise(n int) *mat.SymDense {
	g := mat.NewSymDense(n, nil)
	for i := range n {
		g.SetSym(i, i, 0.5+0.1*float64(i))
		if i > 0 {
			g.SetSym(i-1, i, 0.05)
		}
	}
	return g
}

// Universal kriging (linear trend, fixed prior) against the textbook
// formulas with explicit inverses on a well-conditioned case.
func TestReconstructBruteForce(t *testing.T) {
	ts := []float64{0, 1.5, 2, 3.5, 5, 6, 8, 9.5}
	n := len(ts)
	fam := prior.Family{Kernel: gp.KernelMatern32, LengthscaleMin: 2, LengthscaleMax: 2}
	sigma := gp.Gram(gp.Matern32{Variance: 4, Lengthscale: 2}, ts)
	g := testNoise(n)
	z := []float64{3, 1, -2, 0.5, 4, 2, -1, 0}
	for _, mm := range []MeanModel{MeanLinear, MeanConstant} {
		est, err := Reconstruct(ts, z, g, Adversary{Family: fam, Variance: 4, Mean: mm, Unguarded: true})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := newDesign(ts, mm)
		beta, xhat, pv, reml := bruteUK(t, sigma, g, d.h, z)
		for i := range n {
			if math.Abs(est.Mean[i]-xhat[i]) > 1e-10 {
				t.Errorf("%s: x^[%d] = %v, want %v", mm, i, est.Mean[i], xhat[i])
			}
			if math.Abs(est.Variance[i]-pv[i]) > 1e-10 {
				t.Errorf("%s: posterior variance[%d] = %v, want %v", mm, i, est.Variance[i], pv[i])
			}
		}
		if math.Abs(est.Fit.LogLikelihood-reml) > 1e-9 {
			t.Errorf("%s: REML %v, want %v", mm, est.Fit.LogLikelihood, reml)
		}
		if est.Fit.Choice != "fixed" || est.Fit.Mean != mm.String() || est.Fit.Evaluations != 1 {
			t.Errorf("%s: fit %+v", mm, est.Fit)
		}
		// Coefficients in natural units: level at tbar, slope per second.
		if math.Abs(est.Fit.Coefficients[0]-beta[0]) > 1e-10 || est.Fit.ReferenceTime != d.tbar {
			t.Errorf("%s: level %v at %v, want %v at %v", mm, est.Fit.Coefficients[0], est.Fit.ReferenceTime, beta[0], d.tbar)
		}
		if mm == MeanLinear && math.Abs(est.Fit.Coefficients[1]-beta[1]/d.tsc) > 1e-10 {
			t.Errorf("slope %v, want %v", est.Fit.Coefficients[1], beta[1]/d.tsc)
		}
	}
	// A known (zero) mean is the plain posterior with the marginal
	// likelihood.
	est, err := Reconstruct(ts, z, g, Adversary{Family: fam, Variance: 4, Mean: MeanKnown, Unguarded: true})
	if err != nil {
		t.Fatal(err)
	}
	var m, minv mat.SymDense
	m.AddSym(sigma, g)
	var c mat.Cholesky
	c.Factorize(&m)
	if err := c.InverseTo(&minv); err != nil {
		t.Fatal(err)
	}
	var al, x mat.VecDense
	al.MulVec(&minv, mat.NewVecDense(n, z))
	x.MulVec(sigma, &al)
	ll := -0.5 * (float64(n)*math.Log(2*math.Pi) + c.LogDet() + mat.Dot(mat.NewVecDense(n, z), &al))
	for i := range n {
		if math.Abs(est.Mean[i]-x.AtVec(i)) > 1e-10 {
			t.Errorf("known mean: x^[%d] = %v, want %v", i, est.Mean[i], x.AtVec(i))
		}
	}
	if math.Abs(est.Fit.LogLikelihood-ll) > 1e-9 || est.Fit.Coefficients != nil {
		t.Errorf("known mean: log likelihood %v, want %v; coefficients %v", est.Fit.LogLikelihood, ll, est.Fit.Coefficients)
	}
}

// The report of Attack scores the reconstruction and the release at the
// secret points (duplicates counted once), from the estimates of
// Reconstruct, and emits the JSON names the CLI documents.
func TestAttackReport(t *testing.T) {
	ts := []float64{0, 1.5, 2, 3.5, 5, 6, 8, 9.5}
	n := len(ts)
	g := testNoise(n)
	adv := Adversary{Family: prior.Family{Kernel: gp.KernelMatern32, LengthscaleMin: 2, LengthscaleMax: 2}, Variance: 4, Unguarded: true}
	tr := Planar{East: make([]float64, n), North: make([]float64, n)}
	rel := Planar{East: []float64{3, 1, -2, 0.5, 4, 2, -1, 0}, North: []float64{1, 1, 2, 3, 5, 8, 13, 21}}
	secrets := []int{0, 1, 2, 3, 4, 5, 6, 7, 7}
	r, rec, err := Attack(ts, tr, rel, g, adv, secrets, 2)
	if err != nil {
		t.Fatal(err)
	}
	ee, err := Reconstruct(ts, rel.East, g, adv)
	if err != nil {
		t.Fatal(err)
	}
	en, err := Reconstruct(ts, rel.North, g, adv)
	if err != nil {
		t.Fatal(err)
	}
	se, rse, pvar, risk := 0.0, 0.0, 0.0, 0.0
	within, relWithin, covered := 0, 0, 0
	for i := range n {
		if rec.East[i] != ee.Mean[i] || rec.North[i] != en.Mean[i] {
			t.Errorf("point %d: reconstruction (%v, %v), want (%v, %v)", i, rec.East[i], rec.North[i], ee.Mean[i], en.Mean[i])
		}
		d, dr := math.Hypot(ee.Mean[i], en.Mean[i]), math.Hypot(rel.East[i], rel.North[i])
		se += d * d
		rse += dr * dr
		pvar += ee.Variance[i] + en.Variance[i]
		risk += ee.Risk[i] + en.Risk[i]
		if d <= 2 {
			within++
		}
		if dr <= 2 {
			relWithin++
		}
		if ee.Mean[i]*ee.Mean[i]/ee.Variance[i]+en.Mean[i]*en.Mean[i]/en.Variance[i] <= -2*math.Log(0.05) {
			covered++
		}
	}
	k := float64(n)
	if r.Secrets != n || r.Points != n {
		t.Errorf("%d secrets of %d points", r.Secrets, r.Points)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"RMSE", r.ReconstructedRMSE, math.Sqrt(se / k)},
		{"release RMSE", r.ReleasedRMSE, math.Sqrt(rse / k)},
		{"2-sigma", r.Posterior2Sigma, 2 * math.Sqrt(pvar/k)},
		{"estimated RMSE", r.EstimatedRMSE, math.Sqrt(math.Max(risk, 0) / k)},
		{"within radius", r.WithinRadius, float64(within) / k},
		{"release within radius", r.ReleaseWithinRadius, float64(relWithin) / k},
		{"coverage", r.Coverage95, float64(covered) / k},
	} {
		if math.Abs(c.got-c.want) > 1e-10 {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	// The JSON names the CLI emits.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"points", "secret_points", "rmse_m", "median_m", "release_rmse_m", "release_median_m", "radius_m",
		"within_radius_fraction", "release_within_radius_fraction", "posterior_2sigma_m", "estimated_rmse_m", "coverage_95", "adversary"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report JSON has no %q: %s", k, b)
		}
	}
	if m["rmse_m"] != r.ReconstructedRMSE || m["release_rmse_m"] != r.ReleasedRMSE {
		t.Errorf("rmse_m %v, release_rmse_m %v", m["rmse_m"], m["release_rmse_m"])
	}
}

// The search finds the restricted-likelihood optimum over the family: no
// point of a dense (lengthscale, variance) grid beats it by more than the
// search tolerance allows.
func TestSearchFindsOptimum(t *testing.T) {
	ts := make([]float64, 60)
	for i := range ts {
		ts[i] = 3*float64(i) + math.Sin(float64(i))
	}
	n := len(ts)
	g := gp.Gram(gp.Matern52{Variance: 40, Lengthscale: 10}, ts)
	for i := range n {
		g.SetSym(i, i, g.At(i, i)+4)
	}
	z := make([]float64, n)
	for i := range z {
		z[i] = 30*math.Sin(ts[i]/25) + 0.2*ts[i] + 5*math.Cos(float64(i)*1.7)
	}
	fam := prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 3, LengthscaleMax: 200, Variance: 1}
	est, err := Reconstruct(ts, z, g, Adversary{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := newDesign(ts, MeanLinear)
	best, bl, bv := math.Inf(-1), 0.0, 0.0
	for i := range 41 {
		l := 3 * math.Pow(200.0/3, float64(i)/40)
		k := gp.Gram(gp.RBF{Variance: 1, Lengthscale: l}, ts)
		for j := range 61 {
			v := math.Pow(10, float64(j)/10) // 1 .. 1e6
			var m mat.SymDense
			m.ScaleSym(v, k)
			m.AddSym(&m, g)
			if r, err := solveGLS(&m, z, d); err == nil && r.logLik > best {
				best, bl, bv = r.logLik, l, v
			}
		}
	}
	t.Logf("search: l %.3g s, variance %.4g, REML %.4f in %d evaluations; dense grid: l %.3g, variance %.4g, REML %.4f",
		est.Fit.Lengthscale, est.Fit.Variance, est.Fit.LogLikelihood, est.Fit.Evaluations, bl, bv, best)
	if est.Fit.LogLikelihood < best-0.05 {
		t.Errorf("search REML %v below the dense grid's %v", est.Fit.LogLikelihood, best)
	}
}

func TestErrors(t *testing.T) {
	s := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 1}, gp.Indices(3))
	p := Planar{East: []float64{0, 0, 0}, North: []float64{0, 0, 0}}
	fam := prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 1, LengthscaleMax: 5}
	ts := []float64{0, 1, 2}
	fixed := Adversary{Family: prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 1, LengthscaleMax: 1}, Variance: 1}
	if _, _, err := Attack(ts, p, p, s, fixed, nil, 1); err == nil {
		t.Error("no secret points accepted")
	}
	if _, _, err := Attack(ts, p, p, s, fixed, []int{3}, 1); err == nil {
		t.Error("out-of-range secret accepted")
	}
	if _, _, err := Attack(ts, p, Planar{East: []float64{0}, North: []float64{0}}, s, fixed, []int{0}, 1); err == nil {
		t.Error("length mismatch accepted")
	}
	for name, c := range map[string]struct {
		ts, z []float64
		g     mat.Symmetric
		adv   Adversary
	}{
		"bad kernel":        {ts, []float64{0, 1, 2}, s, Adversary{Family: prior.Family{Kernel: "cubic", LengthscaleMin: 1, LengthscaleMax: 1}}},
		"inverted range":    {ts, []float64{0, 1, 2}, s, Adversary{Family: prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 5, LengthscaleMax: 1}}},
		"negative variance": {ts, []float64{0, 1, 2}, s, Adversary{Family: fam, Variance: -1}},
		"NaN release":       {ts, []float64{0, math.NaN(), 2}, s, Adversary{Family: fam}},
		"short release":     {ts, []float64{0, 1}, s, Adversary{Family: fam}},
		"noise size":        {ts, []float64{0, 1, 2}, gp.Gram(gp.RBF{Variance: 1, Lengthscale: 1}, gp.Indices(2)), Adversary{Family: fam}},
		"unknown mean":      {ts, []float64{0, 1, 2}, s, Adversary{Family: fam, Mean: MeanModel(7)}},
	} {
		if _, err := Reconstruct(c.ts, c.z, c.g, c.adv); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Issue 32: sanitize releases traces of one and two points, and the
// adversary attacks them with the strongest mean they can estimate (these
// were refused as "too few for trend" and "one time trend"). One point
// with an unknown mean: the release itself, with the noise's variance. Two
// points, or one time: a constant mean, checked against universal kriging
// by the textbook formulas at the prior the adversary chose.
func TestFewPoints(t *testing.T) {
	fam := prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 1, LengthscaleMax: 5}
	one := mat.NewSymDense(1, []float64{4})
	est, err := Reconstruct([]float64{0}, []float64{5}, one, Adversary{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	if est.Mean[0] != 5 || est.Variance[0] != 4 || est.Fit.Path != PathOnePoint || est.Fit.MeanNote == "" {
		t.Errorf("one point: mean %v variance %v path %q note %q; want the release 5, the noise variance 4, and a note", est.Mean, est.Variance, est.Fit.Path, est.Fit.MeanNote)
	}
	// A known mean needs no estimate: it runs as before.
	if est, err := Reconstruct([]float64{0}, []float64{5}, one, Adversary{Family: fam, Mean: MeanKnown}); err != nil || est.Fit.Path == PathOnePoint {
		t.Errorf("one point, known mean: %v, path %q", err, est.Fit.Path)
	}
	for name, c := range map[string]struct{ ts, z []float64 }{
		"two points": {[]float64{0, 1}, []float64{0, 1}},
		"one time":   {[]float64{1, 1, 1}, []float64{0, 1, 2}},
	} {
		n := len(c.ts)
		g := mat.NewSymDense(n, nil)
		for i := range n {
			g.SetSym(i, i, 0.5)
		}
		est, err := Reconstruct(c.ts, c.z, g, Adversary{Family: fam, Unguarded: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if est.Fit.Mean != "constant" || !strings.Contains(est.Fit.MeanNote, "linear") {
			t.Errorf("%s: mean %q, note %q; want a constant mean and a note saying the linear one was not estimable", name, est.Fit.Mean, est.Fit.MeanNote)
		}
		k, err := fam.Member(est.Fit.Variance, est.Fit.Lengthscale)
		if err != nil {
			t.Fatal(err)
		}
		h := mat.NewDense(n, 1, nil)
		for i := range n {
			h.Set(i, 0, 1)
		}
		_, xhat, _, _ := bruteUK(t, gp.Gram(k, c.ts), g, h, c.z)
		for i := range n {
			if math.Abs(est.Mean[i]-xhat[i]) > 1e-9 {
				t.Errorf("%s: point %d: reconstruction %.12g, textbook ordinary kriging %.12g", name, i, est.Mean[i], xhat[i])
			}
		}
	}
}
