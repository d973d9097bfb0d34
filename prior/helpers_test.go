package prior

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

var (
	testOrigin = geo.Point{Lat: 39.98, Lon: 116.32}
	testStart  = time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
)

// newRand is the seeded generator of the tests.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// sampleGP draws one series of N(0, Gram(k, ts) + noise I) through an
// explicit Cholesky factor.
func sampleGP(t *testing.T, k gp.Kernel, ts []float64, noise float64, rng *rand.Rand) []float64 {
	t.Helper()
	g := gp.Gram(k, ts)
	for i := range ts {
		g.SetSym(i, i, g.At(i, i)+noise)
	}
	f, err := gp.Factorize(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	var l mat.TriDense
	f.Cholesky().LTo(&l)
	z := mat.NewVecDense(len(ts), nil)
	for i := range ts {
		z.SetVec(i, rng.NormFloat64())
	}
	var y mat.VecDense
	y.MulVec(&l, z)
	return append([]float64(nil), y.RawVector().Data...)
}

// enuTrace builds a trace from times (seconds after testStart) and
// east/north metres around testOrigin.
func enuTrace(uid string, ts, east, north []float64) *trace.Trace {
	enu := geo.NewENU(testOrigin)
	tr := &trace.Trace{UID: uid}
	for i, s := range ts {
		p := enu.Inverse(east[i], north[i])
		tr.Points = append(tr.Points, trace.Point{
			Time: testStart.Add(time.Duration(math.Round(s * 1e9))),
			Lat:  p.Lat, Lon: p.Lon, Alt: math.NaN(),
		})
	}
	return tr
}

// walkTrace is a trace at the given times moving on a smooth curve, for
// windowing tests where the positions do not matter.
func walkTrace(ts []float64) *trace.Trace {
	e, n := make([]float64, len(ts)), make([]float64, len(ts))
	for i, s := range ts {
		e[i], n[i] = 1.2*s+20*math.Sin(s/40), 0.8*s+15*math.Cos(s/55)
	}
	return enuTrace("walk", ts, e, n)
}

// regular returns n times from start every step seconds.
func regular(start, step float64, n int) []float64 {
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = start + float64(i)*step
	}
	return ts
}

// gpTraces simulates m independent traces at the given times (seconds
// after testStart), each coordinate an RBF GP of standard deviation sd
// metres and lengthscale ls seconds plus white noise of the paper's
// relative nugget, 0.0025 sd^2.
func gpTraces(t *testing.T, m int, ts []float64, sd, ls float64, seed uint64) []*trace.Trace {
	t.Helper()
	return gpTracesNoise(t, m, ts, sd, ls, 0.0025*sd*sd, seed)
}

// gpTracesNoise is gpTraces with white noise of the given variance (m^2).
func gpTracesNoise(t *testing.T, m int, ts []float64, sd, ls, noise float64, seed uint64) []*trace.Trace {
	t.Helper()
	rng := newRand(seed)
	k := gp.RBF{Variance: sd * sd, Lengthscale: ls}
	out := make([]*trace.Trace, m)
	for i := range out {
		e := sampleGP(t, k, ts, noise, rng)
		n := sampleGP(t, k, ts, noise, rng)
		out[i] = enuTrace("sim", ts, e, n)
	}
	return out
}

// checkAccounting verifies that the report accounts for every point and
// every candidate window.
func checkAccounting(t *testing.T, rep *Report) {
	t.Helper()
	if got := rep.PointsFitted + rep.PointsThinned + rep.PointsSkipped; got != rep.Points {
		t.Errorf("fitted %d + thinned %d + skipped %d = %d, want %d points", rep.PointsFitted, rep.PointsThinned, rep.PointsSkipped, got, rep.Points)
	}
	skipped := 0
	for _, v := range rep.Skipped {
		skipped += v
	}
	if rep.Windows+skipped != rep.Candidates {
		t.Errorf("windows %d + skipped %d != candidates %d (%v)", rep.Windows, skipped, rep.Candidates, rep.Skipped)
	}
}

// isParam reports whether err is a *param.Error named name.
func isParam(err error, name string) bool {
	var pe *param.Error
	return errors.As(err, &pe) && pe.Name == name
}
