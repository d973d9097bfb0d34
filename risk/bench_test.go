package risk

import (
	"testing"

	"github.com/tracepriv/tracepriv/accountant"
)

var sink float64

func BenchmarkGRR(b *testing.B) {
	for b.Loop() {
		sink, _ = GRR(2, 3052)
	}
}

func BenchmarkOUE(b *testing.B) {
	for b.Loop() {
		sink, _ = OUE(2, 3052)
	}
}

func BenchmarkLaplaceUnitRange(b *testing.B) {
	for b.Loop() {
		sink, _ = LaplaceUnitRange(2, 11)
	}
}

func BenchmarkGaussianUnitRange(b *testing.B) {
	for b.Loop() {
		sink, _ = GaussianUnitRange(0.5, 11)
	}
}

func BenchmarkDPSGD(b *testing.B) {
	for b.Loop() {
		sink, _ = DPSGD(22, 100, 10)
	}
}

func BenchmarkTheorem515(b *testing.B) {
	prior := []float64{0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.04, 0.03, 0.02, 0.01}
	for b.Loop() {
		sink, _, _ = EpsDeltaPrior(1, 1e-5, prior)
	}
}

func BenchmarkFDPBoundDiscreteLaplace(b *testing.B) {
	for b.Loop() {
		sink = FDPBoundDiscrete(accountant.LaplaceTradeOff{Epsilon: 2}, 0.1, 0.1)
	}
}

func BenchmarkCalibrateGRR(b *testing.B) {
	for b.Loop() {
		sink, _ = CalibrateGRR(0.1, 100)
	}
}

func BenchmarkCalibrateLaplace(b *testing.B) {
	for b.Loop() {
		sink, _ = CalibrateLaplace(0.1, 10)
	}
}

func BenchmarkCalibrateGaussian(b *testing.B) {
	for b.Loop() {
		sink, _ = CalibrateGaussian(0.1, 10)
	}
}

func BenchmarkCalibrateOUE(b *testing.B) {
	for b.Loop() {
		sink, _ = CalibrateOUE(0.1, 3052)
	}
}

func BenchmarkCalibrateSubsetSelection(b *testing.B) {
	for b.Loop() {
		sink, _ = CalibrateSubsetSelection(0.1, 3052)
	}
}

func BenchmarkCalibrateDPSGD(b *testing.B) {
	for b.Loop() {
		sink, _ = CalibrateDPSGD(0.1, 100, 10)
	}
}

func BenchmarkGaussianSigma(b *testing.B) {
	for b.Loop() {
		sink, _ = accountant.GaussianSigma(1, 1e-5, 1)
	}
}

func BenchmarkExactOUE8(b *testing.B) {
	lik := oueChannel(1, 8) // 256 outputs
	for b.Loop() {
		sink, _ = Exact(lik, Setting{})
	}
}

func BenchmarkExactDensityLaplace4(b *testing.B) {
	values := []float64{0, 0.3, 0.5, 1}
	knots := locationKnots(values, 20)
	dens := laplaceDensity(values, 0.4)
	for b.Loop() {
		sink, _ = ExactDensity(dens, 4, Setting{}, knots, 0)
	}
}
