package attack

import (
	"math"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// stayTrace is a synthetic day sampled every 5 s: movement at 2 m/s, a
// GPS gap while the person walks the last 400 m into a building, a
// 60-minute stay standing still at place (1200 m, 300 m), a gap on the way
// out, movement at 3.2 m/s (16 m a fix), a 10-minute stay (too short to
// count), movement, and a final 20-minute stay that runs to the end of the
// trace. jitter (metres) is added to the standing positions to play GPS
// scatter.
type stayTrace struct {
	ts          []float64
	east, north []float64
	// stands are the standing segments of 15 minutes or more, short the
	// 10-minute one.
	stands [][2]int
	short  [2]int
	place  [2]float64
}

func newStayTrace(jitter float64, src noise.Source) *stayTrace {
	s := &stayTrace{place: [2]float64{1200, 300}}
	t, e, n := 0.0, 0.0, 0.0
	add := func() {
		s.ts, s.east, s.north = append(s.ts, t), append(s.east, e), append(s.north, n)
	}
	move := func(de, dn float64, steps int) {
		for range steps {
			t += 5
			e += de
			n += dn
			add()
		}
	}
	stand := func(minutes int) [2]int {
		lo := len(s.ts)
		ce, cn := e, n
		for k := 0; k <= minutes*12; k++ {
			t += 5
			e, n = ce, cn
			if jitter > 0 {
				e += jitter * noise.Normal(src)
				n += jitter * noise.Normal(src)
			}
			add()
		}
		e, n = ce, cn
		return [2]int{lo, len(s.ts) - 1}
	}
	add()
	move(10, 3, 80) // 800 m east, 240 m north over 400 s
	// Gap: 200 s to walk the last 400 m east (and 60 m north).
	t += 200
	e, n = s.place[0], s.place[1]
	s.stands = append(s.stands, stand(60))
	t += 200
	e += 400
	add()
	move(16, 0, 60)
	s.short = stand(10)
	move(0, 16, 60)
	s.stands = append(s.stands, stand(20))
	return s
}

func (s *stayTrace) points() []trace.Point {
	enu := geo.NewENU(publicOrigin)
	t0 := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	pts := make([]trace.Point, len(s.ts))
	for i := range s.ts {
		g := enu.Inverse(s.east[i], s.north[i])
		pts[i] = trace.Point{Time: t0.Add(time.Duration(s.ts[i] * float64(time.Second))), Lat: g.Lat, Lon: g.Lon, Alt: math.NaN()}
	}
	return pts
}

// The stay-point rule (Li et al.) on the synthetic day: the stay entered
// after a GPS gap is exactly the standing segment; a stay reached by
// moving starts at the first approach point within the radius (192 m away
// at 16 m a fix: 13 points early, counting the fix of arrival), as the
// rule defines it, and one that runs to the end of the trace counts. The
// 10-minute stay counts only under a 10-minute rule (then with its 13
// approach points and the 3 departure points within 200 m of the first). Centroids are the
// mean positions of the stay's points.
func TestAttackStaysRule(t *testing.T) {
	s := newStayTrace(2, noise.Seeded(1))
	pts := s.points()
	stays, err := Stays(pts, StayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{s.stands[0], {s.stands[1][0] - 13, s.stands[1][1]}}
	if len(stays) != len(want) {
		t.Fatalf("%d stays %+v, want %v (the 10-minute one at %v is too short)", len(stays), stays, want, s.short)
	}
	enu := geo.NewENU(publicOrigin)
	for k, st := range stays {
		if st.Start != want[k][0] || st.End != want[k][1] {
			t.Errorf("stay %d: points %d-%d, want %v", k, st.Start, st.End, want[k])
		}
		var me, mn float64
		for i := want[k][0]; i <= want[k][1]; i++ {
			me += s.east[i]
			mn += s.north[i]
		}
		m := float64(want[k][1] - want[k][0] + 1)
		ce, cn := enu.Forward(st.Centroid)
		if d := math.Hypot(ce-me/m, cn-mn/m); d > 0.01 {
			t.Errorf("stay %d: centroid %.3f m from the mean position of its points", k, d)
		}
		if st.Points() != st.End-st.Start+1 || st.Duration() != st.EndTime.Sub(st.StartTime) {
			t.Errorf("stay %d: %+v", k, st)
		}
	}
	if d := stays[0].Duration(); d != time.Hour {
		t.Errorf("first stay lasts %v, want 1h", d)
	}
	st, err := Stays(pts, StayOptions{MinDuration: 10 * time.Minute})
	if err != nil || len(st) != 3 || st[1].Start != s.short[0]-13 || st[1].End != s.short[1]+3 {
		t.Errorf("10-minute rule: %+v (%v), want the short stay %v (13 points before, 3 after) as the second", st, err, s.short)
	}
	rev := []trace.Point{pts[1], pts[0]}
	if _, err := Stays(rev, StayOptions{}); err == nil {
		t.Error("points out of time order: no error")
	}
	if _, err := Stays(pts, StayOptions{RadiusM: -1}); err == nil {
		t.Error("negative radius: no error")
	}
}

// ouInfo is 1^T K^-1 1 for K the Matern-1/2 (Ornstein-Uhlenbeck) Gram
// matrix of variance s2 and lengthscale l on n equally spaced times dt
// apart, in closed form: the process is AR(1) with rho = exp(-dt/l), whose
// precision matrix is tridiagonal, (1/(s2 (1 - rho^2))) x [1 at the ends
// and 1 + rho^2 inside on the diagonal, -rho off it], so
// 1^T K^-1 1 = (n (1 - rho) + 2 rho) / (s2 (1 + rho)).
func ouInfo(s2, l, dt float64, n int) float64 {
	rho := math.Exp(-dt / l)
	return (float64(n)*(1-rho) + 2*rho) / (s2 * (1 + rho))
}

// placeRun draws independent noise G ~ N(0, K) (both dimensions) for the
// points idx of the stay trace, releases Z = X + G and runs the place
// adversary on the first m points of idx; it returns the errors per
// coordinate against the true place for every m in ms, and the stated SDs.
func placeRun(t *testing.T, s *stayTrace, idx []int, k *mat.SymDense, ms []int, seeds int) (errs [][]float64, sd []float64) {
	t.Helper()
	mn, err := noise.NewMultiNormalCholesky(k)
	if err != nil {
		t.Fatal(err)
	}
	errs = make([][]float64, len(ms))
	sd = make([]float64, len(ms))
	n := len(idx)
	ge, gn := make([]float64, n), make([]float64, n)
	for seed := range seeds {
		src := noise.Seeded(uint64(100 + seed))
		mn.Rand(ge, src)
		mn.Rand(gn, src)
		for a, m := range ms {
			ze, zn := make([]float64, m), make([]float64, m)
			for i := range m {
				ze[i], zn[i] = s.east[idx[i]]+ge[i], s.north[idx[i]]+gn[i]
			}
			p, err := EstimatePlace(ze, zn, k.SliceSym(0, m))
			if err != nil {
				t.Fatal(err)
			}
			errs[a] = append(errs[a], p.East-s.place[0], p.North-s.place[1])
			sd[a] = p.SD
		}
	}
	return errs, sd
}

// ouPlaceRun is placeRun on the stay trace's first stand under
// Ornstein-Uhlenbeck noise (Matérn 1/2, 5000 m^2, 60 s) for its first 15
// minutes and the whole hour: TestAttackPlaceMatchesTheory and
// TestAttackPlaceCommonOffsetControl read the same draws, made once per
// test binary and number of seeds.
func ouPlaceRun(t *testing.T, seeds int) (errs [][]float64, sd []float64) {
	t.Helper()
	ouRuns.Lock()
	defer ouRuns.Unlock()
	if r, ok := ouRuns.m[seeds]; ok {
		return r.errs, r.sd
	}
	s := newStayTrace(0, nil)
	st := s.stands[0]
	var idx []int
	for i := st[0]; i <= st[1]; i++ {
		idx = append(idx, i)
	}
	k := gp.Gram(gp.Matern12{Variance: 5000, Lengthscale: 60}, shift(s.ts[st[0]:st[1]+1]))
	errs, sd = placeRun(t, s, idx, k, []int{15*12 + 1, len(idx)}, seeds)
	if ouRuns.m == nil {
		ouRuns.m = map[int]ouRun{}
	}
	ouRuns.m[seeds] = ouRun{errs, sd}
	return errs, sd
}

type ouRun struct {
	errs [][]float64
	sd   []float64
}

var ouRuns struct {
	sync.Mutex
	m map[int]ouRun
}

// chi2Within reports whether the sum of squares of errs, over sd^2, lies
// between the 0.001 and 0.999 quantiles of a chi-square with len(errs)
// degrees of freedom, and returns the ratio of the empirical to the
// stated variance.
func chi2Within(errs []float64, sd float64) (bool, float64) {
	q := 0.0
	for _, e := range errs {
		q += e * e / (sd * sd)
	}
	c := distuv.ChiSquared{K: float64(len(errs))}
	return q >= c.Quantile(0.001) && q <= c.Quantile(0.999), q / float64(len(errs))
}

// The place adversary on a 60-minute stay (5 s sampling, found by Stays
// in a trace with movement) under Ornstein-Uhlenbeck noise of 5000 m^2 per
// coordinate (per-point planar RMS 100 m) and lengthscale 60 s: its stated
// SD matches the AR(1) closed form, its errors over 40 seeds (80
// coordinates) are N(0, SD^2) within the chi-square's 0.001-0.999
// quantiles, and it beats the per-point RMS by the expected factor
// sqrt(2 s2) / (sqrt 2 SD) = 5.6, measured above 4.
func TestAttackPlaceMatchesTheory(t *testing.T) {
	s := newStayTrace(0, nil)
	stays, err := Stays(s.points(), StayOptions{})
	if err != nil || len(stays) != 2 {
		t.Fatalf("stays %+v, %v", stays, err)
	}
	st := stays[0]
	idx := make([]int, 0, st.Points())
	for i := st.Start; i <= st.End; i++ {
		idx = append(idx, i)
	}
	const s2, l = 5000.0, 60.0
	if st.Start != s.stands[0][0] || st.End != s.stands[0][1] {
		t.Fatalf("stay %d-%d found, the trace stands still at %v", st.Start, st.End, s.stands[0])
	}
	seeds := 40
	if testing.Short() {
		seeds = 15
	}
	errs, sd := ouPlaceRun(t, seeds)
	errs, sd = errs[1:], sd[1:] // the whole stay
	want := 1 / math.Sqrt(ouInfo(s2, l, 5, len(idx)))
	if math.Abs(sd[0]/want-1) > 1e-8 {
		t.Errorf("stated SD %.6f m, closed form %.6f m", sd[0], want)
	}
	ok, ratio := chi2Within(errs[0], want)
	if !ok {
		t.Errorf("empirical variance %.3f x the theoretical over %d coordinates: outside the chi-square 0.001-0.999 band", ratio, len(errs[0]))
	}
	rmsPlanar := 0.0
	for _, e := range errs[0] {
		rmsPlanar += e * e
	}
	rmsPlanar = math.Sqrt(2 * rmsPlanar / float64(len(errs[0])))
	perPoint := math.Sqrt(2 * s2)
	if !(rmsPlanar < perPoint/4) {
		t.Errorf("planar RMS error %.1f m, per-point noise RMS %.1f m: want a factor above 4 (theory %.1f)", rmsPlanar, perPoint, perPoint/(math.Sqrt2*want))
	}
	t.Logf("60-min stay, %d points: stated SD %.2f m per coordinate (closed form %.2f), empirical/theory variance %.2f, planar RMS %.1f m vs per-point %.0f m",
		len(idx), sd[0], want, ratio, rmsPlanar, perPoint)
}

// Negative control: noise with a common offset (the same displacement of
// every point, standard deviation 70.7 m per coordinate, added to the
// Ornstein-Uhlenbeck noise above) cannot be averaged away, so the place
// error must not shrink from a 15- to a 60-minute stay, while without the
// offset it halves. The stated SD obeys Sherman-Morrison exactly:
// SD^2 = c^2 + 1 / 1^T K^-1 1. Both stays share each draw of the noise
// (the 15-minute one is the first quarter of the hour), so the offset is
// common to them.
func TestAttackPlaceCommonOffsetControl(t *testing.T) {
	s := newStayTrace(0, nil)
	st := s.stands[0]
	var idx []int
	for i := st[0]; i <= st[1]; i++ {
		idx = append(idx, i)
	}
	const s2, l, c2 = 5000.0, 60.0, 5000.0
	ts := shift(s.ts[st[0] : st[1]+1])
	k := gp.Gram(gp.Matern12{Variance: s2, Lengthscale: l}, ts)
	koff := mat.NewSymDense(len(ts), nil)
	for i := range ts {
		for j := i; j < len(ts); j++ {
			koff.SetSym(i, j, k.At(i, j)+c2)
		}
	}
	ms := []int{15*12 + 1, len(idx)}
	seeds := 40
	if testing.Short() {
		seeds = 15
	}
	rms := func(e []float64) float64 {
		q := 0.0
		for _, v := range e {
			q += v * v
		}
		return math.Sqrt(q / float64(len(e)))
	}
	plain, sdPlain := ouPlaceRun(t, seeds)
	off, sdOff := placeRun(t, s, idx, koff, ms, seeds)
	for a, m := range ms {
		want := math.Sqrt(c2 + 1/ouInfo(s2, l, 5, m))
		if math.Abs(sdOff[a]/want-1) > 1e-6 {
			t.Errorf("%d points with offset: stated SD %.6f, Sherman-Morrison %.6f", m, sdOff[a], want)
		}
		if ok, r := chi2Within(off[a], want); !ok {
			t.Errorf("%d points with offset: empirical variance %.3f x the stated", m, r)
		}
	}
	shrinkPlain := rms(plain[1]) / rms(plain[0])
	shrinkOff := rms(off[1]) / rms(off[0])
	t.Logf("RMS error per coordinate, 15 -> 60 min: no offset %.1f -> %.1f m (x%.2f; theory x%.2f), common offset %.1f -> %.1f m (x%.2f; theory x%.2f)",
		rms(plain[0]), rms(plain[1]), shrinkPlain, sdPlain[1]/sdPlain[0], rms(off[0]), rms(off[1]), shrinkOff, sdOff[1]/sdOff[0])
	// Theory: x0.52 without offset, x0.96 with it; the shared draws keep
	// the measured ratios within a few per cent of these.
	if !(shrinkPlain < 0.7) {
		t.Errorf("without offset the error shrank only x%.2f from 15 to 60 minutes (theory x0.52)", shrinkPlain)
	}
	if !(shrinkOff > 0.85) {
		t.Errorf("with a common offset the error shrank x%.2f from 15 to 60 minutes; it cannot (theory x0.96)", shrinkOff)
	}
	if r := rms(off[1]); r < 0.7*math.Sqrt(c2) {
		t.Errorf("with a common offset of %.1f m the 60-minute error is %.1f m", math.Sqrt(c2), r)
	}
}

// Subsampling keeps the first and last points and spreads the rest.
func TestAttackEvenSubset(t *testing.T) {
	if got := evenSubset(5, 10); len(got) != 5 || got[4] != 4 {
		t.Errorf("evenSubset(5, 10) = %v", got)
	}
	got := evenSubset(1001, 11)
	for i, v := range got {
		if v != 100*i {
			t.Fatalf("evenSubset(1001, 11) = %v", got)
		}
	}
}

// shift returns ts minus its first value.
func shift(ts []float64) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t - ts[0]
	}
	return out
}
