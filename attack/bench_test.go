package attack

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// benchPerson is a synthetic person of n points shaped like a GeoLife
// user: fixes every 1 to 5 s in trips of about 1,500 points, a gap of
// hours between trips, on a smooth path around Beijing.
func benchPerson(n int, seed uint64) []*trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 7))
	t0 := time.Date(2008, 10, 23, 0, 0, 0, 0, time.UTC)
	var out []*trace.Trace
	var tr *trace.Trace
	t := 0.0
	for i := range n {
		if i%1500 == 0 {
			t += 3600 * (2 + 10*rng.Float64())
			tr = &trace.Trace{UID: "bench", Name: fmt.Sprintf("trip%d", len(out))}
			out = append(out, tr)
		} else {
			t += float64(1 + rng.IntN(5))
		}
		lat := 39.98 + 0.02*math.Sin(t/5000) + 0.005*math.Sin(t/700)
		lon := 116.33 + 0.03*math.Cos(t/7000) + 0.004*math.Cos(t/900)
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(t * float64(time.Second))), Lat: lat, Lon: lon, Alt: math.NaN()})
	}
	return out
}

// benchRelease sanitises a person with the bundled prior (envelope design,
// linear method: the default release) and returns the original, the
// release, its certificate and the time the release took.
func benchRelease(b *testing.B, n int) ([]*trace.Trace, []*trace.Trace, *sanitize.Certificate, time.Duration) {
	b.Helper()
	prior, err := sample.Prior()
	if err != nil {
		b.Fatal(err)
	}
	orig := benchPerson(n, 1)
	start := time.Now()
	rel, cert, err := sanitize.Release(orig, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)})
	if err != nil {
		b.Fatal(err)
	}
	return orig, rel, cert, time.Since(start)
}

// BenchmarkAttackPerson attacks one person of 21,757 points (the issue's
// corpus user) from the certificate of their release, with the bundled
// prior family (Matérn 3/2, lengthscale searched) and the envelope noise
// of 19 Matérn components: the linear-time path. It reports the release's
// time beside it (sanitize_s, measured once in the same run) and the
// ratio; the goal is at most 30.
func BenchmarkAttackPerson(b *testing.B) {
	orig, rel, cert, rt := benchRelease(b, 21757)
	b.ResetTimer()
	var evals int
	for b.Loop() {
		rep, _, err := FromCertificate(cert, orig, rel, CertOptions{Places: PlaceOptions{Off: true}})
		if err != nil {
			b.Fatal(err)
		}
		evals = rep.Persons[0].Adversary.East.Evaluations + rep.Persons[0].Adversary.North.Evaluations
	}
	per := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(rt.Seconds(), "sanitize_s")
	b.ReportMetric(per/rt.Seconds(), "attack/sanitize")
	b.ReportMetric(float64(evals), "likelihoods")
}

// BenchmarkLikelihood is one restricted likelihood on the linear-time path
// (a Kalman filter pass over the release and the design's columns) at
// 21,757 and 10^6 points, with the 19-component envelope noise of the
// bundled prior: the unit of the attack's search.
func BenchmarkLikelihood(b *testing.B) {
	for _, n := range []int{21757, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			lik, _ := benchLik(b, n)
			f, err := lik.at(2000)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := f(1e5); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(n)*1e9, "ns/point")
		})
	}
}

// BenchmarkReconstructMillion runs the adversary of the bundled prior's
// family (lengthscale and variance searched, linear mean, guard) on one
// dimension of 10^6 points with the envelope noise: the issue asks for
// minutes.
func BenchmarkReconstructMillion(b *testing.B) {
	const n = 1_000_000
	lik, z := benchLik(b, n)
	g := &noiseLaw{ts: lik.ts, terms: lik.noise, white: lik.white}
	prior, err := sample.Prior()
	if err != nil {
		b.Fatal(err)
	}
	adv := Adversary{Family: prior.Family(), Nugget: 0}
	var evals int
	for b.Loop() {
		est, err := reconstruct(lik.ts, z, g, adv)
		if err != nil {
			b.Fatal(err)
		}
		evals = est.Fit.Evaluations
	}
	b.ReportMetric(float64(evals), "likelihoods")
}

// benchLik returns the linear-time likelihood of a synthetic release of n
// points (benchPerson's times, the noise of the bundled prior's envelope
// at epsilon 1, r = 100 m) and its east values.
func benchLik(b *testing.B, n int) (*ssLik, []float64) {
	b.Helper()
	_, _, cert, _ := benchRelease(b, 2000)
	pc := cert.Persons[0]
	pts := benchPerson(n, 2)
	var ts, z []float64
	t0 := pts[0].Points[0].Time
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tr := range pts {
		for _, p := range tr.Points {
			t := p.Time.Sub(t0).Seconds()
			ts = append(ts, t)
			z = append(z, 2000*math.Sin(t/3000)+300*rng.NormFloat64())
		}
	}
	g, err := certNoise(cert, pc, ts, false, cert.OutputGridM*cert.OutputGridM/12)
	if err != nil {
		b.Fatal(err)
	}
	prior, err := sample.Prior()
	if err != nil {
		b.Fatal(err)
	}
	d, err := newDesign(ts, MeanLinear)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d points, %d noise components", n, len(g.terms))
	return newSSLik(ts, z, d, prior.Family(), g), z
}
