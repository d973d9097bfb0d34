package cip

import (
	"testing"
)

// BenchmarkOptimalBasic50 is issue 5's "basic-secret design for n = 50":
// the (E2) design including its (E1) certificate.
func BenchmarkOptimalBasic50(b *testing.B) {
	sigma := rbf(6.1, 50)
	for b.Loop() {
		if _, err := OptimalBasic(sigma, 24, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOptimalBasicTarget50(b *testing.B) {
	sigma := rbf(6.1, 50)
	for b.Loop() {
		if _, err := OptimalBasicTarget(sigma, 24, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// Certifying all 50 basic secrets: one factorisation (Woodbury) against
// one conditional factorisation per secret (direct).
func BenchmarkLossFactorsAll50Woodbury(b *testing.B) {
	sigma := rbf(6.1, 50)
	g, _ := IndependentUniform(50, 1)
	secrets := EveryPoint(50)
	for b.Loop() {
		if _, err := LossFactors(sigma, g, secrets); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLossFactorsAll50Direct(b *testing.B) {
	sigma := rbf(6.1, 50)
	g, _ := IndependentUniform(50, 1)
	for b.Loop() {
		for i := range 50 {
			if _, err := LossFactorDirect(sigma, g, Basic(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Certifying every point of a 1,000-point trace (one dimension).
func BenchmarkLossFactorsAll1000(b *testing.B) {
	if testing.Short() {
		b.Skip("large")
	}
	sigma := rbf(6.1, 1000)
	g, _ := IndependentUniform(1000, 20)
	secrets := EveryPoint(1000)
	for b.Loop() {
		if _, err := LossFactors(sigma, g, secrets); err != nil {
			b.Fatal(err)
		}
	}
}
