package sanitize

import (
	"math"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

var t0 = time.Date(2008, 10, 24, 2, 9, 59, 0, time.UTC)

// walk returns an n-point trace sampled every few seconds (irregularly),
// heading east from a point in Beijing.
func walk(n int, lat, lon float64) *trace.Trace {
	t := &trace.Trace{UID: "u", Name: "walk"}
	at := t0
	for i := range n {
		at = at.Add(time.Duration(1+i%4) * time.Second)
		p := geo.Destination(geo.Point{Lat: lat, Lon: lon}, 80, 1.4*float64(i)*2.5)
		t.Points = append(t.Points, trace.Point{Time: at, Lat: p.Lat, Lon: p.Lon, Alt: 50})
	}
	return t
}

func testPrior() *gp.Prior {
	return &gp.Prior{Version: gp.PriorVersion, Kernel: "rbf", Variance: 200 * 200, Lengthscale: 20}
}

func options() Options {
	origin := geo.Point{Lat: 39.95, Lon: 116.35}
	return Options{Prior: testPrior(), Epsilon: 1, Lambda: 2, Radius: 50, Origin: &origin, Source: noise.Seeded(7)}
}

// The certificate's epsilon is an independent (E1) evaluation of the noise
// designed, meets the target, and is tight (the design is least-noise).
func TestCertificateOneSecret(t *testing.T) {
	tr := walk(40, 39.98, 116.30)
	opt := options()
	opt.Secrets = [][]time.Time{{tr.Points[17].Time}}
	out, cert, err := Trace(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Method != "optimal-e2" || len(cert.Secrets) != 1 || cert.Secrets[0].Indices[0] != 17 {
		t.Fatalf("certificate %+v", cert)
	}
	d, err := Design(secondsOf(t, tr), []cip.Secret{cip.Basic(17)}, opt)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := cip.LossFactorDirect(d.Sigma, d.SigmaG, cip.Basic(17))
	if err != nil {
		t.Fatal(err)
	}
	eps := cip.Epsilon(direct, 2, 50, 1)
	if math.Abs(eps-cert.EpsilonMax) > 1e-6*eps {
		t.Errorf("certificate epsilon %v, independent (E1) %v", cert.EpsilonMax, eps)
	}
	if cert.EpsilonMax > 1 || cert.EpsilonMax < 1-1e-6 {
		t.Errorf("epsilon %v, want the target 1 (met, and tight)", cert.EpsilonMax)
	}
	if want, _ := cip.PriorPosteriorGap(cert.EpsilonMax, 2, 1e-5); math.Abs(cert.GapMax-want) > 1e-12 {
		t.Errorf("gap %v, want %v", cert.GapMax, want)
	}
	checkRelease(t, tr, out)
	if cert.Randomness != "seeded:7" || !cert.OriginPublic {
		t.Errorf("randomness %q, origin public %v", cert.Randomness, cert.OriginPublic)
	}
}

// Every point a basic secret: each certified epsilon meets the target and
// matches a literal (E1) evaluation.
func TestCertificateAllPoints(t *testing.T) {
	tr := walk(60, 39.98, 116.30)
	opt := options()
	out, cert, err := Trace(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Secrets) != 60 || cert.SecretsSpec != "all" {
		t.Fatalf("%d secrets, spec %q", len(cert.Secrets), cert.SecretsSpec)
	}
	d, err := Design(secondsOf(t, tr), cip.EveryPoint(60), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 29, 59} {
		direct, err := cip.LossFactorDirect(d.Sigma, d.SigmaG, cip.Basic(i))
		if err != nil {
			t.Fatal(err)
		}
		got := cert.Secrets[i].Epsilon
		if e := cip.Epsilon(direct, 2, 50, 1); math.Abs(e-got) > 1e-6*e || got > 1+1e-9 {
			t.Errorf("point %d: certificate epsilon %v, literal (E1) %v, target 1", i, got, e)
		}
	}
	if math.Abs(cert.NoiseBudgetM2-mat.Trace(d.SigmaG)) > 1e-9*cert.NoiseBudgetM2 {
		t.Errorf("budget %v, design %v", cert.NoiseBudgetM2, mat.Trace(d.SigmaG))
	}
	checkRelease(t, tr, out)
}

// The noise does not depend on the coordinates: two traces with the same
// timestamps and different positions get the same metric displacement from
// the same seeded source.
func TestNoiseIndependentOfCoordinates(t *testing.T) {
	a, b := walk(30, 39.98, 116.30), walk(30, 39.99, 116.32)
	for i := range b.Points {
		b.Points[i].Lat += 0.001 * math.Sin(float64(i))
	}
	opt := options()
	oa, _, err := Trace(a, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Source = noise.Seeded(7)
	ob, _, err := Trace(b, opt)
	if err != nil {
		t.Fatal(err)
	}
	enu := geo.NewENU(*opt.Origin)
	for i := range a.Points {
		ae, an := displacement(enu, a.Points[i], oa.Points[i])
		be, bn := displacement(enu, b.Points[i], ob.Points[i])
		// The snapping lattice is far below a millimetre.
		if math.Abs(ae-be) > 1e-3 || math.Abs(an-bn) > 1e-3 {
			t.Fatalf("point %d: noise (%v, %v) vs (%v, %v)", i, ae, an, be, bn)
		}
	}
}

// The noise actually added has the certified covariance: the empirical
// covariance of many releases of one short trace matches SigmaG (each
// entry within 5 standard errors).
func TestSampledCovariance(t *testing.T) {
	tr := walk(6, 39.98, 116.30)
	opt := options()
	opt.Source = noise.Seeded(11)
	d, err := Design(secondsOf(t, tr), cip.EveryPoint(6), opt)
	if err != nil {
		t.Fatal(err)
	}
	enu := geo.NewENU(*opt.Origin)
	const reps = 4000
	n := 6
	sum := mat.NewSymDense(n, nil)
	for range reps {
		out, _, err := Trace(tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		e := make([]float64, n)
		for i := range n {
			e[i], _ = displacement(enu, tr.Points[i], out.Points[i])
		}
		v := mat.NewVecDense(n, e)
		sum.SymRankOne(sum, 1, v)
	}
	for i := range n {
		for j := i; j < n; j++ {
			got := sum.At(i, j) / reps
			want := d.SigmaG.At(i, j)
			se := math.Sqrt((d.SigmaG.At(i, i)*d.SigmaG.At(j, j) + want*want) / reps)
			if math.Abs(got-want) > 5*se {
				t.Errorf("cov[%d,%d] = %v, SigmaG %v (se %v)", i, j, got, want, se)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	tr := walk(10, 39.98, 116.30)
	opt := options()
	opt.Secrets = [][]time.Time{{t0.Add(time.Hour)}}
	if _, _, err := Trace(tr, opt); err == nil || !strings.Contains(err.Error(), "not the time of a point") {
		t.Errorf("unknown secret time: %v", err)
	}
	opt = options()
	opt.Epsilon = 0
	if _, _, err := Trace(tr, opt); err == nil {
		t.Error("epsilon 0 accepted")
	}
	opt = options()
	opt.Prior = &gp.Prior{Version: 1, Kernel: "rbf", Variance: -1, Lengthscale: 3}
	if _, _, err := Trace(tr, opt); err == nil || !strings.Contains(err.Error(), "variance_m2") {
		t.Errorf("bad prior: %v", err)
	}
	dup := walk(5, 39.98, 116.30)
	dup.Points[3].Time = dup.Points[2].Time
	if _, _, err := Trace(dup, options()); err == nil {
		t.Error("repeated timestamp accepted")
	}
}

func checkRelease(t *testing.T, in, out *trace.Trace) {
	t.Helper()
	if out.Len() != in.Len() {
		t.Fatalf("%d points out, %d in", out.Len(), in.Len())
	}
	moved := 0
	for i := range in.Points {
		if !out.Points[i].Time.Equal(in.Points[i].Time) {
			t.Fatalf("point %d: time %v, want %v", i, out.Points[i].Time, in.Points[i].Time)
		}
		if !math.IsNaN(out.Points[i].Alt) || out.Points[i].Attrs != nil {
			t.Fatalf("point %d: altitude or attributes released", i)
		}
		if geo.Haversine(in.Points[i].Geo(), out.Points[i].Geo()) > 0.01 {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no point moved")
	}
}

func displacement(enu *geo.ENU, a, b trace.Point) (float64, float64) {
	ae, an := enu.Forward(a.Geo())
	be, bn := enu.Forward(b.Geo())
	return be - ae, bn - an
}

func secondsOf(t *testing.T, tr *trace.Trace) []float64 {
	t.Helper()
	ts, err := gp.Seconds(tr.Times())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
