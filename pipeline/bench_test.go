package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// benchRelease runs one release per iteration, single machine or pipeline,
// into a fresh directory, and reports points per second.
func benchRelease(b *testing.B, pattern, root string, points int, single bool) {
	b.Helper()
	for b.Loop() {
		b.StopTimer()
		out, err := os.MkdirTemp("", "tracepriv-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if single {
			singleMachine(b, root, out, 1)
		} else {
			res, err := Sanitize(context.Background(), testOptions(pattern, out, 1))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(res.Bundles), "bundles")
		}
		b.StopTimer()
		os.RemoveAll(out)
		b.StartTimer()
	}
	b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

// BenchmarkGeoLife releases the GeoLife excerpt (8 people, 78 files,
// 107,576 points) on one machine (sanitize.Corpus, as `tracepriv sanitize
// --in DIR`) and with the pipeline on Prism, side by side; the issue's goal
// is the pipeline within 2x of the single machine. Run with
// -benchtime=1x or a few x: each iteration is a whole release.
func BenchmarkGeoLife(b *testing.B) {
	root := geolife(b)
	b.Run("single", func(b *testing.B) { benchRelease(b, "", root, 107576, true) })
	b.Run("prism", func(b *testing.B) { benchRelease(b, filepath.Join(root, "**", "*.plt"), root, 107576, false) })
}

// BenchmarkSynthetic releases a synthetic corpus of TRACEPRIV_SYNTH_PEOPLE
// people (default 1,000) of 1,000 points each, one PLT file per person in
// GeoLife's layout, with the pipeline on Prism and on one machine. The
// issue's goal is 10,000 people (10^7 points) in under 10 minutes on
// Prism: TRACEPRIV_SYNTH_PEOPLE=10000 go test -run '^$' -bench
// Synthetic/prism -benchtime=1x -timeout 2h. Generating the corpus is not
// timed.
func BenchmarkSynthetic(b *testing.B) {
	people := 1000
	if s := os.Getenv("TRACEPRIV_SYNTH_PEOPLE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("TRACEPRIV_SYNTH_PEOPLE=%q: want a positive number", s)
		}
		people = n
	}
	const perPerson = 1000
	root := filepath.Join(b.TempDir(), "corpus")
	start := time.Now()
	if err := writeSynthetic(root, people, perPerson); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d people x %d points in %.1f s", people, perPerson, time.Since(start).Seconds())
	b.Run("prism", func(b *testing.B) {
		benchRelease(b, filepath.Join(root, "**", "*.plt"), root, people*perPerson, false)
	})
	b.Run("single", func(b *testing.B) { benchRelease(b, "", root, people*perPerson, true) })
}

// writeSynthetic writes people traces of n points each under root, as
// root/pNNNNN/Trajectory/trace.plt: walks at 5 s sampling whose velocity
// is a smooth random process, starting within a few kilometres of the
// bundled prior's origin (Beijing).
func writeSynthetic(root string, people, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2008, 10, 23, 2, 0, 0, 0, time.UTC)
	for p := range people {
		lat := 39.9781 + (rng.Float64()-0.5)*0.08
		lon := 116.3268 + (rng.Float64()-0.5)*0.1
		ve, vn := 0.0, 0.0
		tr := &trace.Trace{Points: make([]trace.Point, n)}
		start := t0.Add(time.Duration(rng.IntN(86400)) * time.Second)
		for i := range n {
			// Velocity in m/s, AR(1) with a 1-minute memory.
			ve = 0.92*ve + rng.NormFloat64()*0.6
			vn = 0.92*vn + rng.NormFloat64()*0.6
			lat += vn * 5 / 111320
			lon += ve * 5 / (111320 * math.Cos(lat*math.Pi/180))
			tr.Points[i] = trace.Point{Time: start.Add(time.Duration(5*i) * time.Second), Lat: lat, Lon: lon, Alt: math.NaN()}
		}
		path := filepath.Join(root, fmt.Sprintf("p%05d", p), "Trajectory", "trace.plt")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := trace.WriteFile(path, []*trace.Trace{tr}, trace.PLT); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkReleaseGeoLife releases a trajectory database from the GeoLife
// excerpt (prefix tree, 1 km cells over Beijing) on one machine
// (trajdb.FromFiles, Bound, Prefix.Release, as `tracepriv release`) and
// with the pipeline on Prism, side by side. No goal: it shows what the
// runner costs a job whose work is small.
func BenchmarkReleaseGeoLife(b *testing.B) {
	root := geolife(b)
	for _, side := range []string{"single", "prism"} {
		b.Run(side, func(b *testing.B) {
			for b.Loop() {
				out := b.TempDir()
				o := testRelease(filepath.Join(root, "**", "*.plt"), out, "prefix", 1)
				if side == "single" {
					singleRelease(b, root, out, o)
				} else if _, err := Synthesize(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
