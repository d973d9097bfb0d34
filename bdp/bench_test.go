package bdp

import "testing"

var sink float64

func BenchmarkGaussianTau(b *testing.B) {
	g := Gaussian{M: 3, Rho: 0.275}
	for b.Loop() {
		sink, _ = g.Tau(1)
	}
}

func BenchmarkBestOf(b *testing.B) {
	models := []Calibrator{Groups{M: 288}, Markov{Gamma: 4.49}}
	for b.Loop() {
		c, _ := BestOf(20, models...)
		sink = c.Tau
	}
}

func BenchmarkNewMarkov(b *testing.B) {
	p := [][]float64{{0.818, 0.182}, {0.371, 0.629}}
	for b.Loop() {
		m, _ := NewMarkov(p, 1e-9)
		sink = m.Gamma
	}
}
