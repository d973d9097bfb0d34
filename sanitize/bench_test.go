package sanitize

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// benchTrace returns the first n points of a real GeoLife trace (user 000,
// 1,477 fixes at 1-5 s), or skips when the data set is not beside the
// repository.
func benchTrace(b *testing.B, n int) *trace.Trace {
	path := "../../shared/data/geolife/000/20081028003826.plt"
	if _, err := os.Stat(path); err != nil {
		b.Skip("GeoLife data not found:", err)
	}
	ts, _, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	t := ts[0]
	t.Points = t.Points[:n]
	return t
}

func bundledPrior(b *testing.B) *prior.Prior {
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		b.Fatal(err)
	}
	return pr
}

// BenchmarkTrace1000 sanitises a 2-D GeoLife trace of 1,000 points, every
// point a secret, against the bundled prior family, end to end (design,
// certificate, exact sampling) with the secure source.
func BenchmarkTrace1000(b *testing.B) {
	t := benchTrace(b, 1000)
	opt := Options{Prior: bundledPrior(b), Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Secure()}
	for b.Loop() {
		if _, _, err := Trace(t, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoiseCost compares, on one 1,000-point GeoLife trace and the
// same target (epsilon 1, lambda 2, r = 100 m), the noise of the default
// release (the bundled family; points, places and route) with the same
// family protecting places against members of every lengthscale
// (PlacesEveryLength), with the same family protecting points only, with
// the per-point design against the
// short RBF family earlier versions bundled (8.6-35.3 s, which left places
// exposed), and with a single prior at the bundled nominal member. It
// reports the RMS displacement per point of each, and the epsilon of
// places against members shorter than the stay the release states
// (places.shorter_members; 0 when the places class covers them or places
// are not protected).
func BenchmarkNoiseCost(b *testing.B) {
	t := benchTrace(b, 1000)
	fam := bundledPrior(b)
	old := &prior.Prior{Version: 2, Kernel: gp.KernelRBF, Variance: 182.7, Lengthscale: 18.02, LengthscaleMin: 8.635, LengthscaleMax: 35.29, Origin: fam.Origin}
	single := &prior.Prior{Version: 2, Kernel: fam.Kernel, Variance: fam.Variance, Lengthscale: fam.Lengthscale, LengthscaleMin: fam.Lengthscale, LengthscaleMax: fam.Lengthscale, Origin: fam.Origin}
	for _, c := range []struct {
		name              string
		prior             *prior.Prior
		pointsOnly, every bool
	}{{"family-classes", fam, false, false}, {"family-classes-places-every-length", fam, false, true}, {"family-points-only", fam, true, false},
		{"old-rbf-family-points-only", old, true, false}, {"single-nominal-points-only", single, true, false}} {
		b.Run(c.name, func(b *testing.B) {
			opt := Options{Prior: c.prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Secure(), PointsOnly: c.pointsOnly, PlacesEveryLength: c.every}
			var rms, shorter float64
			for b.Loop() {
				_, cert, err := Trace(t, opt)
				if err != nil {
					b.Fatal(err)
				}
				rms = cert.Persons[0].RMSNoiseM
				if sm := cert.SecretClasses.Places.ShorterMembers; sm != nil {
					shorter = sm.Epsilon
				}
			}
			b.ReportMetric(rms, "rms_m")
			// The places epsilon the release states against members
			// shorter than the stay (0: covered, or places not protected).
			b.ReportMetric(shorter, "shorter_eps")
		})
	}
}

// synthTrace is an n-point 2-D trace at irregular 1-5 s sampling in
// Beijing (a deterministic pseudo-random walk).
func synthTrace(n int) *trace.Trace {
	t := walk(0, 0, 0)
	t.Points = make([]trace.Point, n)
	at, lat, lon := t0, 39.98, 116.32
	x := uint64(88172645463325252)
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		at = at.Add(time.Duration(1+x%5) * time.Second)
		lat += float64(int64(x>>40)%200-100) * 1e-7
		lon += float64(int64(x>>20)%200-100) * 1e-7
		t.Points[i] = trace.Point{Time: at, Lat: lat, Lon: lon, Alt: math.NaN()}
	}
	return t
}

// BenchmarkPaths compares the dense and linear paths side by side on the
// same traces (every point a secret, epsilon 1, lambda 2, r = 100 m):
// the bundled family (the same envelope kernel on both paths) and a
// single-lengthscale RBF prior (exact proportional noise on the dense
// path, the 1.07x state-space envelope on the linear one). It reports the
// RMS displacement per point and the certified epsilon.
func BenchmarkPaths(b *testing.B) {
	fam := bundledPrior(b)
	// One member of the bundled family, stated as a family of one.
	single := prior.Prior{Version: 2, Kernel: fam.Kernel, Variance: fam.Variance, Lengthscale: fam.Lengthscale, LengthscaleMin: fam.Lengthscale, LengthscaleMax: fam.Lengthscale, Origin: fam.Origin}
	for _, n := range []int{1000, 3000} {
		t := synthTrace(n)
		for _, pr := range []struct {
			name string
			p    *prior.Prior
		}{{"family", fam}, {"single", &single}} {
			for _, m := range []Path{PathDense, PathLinear} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, pr.name, m), func(b *testing.B) {
					opt := Options{Prior: pr.p, Epsilon: 1, Lambda: 2, Radius: 100, Path: m, Source: noise.Secure()}
					// Warm the envelope cache: its linear program runs once
					// per family and is not what this compares.
					if _, _, err := Trace(synthTrace(10), opt); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					var c *Certificate
					for b.Loop() {
						var err error
						if _, c, err = Trace(t, opt); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(c.Persons[0].RMSNoiseM, "rms_m")
					b.ReportMetric(c.EpsilonMax, "epsilon")
				})
			}
		}
	}
}

// BenchmarkLinear is the linear path at 10^4, 10^5 and 10^6 points.
func BenchmarkLinear(b *testing.B) {
	fam := bundledPrior(b)
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		t := synthTrace(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			opt := Options{Prior: fam, Epsilon: 1, Lambda: 2, Radius: 100, Path: PathLinear, Source: noise.Secure()}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Trace(t, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCorpusGeoLife releases the whole ../shared/data/geolife corpus
// (8 people, 107,576 points) with the bundled prior.
func BenchmarkCorpusGeoLife(b *testing.B) {
	in := "../../shared/data/geolife"
	if _, err := os.Stat(in); err != nil {
		b.Skip("GeoLife data not found:", err)
	}
	for b.Loop() {
		out := b.TempDir()
		m, err := Corpus(CorpusOptions{In: in, Out: out, Read: trace.ReadOptions{},
			// The bundled prior was fitted on users 001-007 (allowed here,
			// and their certificates say not covered).
			Release: Options{Prior: bundledPrior(b), Epsilon: 1, Lambda: 2, Radius: 100, Workers: 1, AllowPriorOverlap: true}})
		if err != nil || len(m.Failed) > 0 {
			b.Fatal(err, m.Failed)
		}
	}
}
