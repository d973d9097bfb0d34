package accountant

import "testing"

var sink float64

// BenchmarkRDPEpsilon converts a composed curve on the default 156-order
// grid to ε at δ = 1e-5.
func BenchmarkRDPEpsilon(b *testing.B) {
	acc, _ := NewRDPAccountant(nil)
	_ = acc.Compose(Gaussian{Sigma: 40, Sensitivity: 1}, 1000)
	_ = acc.Compose(Laplace{Scale: 10, Sensitivity: 1}, 10)
	b.ResetTimer()
	for b.Loop() {
		e, _, _ := acc.Epsilon(1e-5)
		sink = e
	}
}

// BenchmarkRDPCompose adds a Laplace event (the costliest closed form) to
// the default grid.
func BenchmarkRDPCompose(b *testing.B) {
	acc, _ := NewRDPAccountant(nil)
	for b.Loop() {
		_ = acc.Compose(Laplace{Scale: 10, Sensitivity: 1}, 1)
	}
}

func BenchmarkGDPDelta(b *testing.B) {
	for b.Loop() {
		d, _ := GDPDelta(0.7, 2.5)
		sink = d
	}
}

func BenchmarkGDPEpsilon(b *testing.B) {
	for b.Loop() {
		e, _ := GDPEpsilon(0.7, 1e-5)
		sink = e
	}
}

func BenchmarkGaussianDelta(b *testing.B) {
	for b.Loop() {
		d, _ := GaussianDelta(10, 0.1, 1)
		sink = d
	}
}

func BenchmarkGaussianSigma(b *testing.B) {
	for b.Loop() {
		s, _ := GaussianSigma(0.1, 1e-5, 1)
		sink = s
	}
}

func BenchmarkZCDPEpsilon(b *testing.B) {
	for b.Loop() {
		e, _ := ZCDPEpsilon(1.0/32, 1e-3)
		sink = e
	}
}
