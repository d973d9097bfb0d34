package gp

import "testing"

// BenchmarkFitPaper50 is one per-series fit of the paper's recipe on a
// 50-point series.
func BenchmarkFitPaper50(b *testing.B) {
	t := &testing.T{}
	data := sampleGP(t, RBF{1, 6}, Indices(50), 1e-10, 1, 3)
	for b.Loop() {
		if _, err := Fit(RBF{1, 8}, data, PaperFitOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
