package gp

import (
	"math"
	"reflect"
	"testing"
)

// TestFitMemoSameAsLogLik checks the work a fit keeps between evaluations
// (fitMemo): in the order L-BFGS asks (a value, then the gradient at the
// same point; a value alone; the gradient twice; a point seen before but
// not last; a gradient at a new point), every value, jitter and gradient
// is bit for bit logLik's at that point, for two series (one needs the
// jitter ladder) and for one; and whole fits with and without the memo
// return the same result, field for field.
func TestFitMemoSameAsLogLik(t *testing.T) {
	t.Parallel()
	ts := Indices(40)
	rep := append(Indices(12), 5, 5, 5, 7) // repeated times: the jitter ladder without a nugget
	k := Matern32{2, 3}
	data := sampleGP(t, k, ts, 0.05, 2, 11)
	withRep := append(data[:1:1], Series{T: rep, Y: append([]float64(nil), data[1].Y[:len(rep)]...)})
	for _, series := range [][]Series{withRep, data[1:]} {
		sp, err := newFitSpace(k, series, FitOptions{Noise: Bound{1e-300, 1}})
		if err != nil {
			t.Fatal(err)
		}
		if sp.memo == nil {
			t.Fatal("no memo for small series")
		}
		p := [][]float64{
			{math.Log(2), math.Log(3), math.Log(0.05)},
			{math.Log(1.5), math.Log(4), math.Log(1e-300)}, // no nugget to speak of: the repeated times need jitter
			{math.Log(2), math.Log(3), math.Log(0.06)},     // differs from the first in the last entry only
			{math.Log(2.5), math.Log(3), math.Log(0.05)},   // and in the first only
		}
		steps := []struct {
			at   int
			grad bool
		}{{0, false}, {0, true}, {1, false}, {2, false}, {2, true}, {2, true}, {0, false}, {3, true}, {3, false}, {1, true}, {1, false}}
		jittered := false
		for i, st := range steps {
			var got, want []float64
			if st.grad {
				got, want = make([]float64, sp.np), make([]float64, sp.np)
			}
			lg, jg, eg := sp.eval(p[st.at], got)
			kk, err := k.WithParams([]float64{math.Exp(p[st.at][0]), math.Exp(p[st.at][1])})
			if err != nil {
				t.Fatal(err)
			}
			lw, jw, ew := logLik(kk, math.Exp(p[st.at][2]), series, want)
			if eg != nil || ew != nil {
				t.Fatalf("step %d: error %v, reference %v", i, eg, ew)
			}
			if math.Float64bits(lg) != math.Float64bits(lw) || jg != jw {
				t.Errorf("%d series, step %d (point %d, gradient %v): log likelihood %v (jitter %g), logLik %v (jitter %g)", len(series), i, st.at, st.grad, lg, jg, lw, jw)
			}
			for q := range want {
				if math.Float64bits(got[q]) != math.Float64bits(want[q]) {
					t.Errorf("%d series, step %d (point %d): gradient[%d] %v, logLik %v", len(series), i, st.at, q, got[q], want[q])
				}
			}
			jittered = jittered || jg > 0
		}
		if len(series) == 2 && !jittered {
			t.Error("no step needed jitter: the ladder is not exercised through the memo")
		}
	}
	// Whole fits, with restarts and a fitted nugget: the same result.
	opts := FitOptions{Noise: Bound{1e-4, 1}, Restarts: 2}
	with, err := fit(k, data, opts, true)
	if err != nil {
		t.Fatal(err)
	}
	without, err := fit(k, data, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(with, without) {
		t.Errorf("fit with the memo %+v, without %+v", with, without)
	}
	// Matrices beyond the cap are not kept.
	if m := newFitMemo([]Series{{T: make([]float64, 2100)}}); m != nil {
		t.Error("a 2,100-point series is kept: two matrices exceed fitMemoMaxFloats")
	}
}

// BenchmarkFitSum91 is one fit of the shape prior's comparison makes (which
// uses its own parametrisation, prior.SumKernel): a sum of two Matérn 3/2
// with a fitted nugget, on the 91 training fixes of a 45-minute window at
// 30 s, from the kernel's start.
func BenchmarkFitSum91(b *testing.B) {
	t := &testing.T{}
	ts := make([]float64, 91)
	for i := range ts {
		ts[i] = 30 * float64(i)
	}
	data := sampleGP(t, Sum{Matern32{100, 30}, Matern32{2500, 1000}}, ts, 1, 1, 5)
	opts := FitOptions{Noise: Bound{1e-2, 100}}
	for b.Loop() {
		if _, err := Fit(Sum{Matern32{500, 60}, Matern32{500, 600}}, data, opts); err != nil {
			b.Fatal(err)
		}
	}
}
