package attack

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

const geolifeDir = "../../shared/data/geolife"

// publicOrigin is the fixed public tangent-plane origin of the real-data
// tests (Beijing).
var publicOrigin = geo.Point{Lat: 39.9042, Lon: 116.4074}

// geolifeRelease is a real trace and a release of it built in the test.
type geolifeRelease struct {
	name            string
	ts              []float64
	truth, released Planar
	sigmaG          *mat.SymDense
}

// loadGeoLife reads the first maxN points of a PLT file (duplicate
// timestamps dropped and counted) and projects them around the public
// origin.
func loadGeoLife(t *testing.T, path string, maxN int) (ts []float64, truth Planar) {
	t.Helper()
	trs, _, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil || len(trs) != 1 {
		t.Fatalf("%s: %v (%d traces)", path, err, len(trs))
	}
	tr := trs[0]
	if st := tr.Dedup(); st.Duplicates+st.Conflicts > 0 {
		t.Logf("%s: dropped %d repeated and %d conflicting fixes at repeated times", path, st.Duplicates, st.Conflicts)
	}
	if tr.Len() > maxN {
		tr.Points = tr.Points[:maxN]
	}
	if ts, err = gp.Seconds(tr.Times()); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	pts := make([]geo.Point, tr.Len())
	for i, p := range tr.Points {
		pts[i] = p.Geo()
	}
	return ts, Project(publicOrigin, pts)
}

// releaseNoise is the noise of the real-data tests, per dimension
// SigmaG = (1/t) Gram(Matern52{1, 30 s}) + d I with 1/t = 4950 m^2 and
// d = 50 m^2: 5,000 m^2 per dimension, an RMS planar displacement of
// sqrt(2 x 5000) = 100 m.
func releaseNoise(ts []float64) *mat.SymDense {
	var g mat.SymDense
	g.ScaleSym(4950, gp.Gram(gp.Matern52{Variance: 1, Lengthscale: 30}, ts))
	for i := range ts {
		g.SetSym(i, i, g.At(i, i)+50)
	}
	return &g
}

// newGeoLifeRelease adds releaseNoise to both dimensions of a real trace
// with the seeded sampler.
func newGeoLifeRelease(t *testing.T, path string, maxN int, seed uint64) *geolifeRelease {
	t.Helper()
	ts, truth := loadGeoLife(t, path, maxN)
	g := releaseNoise(ts)
	mn, err := noise.NewMultiNormalCholesky(g)
	if err != nil {
		t.Fatal(err)
	}
	src := noise.Seeded(seed)
	e, err := mn.AddSnapped(nil, truth.East, src)
	if err != nil {
		t.Fatal(err)
	}
	n, err := mn.AddSnapped(nil, truth.North, src)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(geolifeDir, path)
	return &geolifeRelease{name: rel, ts: ts, truth: truth, released: Planar{East: e, North: n}, sigmaG: g}
}

func allPoints(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// geolifeFiles picks the test traces by a rule fixed in advance: for each
// user, the first perUser files (by name) with at least minPoints lines of
// fixes.
func geolifeFiles(t *testing.T, minPoints, perUser int) []string {
	t.Helper()
	users, err := filepath.Glob(filepath.Join(geolifeDir, "[0-9][0-9][0-9]"))
	if err != nil || len(users) == 0 {
		t.Skipf("GeoLife data not found under %s", geolifeDir)
	}
	var out []string
	for _, u := range users {
		files, _ := filepath.Glob(filepath.Join(u, "*.plt"))
		slices.Sort(files)
		k := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(b, []byte{'\n'})-6 >= minPoints && k < perUser {
				out = append(out, f)
				k++
			}
		}
	}
	return out
}

// bundledFamily is the prior family of the bundled sample prior (RBF, one
// lengthscale, 182.7 m^2), the family a certificate of the demo states.
func bundledFamily(t *testing.T) prior.Family {
	t.Helper()
	p, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	return p.Family()
}

// On real GeoLife traces released with correlated noise the adversary is
// never worse than reading the release: 8 traces (every user's first with
// 500 points, its first 300 points), an RBF family with the bundled prior's
// least variance and lengthscales from 5 s to 10 minutes. The claim is per
// trace, with no statistical bound, so it needs every person, not a count:
// a second trace per user (16 in all, as before issue 32) doubled the
// cost and never failed. 300 points (500 before session 43) cost a third:
// an adversary that models the correlated noise as white (planted, run,
// reverted) is worse than the release on user 001's trace at both sizes
// (ratio 1.11 at 300 points, 1.04 at 500), and a run without the guard
// passes at both. The numbers are logged; the empirical coverage of
// the nominal 95 % ellipses is reported, not required (real traces are not
// GP samples). TestOldAdversaryWorseThanRelease is its negative control.
func TestGeoLifeNeverWorseThanRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data attack skipped in -short mode")
	}
	t.Parallel()
	files := geolifeFiles(t, 500, 1)
	if len(files) < 8 {
		t.Fatalf("%d GeoLife files with 500 points, want one for each of the 8 users", len(files))
	}
	fam := bundledFamily(t)
	fam.LengthscaleMin, fam.LengthscaleMax = 5, 600
	adv := Adversary{Family: fam}
	var ratios, covers []float64
	for k, f := range files {
		g := newGeoLifeRelease(t, f, 300, uint64(k+1))
		r, _, err := Attack(g.ts, g.truth, g.released, g.sigmaG, adv, allPoints(len(g.ts)), 100)
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		e, n := r.Adversary.East, r.Adversary.North
		t.Logf("%s (%d points, %.0f min): RMSE release %.1f m, reconstruction %.1f m (estimated %.1f); median %.1f / %.1f m; within 100 m %.2f / %.2f; 2-sigma %.1f m; coverage %.3f; east l %.3g s var %.3g weight %.2f, north l %.3g s var %.3g weight %.2f",
			g.name, r.Points, g.ts[len(g.ts)-1]/60, r.ReleasedRMSE, r.ReconstructedRMSE, r.EstimatedRMSE, r.ReleasedMedian, r.ReconstructedMedian,
			r.ReleaseWithinRadius, r.WithinRadius, r.Posterior2Sigma, r.Coverage95, e.Lengthscale, e.Variance, e.ReleaseWeight, n.Lengthscale, n.Variance, n.ReleaseWeight)
		if r.ReconstructedRMSE > r.ReleasedRMSE {
			t.Errorf("%s: reconstruction RMSE %.1f m worse than the release's %.1f m", g.name, r.ReconstructedRMSE, r.ReleasedRMSE)
		}
		ratios = append(ratios, r.ReconstructedRMSE/r.ReleasedRMSE)
		covers = append(covers, r.Coverage95)
	}
	slices.Sort(ratios)
	slices.Sort(covers)
	t.Logf("%d traces: reconstruction / release RMSE from %.2f to %.2f (median %.2f); 95%% coverage from %.3f to %.3f (median %.3f)",
		len(files), ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2], covers[0], covers[len(covers)-1], covers[len(covers)/2])
}

// Negative control, the reported symptom: on a long held-out trace (user
// 000, not in the bundled prior's corpus; 745 fixes over 80 minutes) the
// old adversary (plainAverageAdversary) with the certificate's prior and the plain average is
// many times worse than the release and claims a 2-sigma of a few tens of
// metres. The new adversary of the same family (the bundled prior's RBF
// lengthscale, variance at least the prior's, chosen by restricted
// likelihood, linear trend) is not worse than the release, and its
// 2-sigma is of the size of its error.
func TestOldAdversaryWorseThanRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("an 800-point real-data attack with a family search")
	}
	t.Parallel()
	path := filepath.Join(geolifeDir, "000", "20081026134407.plt")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("GeoLife data: %v", err)
	}
	g := newGeoLifeRelease(t, path, 800, 1)
	n := len(g.ts)
	fam := bundledFamily(t)
	k, err := fam.Member(fam.Variance, fam.LengthscaleMin)
	if err != nil {
		t.Fatal(err)
	}
	old := plainAverageAdversary(t, gp.Gram(k, g.ts), g.sigmaG, g.truth, g.released, allPoints(n), 100)
	oldRMSE, old2Sigma := old.ReconstructedRMSE, old.Posterior2Sigma
	r, _, err := Attack(g.ts, g.truth, g.released, g.sigmaG, Adversary{Family: fam}, allPoints(n), 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, %d points over %.0f min: release RMSE %.1f m; old adversary RMSE %.1f m, 2-sigma %.1f m, coverage %.3f, estimated RMSE %.1f m; new adversary RMSE %.1f m (median %.1f), 2-sigma %.1f m, coverage %.3f, variance %.3g / %.3g m^2",
		g.name, n, g.ts[n-1]/60, r.ReleasedRMSE, oldRMSE, old2Sigma, old.Coverage95, old.EstimatedRMSE, r.ReconstructedRMSE, r.ReconstructedMedian, r.Posterior2Sigma, r.Coverage95,
		r.Adversary.East.Variance, r.Adversary.North.Variance)
	if !(oldRMSE > 5*r.ReleasedRMSE) || !(old2Sigma < oldRMSE/10) {
		t.Errorf("symptom not reproduced: old RMSE %.1f m, 2-sigma %.1f m, release %.1f m", oldRMSE, old2Sigma, r.ReleasedRMSE)
	}
	if r.ReconstructedRMSE > r.ReleasedRMSE {
		t.Errorf("new adversary RMSE %.1f m worse than the release's %.1f m", r.ReconstructedRMSE, r.ReleasedRMSE)
	}
	if ratio := r.ReconstructedRMSE / (r.Posterior2Sigma / 2); ratio > 1.5 || ratio < 0.67 {
		t.Errorf("new adversary's RMSE %.1f m against its stated sd %.1f m", r.ReconstructedRMSE, r.Posterior2Sigma/2)
	}
}

// plainAverageAdversary is the adversary this package's Run used to be
// (removed; kept here only as the negative control): a fixed prior
// covariance sigma for both dimensions, the plain average of each released
// dimension as its mean, the posterior mean avg + Sigma M^-1 (z - avg) and
// the known-mean posterior variance, which ignores the mean's
// uncertainty. Its report carries the truth-free risk estimate of this
// linear estimator, A = Sigma M^-1 + SigmaG M^-1 1 1^T / n, so
// (A SigmaG)_ii = [Sigma M^-1 SigmaG]_ii + u_i w_i / n with
// u = SigmaG M^-1 1 and w = SigmaG 1.
func plainAverageAdversary(t *testing.T, sigma, sigmaG mat.Symmetric, truth, released Planar, secretPoints []int, radius float64) *Report {
	t.Helper()
	n := sigma.SymmetricDim()
	post, err := cip.NewPosterior(sigma, sigmaG)
	if err != nil {
		t.Fatal(err)
	}
	var m mat.SymDense
	m.AddSym(sigma, sigmaG)
	f, err := gp.Factorize(&m, 0)
	if err != nil {
		t.Fatal(err)
	}
	ones := mat.NewVecDense(n, nil)
	for i := range n {
		ones.SetVec(i, 1)
	}
	var mi1, u, w mat.VecDense
	if err := f.SolveVecTo(&mi1, ones); err != nil {
		t.Fatal(err)
	}
	u.MulVec(sigmaG, &mi1)
	w.MulVec(sigmaG, ones)
	var est [2]*Estimate
	for k, z := range [2][]float64{released.East, released.North} {
		avg := 0.0
		for _, v := range z {
			avg += v / float64(n)
		}
		mu := make([]float64, n)
		for i := range mu {
			mu[i] = avg
		}
		xhat, err := post.Mean(mu, z)
		if err != nil {
			t.Fatal(err)
		}
		e := &Estimate{Mean: xhat, Variance: make([]float64, n), Risk: make([]float64, n),
			Fit: Fit{Choice: "given covariance", Mean: "average", Coefficients: []float64{avg}, Evaluations: 1, Jitter: post.Jitter}}
		for i := range n {
			e.Variance[i] = math.Max(post.Cov.At(i, i), 0)
			d := xhat[i] - z[i]
			e.Risk[i] = d*d - sigmaG.At(i, i) + 2*(e.Variance[i]+u.AtVec(i)*w.AtVec(i)/float64(n))
		}
		est[k] = e
	}
	r, err := score(truth, released, est, secretPoints, radius)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
