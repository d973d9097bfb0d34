package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// seriesLogLikFactor is one series' term of logLik as it was written on
// Factor (Gram through SetSym, Factorize, SolveVecTo, InverseTo): the
// reference the raw-storage seriesLogLik must match bit for bit.
func seriesLogLikFactor(k Kernel, noise float64, s Series, grad, dk []float64) (float64, float64, error) {
	n := len(s.T)
	g := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			g.SetSym(i, j, k.Eval(s.T[i], s.T[j]))
		}
	}
	for i := range n {
		g.SetSym(i, i, g.At(i, i)+noise)
	}
	f, err := Factorize(g, 0)
	if err != nil {
		return math.NaN(), 0, err
	}
	y := mat.NewVecDense(n, append([]float64(nil), s.Y...))
	var alpha mat.VecDense
	if err := f.SolveVecTo(&alpha, y); err != nil {
		return math.NaN(), 0, err
	}
	ll := -0.5*mat.Dot(y, &alpha) - 0.5*f.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	if grad != nil {
		var kinv mat.SymDense
		if err := f.Cholesky().InverseTo(&kinv); err != nil && ignoreCondition(err) != nil {
			return math.NaN(), 0, err
		}
		kv := kinv.RawSymmetric()
		addGrad(grad, dk, k, noise, s.T, alpha.RawVector().Data, kv.Data, kv.Stride)
	}
	return ll, f.Jitter(), nil
}

func logLikFactor(k Kernel, noise float64, data []Series, grad []float64) (float64, float64, error) {
	return sumSeries(seriesLogLikFactor, k, noise, data, grad)
}

// TestLogLikSameAsFactor checks that the fit's objective on raw storage
// gives exactly (bit for bit) the value, gradient and jitter of the same
// computation through Gram, Factorize and mat.Cholesky, for each kernel,
// with and without a nugget, including series whose Gram matrix needs the
// jitter ladder (repeated times, no nugget) and one it cannot save.
func TestLogLikSameAsFactor(t *testing.T) {
	t.Parallel()
	ts := Indices(30)
	rep := append(Indices(12), 5, 5, 5, 7) // repeated times: singular without a nugget
	kernels := []Kernel{RBF{1.3, 4}, Matern12{0.7, 6}, Matern32{2, 3}, Matern52{1, 5}}
	jittered := 0
	for _, k := range kernels {
		data := sampleGP(t, k, ts, 0.05, 3, 7)
		data = append(data, Series{T: rep, Y: append([]float64(nil), data[0].Y[:len(rep)]...)})
		for _, noise := range []float64{0.05, 1e-9, 0} {
			want := make([]float64, len(k.Params())+1)
			got := make([]float64, len(want))
			lw, jw, ew := logLikFactor(k, noise, data, want)
			lg, jg, eg := logLik(k, noise, data, got)
			if (ew == nil) != (eg == nil) {
				t.Fatalf("%T noise %g: error %v, reference %v", k, noise, eg, ew)
			}
			if ew != nil {
				continue
			}
			if math.Float64bits(lg) != math.Float64bits(lw) || jg != jw {
				t.Errorf("%T noise %g: log likelihood %v (jitter %g), reference %v (jitter %g)", k, noise, lg, jg, lw, jw)
			}
			for p := range want {
				if math.Float64bits(got[p]) != math.Float64bits(want[p]) {
					t.Errorf("%T noise %g: gradient[%d] %v, reference %v", k, noise, p, got[p], want[p])
				}
			}
			if jg > 0 {
				jittered++
			}
		}
	}
	if jittered == 0 {
		t.Error("no case needed jitter: the ladder is not exercised")
	}
	// A matrix no jitter within the cap saves errs on both paths alike.
	bad := []Series{{T: []float64{0, 1}, Y: []float64{1, 2}}}
	_, _, ew := logLikFactor(RBF{1, 1}, -10, bad, nil)
	_, _, eg := logLik(RBF{1, 1}, -10, bad, nil)
	if ew == nil || eg == nil || ew.Error() != eg.Error() {
		t.Errorf("negative-definite matrix: error %v, reference %v", eg, ew)
	}
	// Gram through its raw storage equals the entry-by-entry one.
	for _, k := range kernels {
		g := Gram(k, rep)
		for i := range rep {
			for j := range rep {
				if math.Float64bits(g.At(i, j)) != math.Float64bits(k.Eval(rep[min(i, j)], rep[max(i, j)])) {
					t.Fatalf("%T: Gram[%d,%d] %v, k %v", k, i, j, g.At(i, j), k.Eval(rep[i], rep[j]))
				}
			}
		}
	}
}
