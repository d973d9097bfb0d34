package noise

import (
	"testing"
)

// sources returns the two sources every sampler benchmark compares.
func benchSources() []struct {
	name string
	src  func() Source
} {
	return []struct {
		name string
		src  func() Source
	}{
		{"secure", Secure},
		{"seeded", func() Source { return Seeded(1) }},
	}
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

var sink float64

func BenchmarkLaplace(b *testing.B) {
	for _, s := range benchSources() {
		b.Run(s.name, func(b *testing.B) {
			l := Laplace{Epsilon: 1, Sensitivity: 1, Src: s.src()}
			for b.Loop() {
				sink += l.Add(3)
			}
			reportRate(b)
		})
	}
}

func BenchmarkGaussian(b *testing.B) {
	for _, s := range benchSources() {
		b.Run(s.name, func(b *testing.B) {
			g := Gaussian{Sigma: 1, Src: s.src()}
			for b.Loop() {
				sink += g.Add(3)
			}
			reportRate(b)
		})
	}
}

func BenchmarkPlanarLaplace(b *testing.B) {
	for _, s := range benchSources() {
		b.Run(s.name, func(b *testing.B) {
			p := PlanarLaplace{Epsilon: 0.01, Src: s.src()}
			for b.Loop() {
				dx, dy := p.Rand()
				sink += dx + dy
			}
			reportRate(b)
		})
	}
}

// BenchmarkMultiNormal50 draws 50-dimensional vectors for a full-rank
// covariance (RBF with a nugget); one sample is one vector.
func BenchmarkMultiNormal50(b *testing.B) {
	cov := rbf(50, 3)
	for i := range 50 {
		cov.SetSym(i, i, cov.At(i, i)+0.01)
	}
	mn, err := NewMultiNormal(cov)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range benchSources() {
		b.Run(s.name, func(b *testing.B) {
			src := s.src()
			dst := make([]float64, 50)
			for b.Loop() {
				mn.Rand(dst, src)
			}
			sink += dst[0]
			reportRate(b)
		})
	}
}
