package sanitize

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// stayTrace is a walk, a stay of stayMin minutes (fixes every 8-17 s,
// jittered by a few metres), and another walk.
func stayTrace(walkPts int, stayMin float64) *trace.Trace {
	t := &trace.Trace{UID: "s", Name: "stay"}
	at := t0
	home := geo.Point{Lat: 39.98, Lon: 116.30}
	for i := range walkPts {
		at = at.Add(time.Duration(2+i%3) * time.Second)
		p := geo.Destination(home, 80, 1.4*float64(walkPts-i)*3)
		t.Points = append(t.Points, trace.Point{Time: at, Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()})
	}
	end := at.Add(time.Duration(stayMin * float64(time.Minute)))
	for i := 0; at.Before(end); i++ {
		at = at.Add(time.Duration(8+(i*7)%10) * time.Second)
		p := geo.Destination(home, float64(i*37%360), float64(i%5))
		t.Points = append(t.Points, trace.Point{Time: at, Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()})
	}
	for i := range walkPts {
		at = at.Add(time.Duration(2+i%3) * time.Second)
		p := geo.Destination(home, 200, 1.4*float64(i)*3)
		t.Points = append(t.Points, trace.Point{Time: at, Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()})
	}
	return t
}

// twoKernelPrior is a version 3 family: Matérn 3/2 up to an hour, RBF at
// short lengthscales.
func twoKernelPrior() *prior.Prior {
	return &prior.Prior{Version: 3, Kernel: gp.KernelMatern32, Variance: 200 * 200, Lengthscale: 300,
		FamilySet: &prior.FamilySet{Kernels: []prior.Family{
			{Kernel: gp.KernelMatern32, LengthscaleMin: 20, LengthscaleMax: 3600},
			{Kernel: gp.KernelRBF, LengthscaleMin: 8, LengthscaleMax: 60},
		}},
		Origin: &geo.Origin{Lat: 39.95, Lon: 116.35, Note: "test corpus"}}
}

// rigidLoss is an independent dense (E1) evaluation of a rigid move of the
// points idx by r (split over the two plane coordinates) under the prior
// sigma and the noise g: lambda/2 r^2 v' (Ct + G)^-1 v, v = [1_S; A 1_S],
// with A and Ct from Cholesky solves of sigma[S,S] (no inverse formed).
// With sigma nil it is the adversary who believes the points stood still
// and knows nothing else: lambda/2 r^2 1' G[S,S]^-1 1.
func rigidLoss(t *testing.T, sigma, g mat.Symmetric, idx []int, lambda, r float64) float64 {
	t.Helper()
	return rigidLosses(t, sigma, idx, lambda, r, g)[0]
}

// quadOnes returns 1' m^-1 1 by a Cholesky solve.
func quadOnes(t *testing.T, m *mat.SymDense) float64 {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(m) {
		t.Fatalf("matrix is not positive definite")
	}
	n := m.SymmetricDim()
	ones := mat.NewVecDense(n, nil)
	for i := range n {
		ones.SetVec(i, 1)
	}
	var y mat.VecDense
	if err := ch.SolveVecTo(&y, ones); err != nil {
		t.Fatal(err)
	}
	return mat.Dot(ones, &y)
}

// The default release certifies points, places and the route, and an
// independent dense (E1) evaluation of the noise the certificate states
// finds every class within its certificate: basic secrets under both
// kernels of the family at lengthscales from its bottom to its top; the
// stay and other windows moved rigidly, alone and conditioned under Matérn
// 3/2 members at least as long as the window; the whole trace moved
// rigidly. Lambda is 4, so that a loss formula that dropped lambda/2 would
// certify half the true loss. The negative control is the points-only
// release (what the tool used to release): its stay, conditioned or
// alone, and its route exceed the target.
func TestClassesHoldIndependently(t *testing.T) {
	t.Parallel()
	tr := stayTrace(40, 30)
	n := tr.Len()
	opt := options(twoKernelPrior())
	opt.Lambda = 4
	out, cert, err := Trace(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkRelease(t, tr, out)
	pc := cert.Persons[0]
	c := pc.SecretClasses
	if !c.Points.Covered || !c.Places.Covered || !c.Route.Covered || c.Places.NotCovered == "" {
		t.Fatalf("classes %+v", c)
	}
	if cert.EpsilonMax > opt.Epsilon*(1+1e-12) || math.Abs(cert.EpsilonMax-c.Max()) > 0 || len(cert.PriorFamily.Kernels) != 2 {
		t.Fatalf("epsilon_max %v, classes max %v, family %v", cert.EpsilonMax, c.Max(), cert.PriorFamily)
	}
	ts := secondsOf(t, tr.Points)
	g, err := cert.NoiseCovariance(pc, ts)
	if err != nil {
		t.Fatal(err)
	}
	lam, r := opt.Lambda, opt.Radius
	member := func(kernel string, l float64) mat.Symmetric {
		k, err := gp.NewKernel(kernel, 200*200, l, 0)
		if err != nil {
			t.Fatal(err)
		}
		return gp.Gram(k, ts)
	}
	const tol = 1 + 1e-7
	worst := map[string]float64{}
	note := func(class string, e float64) { worst[class] = math.Max(worst[class], e) }
	defer func() {
		t.Logf("largest independent epsilon per class: %v; certified points %.4g, places %.4g, route %.4g", worst, c.Points.Epsilon, c.Places.Epsilon, c.Route.Epsilon)
	}()
	// Points.
	for _, m := range []struct {
		kernel string
		ls     []float64
	}{{gp.KernelMatern32, []float64{20, 60, 300, 1800, 3600}}, {gp.KernelRBF, []float64{8, 20, 60}}} {
		for _, l := range m.ls {
			sigma := member(m.kernel, l)
			for _, i := range []int{0, 20, 39, 40, 41, n / 2, n - 41, n - 1} {
				e := rigidLoss(t, sigma, g, []int{i}, lam, r)
				note("points "+m.kernel, e)
				if e > c.Points.Epsilon*tol {
					t.Errorf("point %d under %s at %g s: epsilon %v above the certified %v", i, m.kernel, l, e, c.Points.Epsilon)
				}
			}
		}
	}
	// Places: the stay, and windows of several durations.
	stay := make([]int, 0, n)
	for i := 40; i < n-40; i++ {
		stay = append(stay, i)
	}
	windows := [][]int{stay, seq(0, 40), seq(30, 60), seq(100, 160), seq(n-60, n)}
	for _, w := range windows {
		dur := ts[w[len(w)-1]] - ts[w[0]]
		e := rigidLoss(t, nil, g, w, lam, r)
		note("places alone", e)
		if e > c.Places.Epsilon*tol {
			t.Errorf("window %d-%d (%.0f s) alone: epsilon %v above the certified %v", w[0], w[len(w)-1], dur, e, c.Places.Epsilon)
		}
		for _, l := range []float64{math.Max(dur, 20), 2 * math.Max(dur, 20), 3600} {
			if l > 3600 {
				continue
			}
			e := rigidLoss(t, member(gp.KernelMatern32, l), g, w, lam, r)
			note("places matern32", e)
			if e > c.Places.Epsilon*tol {
				t.Errorf("window %d-%d (%.0f s) under matern32 at %g s: epsilon %v above the certified %v", w[0], w[len(w)-1], dur, l, e, c.Places.Epsilon)
			}
		}
	}
	// Route: every point; no prior enters.
	e := rigidLoss(t, nil, g, seq(0, n), lam, r)
	note("route", e)
	if e > c.Route.Epsilon*tol {
		t.Errorf("route: epsilon %v above the certified %v", e, c.Route.Epsilon)
	}

	// Negative control: points only, against the short family earlier
	// versions fitted (RBF, 8.6-33.9 s). A family reaching an hour already
	// puts enough low-frequency noise into the envelope to hide this stay
	// (measured: 0.8 alone, 0.83 conditioned), a family of seconds does not.
	opt = options(familyPrior())
	opt.Lambda = 4
	opt.PointsOnly = true
	_, pcert, err := Trace(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	if pcert.Persons[0].SecretClasses.Places.Covered || pcert.Persons[0].SecretClasses.Route.Covered {
		t.Fatalf("points-only certificate claims places or route: %+v", pcert.Persons[0].SecretClasses)
	}
	gp0, err := pcert.NoiseCovariance(pcert.Persons[0], ts)
	if err != nil {
		t.Fatal(err)
	}
	dur := ts[stay[len(stay)-1]] - ts[stay[0]]
	alone := rigidLoss(t, nil, gp0, stay, lam, r)
	cond := rigidLoss(t, member(gp.KernelRBF, 33.9), gp0, stay, lam, r)
	route := rigidLoss(t, nil, gp0, seq(0, n), lam, r)
	t.Logf("points-only control (%.0f s stay): alone %.3g, conditioned under rbf at 33.9 s %.3g, route %.3g; target %g", dur, alone, cond, route, opt.Epsilon)
	if alone <= opt.Epsilon || cond <= opt.Epsilon || route <= opt.Epsilon {
		t.Errorf("points-only control within the target (stay alone %v, conditioned %v, route %v): the check would not catch a release that protects moments only", alone, cond, route)
	}
}

func seq(a, b int) []int {
	out := make([]int, 0, b-a)
	for i := a; i < b; i++ {
		out = append(out, i)
	}
	return out
}

// The sampler draws the noise the certificate states: releases drawn by
// Release (not from the certificate), whitened by the certificate's noise
// covariance, have unit variance in every direction checked, including
// the route's (the direction whose loss is 1' G^-1 1). A 10 % cut of the
// noise (standard deviation times 0.9, through the test hook that sees
// each release in ECEF) fails it. The noise is measured as a person sees
// it: released and true positions on a local plane (the projection to the
// surface keeps the horizontal components of the ECEF noise).
func TestSamplerMatchesCertificate(t *testing.T) {
	// Not in parallel: it sets ecefHook, which every release reads.
	tr := stayTrace(8, 3)
	n := tr.Len()
	opt := options(twoKernelPrior())
	ts := secondsOf(t, tr.Points)
	enu := geo.NewENU(*opt.Origin)
	east0, north0 := make([]float64, n), make([]float64, n)
	for i, p := range tr.Points {
		east0[i], north0[i] = enu.Forward(p.Geo())
	}
	draw := func(draws int, scale float64) (whitened, route []float64) {
		var l *mat.Cholesky
		var ones mat.VecDense
		var q float64
		ecefHook = func(in, out [Dims][]float64) {
			for c := range out {
				for i := range out[c] {
					out[c][i] = in[c][i] + scale*(out[c][i]-in[c][i])
				}
			}
		}
		defer func() { ecefHook = nil }()
		for s := range draws {
			o := opt
			o.Source = noise.Seeded(uint64(1000 + s))
			out, cert, err := Trace(tr, o)
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				g, err := cert.NoiseCovariance(cert.Persons[0], ts)
				if err != nil {
					t.Fatal(err)
				}
				l = new(mat.Cholesky)
				if !l.Factorize(g) {
					t.Fatal("noise covariance is not positive definite")
				}
				ones = *mat.NewVecDense(n, nil)
				for i := range n {
					ones.SetVec(i, 1)
				}
				var y mat.VecDense
				if err := l.SolveVecTo(&y, &ones); err != nil {
					t.Fatal(err)
				}
				q = mat.Dot(&ones, &y)
			}
			e, nn := make([]float64, n), make([]float64, n)
			for i, p := range out.Points {
				x, y := enu.Forward(p.Geo())
				e[i], nn[i] = x-east0[i], y-north0[i]
			}
			for _, d := range [][]float64{e, nn} {
				var lt mat.TriDense
				l.LTo(&lt)
				var z mat.VecDense
				if err := z.SolveVec(&lt, mat.NewVecDense(n, d)); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					whitened = append(whitened, z.AtVec(i))
				}
				var y mat.VecDense
				if err := l.SolveVecTo(&y, mat.NewVecDense(n, d)); err != nil {
					t.Fatal(err)
				}
				// 1' G^-1 e / sqrt(1' G^-1 1) is standard normal.
				route = append(route, mat.Dot(&ones, &y)/math.Sqrt(q))
			}
		}
		return whitened, route
	}
	meanSq := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v * v
		}
		return s / float64(len(x))
	}
	// 600 releases: 1200 route draws (standard error of the mean square
	// sqrt(2/1200) = 4 %), 1200 n whitened coordinates; tolerances of 4
	// standard errors (0.03 is 4.1 of them at 31 points). -short: 200
	// releases, the tolerances 4 standard errors of their own draws (about
	// 0.05 and 0.28); the control, 15 of them away, still fails.
	draws, tolW, tolR := 600, 0.03, 0.16
	if testing.Short() {
		draws = 200
		tolW, tolR = 4*math.Sqrt(2/float64(2*n*draws)), 4*math.Sqrt(2/float64(2*draws))
	}
	w, rt := draw(draws, 1)
	mw, mr := meanSq(w), meanSq(rt)
	t.Logf("%d points: whitened mean square %.4f over %d values (tolerance %.3f), route direction %.4f over %d (%.3f)", n, mw, len(w), tolW, mr, len(rt), tolR)
	if math.Abs(mw-1) > tolW || math.Abs(mr-1) > tolR {
		t.Errorf("released noise does not match the certificate: whitened mean square %v, route direction %v (want 1)", mw, mr)
	}
	w, rt = draw(draws, 0.9)
	mw, mr = meanSq(w), meanSq(rt)
	t.Logf("control, noise cut 10 %%: whitened %.4f, route %.4f", mw, mr)
	if math.Abs(mw-1) <= tolW {
		t.Errorf("a 10 %% noise cut passes: whitened mean square %v", mw)
	}
}

// Nothing weakens silently: a prior fitted on the person released is
// refused (by trace and by person fingerprint) unless allowed, and then the
// certificate says not covered; a seeded release says it is not private; a
// certificate carries no local absolute path; a prior file without a
// family is refused.
func TestNothingWeakensSilently(t *testing.T) {
	t.Parallel()
	tr := walk(30, 39.98, 116.30)
	tr.Name = "/home/alice/traces/walk.plt"
	// A person id alone (ids recur across data sets) is stated, not refused.
	pr := familyPrior()
	pr.Fit = &prior.FitRecord{Corpus: "c", Fingerprints: []string{trace.PersonFingerprint(tr.UID)}}
	if _, cert, err := Trace(tr, options(pr)); err != nil || !strings.Contains(cert.PriorCoverage, "the same person") {
		t.Errorf("same id, other content: %v, coverage %q", err, cert.PriorCoverage)
	}
	for _, fp := range []string{trace.Fingerprint(tr)} {
		pr := familyPrior()
		pr.Fit = &prior.FitRecord{Corpus: "/home/alice/corpus", Fingerprints: []string{"t:00", fp}}
		_, _, err := Trace(tr, options(pr))
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "prior" || !strings.Contains(pe.Why, "fitted on data of the input") {
			t.Errorf("fingerprint %s: error %v, want a refusal naming the prior", fp, err)
		}
		opt := options(pr)
		opt.AllowPriorOverlap = true
		_, cert, err := Trace(tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		if cert.PriorCoverage != PriorOverlapOverridden || !strings.Contains(cert.Guarantee, "NOT COVERED") {
			t.Errorf("overridden overlap: coverage %q, guarantee %q", cert.PriorCoverage, cert.Guarantee)
		}
		if cert.Prior.Fit.Fingerprints != nil || cert.Prior.Fit.Corpus != "corpus" || cert.Persons[0].Traces[0].Name != "walk.plt" {
			t.Errorf("certificate carries fingerprints or local paths: %+v, %q", cert.Prior.Fit, cert.Persons[0].Traces[0].Name)
		}
	}
	// Independent prior: checked.
	pr = familyPrior()
	pr.Fit = &prior.FitRecord{Corpus: "c", Fingerprints: []string{"t:00", trace.PersonFingerprint("someone else")}}
	_, cert, err := Trace(tr, options(pr))
	if err != nil || cert.PriorCoverage != PriorIndependent {
		t.Fatalf("independent prior: %v, %q", err, cert.PriorCoverage)
	}
	// Seeded: not private, and says so first.
	if cert.Private || !strings.HasPrefix(cert.Guarantee, "NOT PRIVATE") || !strings.Contains(cert.Legend(), "NOT PRIVATE") {
		t.Errorf("seeded release: private %v, guarantee %q, legend %q", cert.Private, cert.Guarantee, cert.Legend())
	}
	opt := options(familyPrior())
	opt.Source = noise.Secure()
	_, cert, err = Trace(tr, opt)
	if err != nil || !cert.Private || strings.Contains(cert.Guarantee, "NOT PRIVATE") || strings.Contains(cert.Legend(), "NOT PRIVATE") {
		t.Errorf("crypto release: %v, private %v", err, cert.Private)
	}
	// A prior file that states no family.
	for _, js := range []string{
		`{"version":1,"kernel":"rbf","variance_m2":1,"lengthscale_s":7}`,
		`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":7}`,
	} {
		if _, err := prior.Read(strings.NewReader(js)); err == nil || !strings.Contains(err.Error(), "states no prior family") {
			t.Errorf("%s: error %v, want a refusal", js, err)
		}
	}
	if _, err := prior.Read(strings.NewReader(`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":7,"lengthscale_min_s":7,"lengthscale_max_s":7}`)); err != nil {
		t.Errorf("an explicit single-lengthscale family: %v", err)
	}
}
