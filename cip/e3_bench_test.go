package cip

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// Benchmarks for the (E3) designer: every timing includes the design and
// its (E1) certificate. Run with
//
//	go test ./cip -run XXX -bench E3 -benchtime 5x
//
// and see the reported metrics (loss factors, gaps) next to the times.

// geolifeTimes returns n timestamps with GeoLife-like gaps of 1 to 5 s
// from a fixed seed.
func geolifeTimes(n int) []float64 {
	rng := rand.New(rand.NewPCG(2008, 5))
	ts := make([]float64, n)
	for i := 1; i < n; i++ {
		ts[i] = ts[i-1] + float64(1+rng.IntN(5))
	}
	return ts
}

// Figure 2c of the paper in budget mode: all 50 basic secrets at total
// noise 17.2 (cip-math section 4: exact optimum 2.91, paper 7.45), over
// the paper's range of l_eff.
func BenchmarkE3AllBasic50Budget(b *testing.B) {
	for _, l := range []float64{1, 2.5, 6.1, 10} {
		b.Run(fmt.Sprintf("leff=%g", l), func(b *testing.B) {
			sigma := rbf(l, 50)
			secrets := EveryPoint(50)
			var d *SetDesign
			for b.Loop() {
				var err error
				if d, err = OptimalBudget(sigma, secrets, 17.2, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(d.LossFactor, "worst-loss")
			b.ReportMetric((d.Level-d.LowerBound)/d.Level, "rel-gap")
		})
	}
}

// Every point of an n-point 1-D trace at GeoLife-like irregular times
// (RBF, lengthscale 30 s, unit variance), target loss factor 0.5.
func BenchmarkE3AllBasicIrregularTarget(b *testing.B) {
	for _, n := range []int{50, 200, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 30}, geolifeTimes(n))
			secrets := EveryPoint(n)
			var d *SetDesign
			for b.Loop() {
				var err error
				if d, err = OptimalTarget(sigma, secrets, []float64{0.5}, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(d.Budget, "budget")
			b.ReportMetric((d.Budget-d.LowerBound)/d.Budget, "rel-gap")
		})
	}
}

// Secret sets that need the iterative solver, at n = 50 (RBF on indices,
// l_eff 6.1), target loss factor 2 (or 1..3 cycling).
func BenchmarkE3Sets50(b *testing.B) {
	sigma := rbf(6.1, 50)
	varying := make([]float64, 50)
	for i := range varying {
		varying[i] = 1 + float64(i%3)
	}
	for _, c := range []struct {
		name    string
		secrets []Secret
		targets []float64
	}{
		{"every5th", everyKth(50, 5), []float64{2}},
		{"compound{24,25}", []Secret{Compound(24, 25)}, []float64{2}},
		{"compound{23,24,25}", []Secret{Compound(23, 24, 25)}, []float64{2}},
		{"basic{24}", []Secret{Basic(24)}, []float64{2}},
		{"all-varying-targets", EveryPoint(50), varying},
	} {
		b.Run(c.name, func(b *testing.B) {
			var d *SetDesign
			for b.Loop() {
				var err error
				if d, err = OptimalTarget(sigma, c.secrets, c.targets, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(d.Budget, "budget")
			b.ReportMetric((d.Budget-d.LowerBound)/d.Budget, "rel-gap")
			b.ReportMetric(float64(d.Iterations), "newton-steps")
		})
	}
}

// The same sets in budget mode.
func BenchmarkE3Sets50Budget(b *testing.B) {
	sigma := rbf(6.1, 50)
	for _, c := range []struct {
		name    string
		secrets []Secret
	}{
		{"every5th", everyKth(50, 5)},
		{"compound{24,25}", []Secret{Compound(24, 25)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var d *SetDesign
			for b.Loop() {
				var err error
				if d, err = OptimalBudget(sigma, c.secrets, 1, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(d.Level, "level")
			b.ReportMetric((d.Level-d.LowerBound)/d.Level, "rel-gap")
		})
	}
}

// Side by side with the generic interior-point solve of (E3) (package
// sdp, an n x n LMI per secret): every 4th of 20 points (RBF l_eff 3) and
// every 5th of 50 (l_eff 6.1).
func BenchmarkE3VersusGeneric(b *testing.B) {
	for _, c := range []struct {
		n, every int
		l        float64
	}{{20, 4, 3}, {50, 5, 6.1}} {
		sigma := rbf(c.l, c.n)
		secrets := everyKth(c.n, c.every)
		ts := fullTargets([]float64{2}, len(secrets))
		b.Run(fmt.Sprintf("n=%d/fast", c.n), func(b *testing.B) {
			var d *SetDesign
			for b.Loop() {
				var err error
				if d, err = OptimalTarget(sigma, secrets, ts, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(d.Budget, "budget")
		})
		b.Run(fmt.Sprintf("n=%d/generic-sdp", c.n), func(b *testing.B) {
			var obj float64
			for b.Loop() {
				obj, _ = genericE3(b, sigma, secrets, ts)
			}
			b.ReportMetric(obj, "budget")
		})
	}
}

// Larger iterative problems: every 5th point of n (RBF on indices,
// l_eff 6.1), where the reduced Newton system grows with the spectral
// rank of Sigma.
func BenchmarkE3Every5thLarge(b *testing.B) {
	if testing.Short() {
		b.Skip("large")
	}
	for _, n := range []int{100, 200} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			sigma := rbf(6.1, n)
			secrets := everyKth(n, 5)
			var d *SetDesign
			for b.Loop() {
				var err error
				if d, err = OptimalTarget(sigma, secrets, []float64{2}, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(d.Budget, "budget")
			b.ReportMetric((d.Budget-d.LowerBound)/d.Budget, "rel-gap")
			b.ReportMetric(float64(d.Iterations), "newton-steps")
		})
	}
}
