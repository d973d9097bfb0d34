package stats

import (
	"math"
	"testing"
)

// Values from numpy.quantile (default method "linear").
func TestQuantile7(t *testing.T) {
	x := []float64{1, 2, 4, 8, 16}
	for _, c := range []struct{ p, want float64 }{
		{0, 1}, {0.25, 2}, {0.5, 4}, {0.6, 5.6}, {0.75, 8}, {0.9, 12.8}, {1, 16},
	} {
		if got := Quantile7(x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile7(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile7(nil, 0.5)) {
		t.Error("empty input should give NaN")
	}
}
