package geoind

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

// BenchmarkStep measures one predictive step (test + possible noise) with
// the secure and the seeded source.
func BenchmarkStep(b *testing.B) {
	for _, c := range []struct {
		name string
		src  noise.Source
	}{{"secure", noise.Secure()}, {"seeded", noise.Seeded(1)}} {
		b.Run(c.name, func(b *testing.B) {
			m := &Mechanism{
				Manager: FixedUtility{Params: Params{Epsilon: 1e9}, Accuracy: 3000},
				Noise:   PlanarLaplace{Grid: 1},
			}
			st, err := m.Step(nil, Vec{}, time.Unix(0, 0), c.src)
			if err != nil {
				b.Fatal(err)
			}
			r := Run{st}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.Step(r, Vec{X: float64(i % 5000)}, time.Unix(60, 0), c.src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkSessionQuery measures a query on a session with a 30-step run
// (the Lemma 2 replay is only done on Resume, not per query).
func BenchmarkSessionQuery(b *testing.B) {
	cfg := Config{Manager: "fixed-rate", Params: Params{Epsilon: 1e9, PR0: 0.5}, Rate: 1e-3,
		Origin: geo.Point{Lat: 39.9, Lon: 116.4}, Noise: PlanarLaplace{Grid: 1}}
	s, err := NewSession(cfg, noise.Secure())
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Unix(1.2e9, 0)
	for i := range 30 {
		if _, err := s.Query(geo.Point{Lat: 39.98, Lon: 116.32}, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := s.State()
		s2, err := Resume(st, noise.Secure())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s2.Query(geo.Point{Lat: 39.98, Lon: 116.32}, t0.Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateFileQuery measures a sealed, durable query on a 30-step
// state: lock, key, record and MAC checks, the Lemma 2 replay, and two
// fsynced atomic writes (state, then record).
func BenchmarkStateFileQuery(b *testing.B) {
	dir := b.TempDir()
	f := StateFile{Path: filepath.Join(dir, "s.json"), KeyDir: filepath.Join(dir, "keys")}
	cfg := Config{Manager: "fixed-rate", Params: Params{Epsilon: 1e9, PR0: 0.5}, Rate: 1e-3,
		Origin: geo.Point{Lat: 39.9, Lon: 116.4}, Noise: PlanarLaplace{Grid: 1}}
	t0 := time.Unix(1.2e9, 0)
	p := geo.Point{Lat: 39.98, Lon: 116.32}
	for i := range 30 {
		if _, err := f.Query(&cfg, p, t0.Add(time.Duration(i)*time.Minute), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Query(nil, p, t0.Add(time.Hour), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRelease measures one planar Laplace release on a 1 m grid with
// the seeded source: what a trace's release pays per fix.
func BenchmarkRelease(b *testing.B) {
	m, src := PlanarLaplace{Grid: 1}, noise.Seeded(1)
	for i := 0; b.Loop(); i++ {
		if _, err := m.Release(Vec{X: float64(i % 5000)}, 0.01, src); err != nil {
			b.Fatal(err)
		}
	}
}
