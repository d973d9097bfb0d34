package gp

import (
	"fmt"
	"math"
	"testing"
)

func TestLogLikGradient(t *testing.T) {
	data := sampleGP(t, RBF{1.2, 4}, Indices(25), 0.05, 2, 7)
	for _, k := range []Kernel{RBF{0.9, 3}, Sum{Matern52{1, 5}, Periodic{0.3, 1, 8}}} {
		t.Run(fmt.Sprintf("%T", k), func(t *testing.T) {
			noise := 0.04
			np := len(k.Params())
			g := make([]float64, np+1)
			if _, _, err := logLik(k, noise, data, g); err != nil {
				t.Fatal(err)
			}
			h := 1e-5
			for i := range np + 1 {
				eval := func(sign float64) float64 {
					v := paramsOf(k)
					nz := noise
					if i < np {
						v[i] *= math.Exp(sign * h)
					} else {
						nz *= math.Exp(sign * h)
					}
					kk, _ := k.WithParams(v)
					ll, _, err := logLik(kk, nz, data, nil)
					if err != nil {
						t.Fatal(err)
					}
					return ll
				}
				fd := (eval(1) - eval(-1)) / (2 * h)
				if math.Abs(fd-g[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("%T param %d: gradient %v, finite difference %v", k, i, g[i], fd)
				}
			}
		})
	}
}

// TestLogMarginalLikelihoodKnown checks a 1-point series by hand:
// y ~ N(0, v + noise).
func TestLogMarginalLikelihoodKnown(t *testing.T) {
	ll, _, err := LogMarginalLikelihood(RBF{2, 1}, 0.5, Series{T: []float64{0}, Y: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	want := -0.5*1.5*1.5/2.5 - 0.5*math.Log(2.5) - 0.5*math.Log(2*math.Pi)
	if math.Abs(ll-want) > 1e-14 {
		t.Errorf("log likelihood %v, want %v", ll, want)
	}
}

// TestFitRecoversLengthscale simulates GP data with known hyperparameters
// (fixed seed) and fits them back.
func TestFitRecoversLengthscale(t *testing.T) {
	t.Parallel()
	ts := Indices(40)
	for _, want := range []float64{3, 7} {
		data := sampleGP(t, RBF{1, want}, ts, 0.01, 30, uint64(want*100))
		res, err := Fit(RBF{1, 10}, data, FitOptions{
			Bounds:   map[string]Bound{"lengthscale": {1, 40}},
			Noise:    Bound{1e-4, 1},
			Restarts: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		rbf := res.Kernel.(RBF)
		if relErr(rbf.Lengthscale, want) > 0.05 {
			t.Errorf("lengthscale %v, want %v within 5%%", rbf.Lengthscale, want)
		}
		if relErr(rbf.Variance, 1) > 0.3 {
			t.Errorf("variance %v, want 1 within 30%%", rbf.Variance)
		}
		if res.Noise > 0.05 {
			t.Errorf("noise %v, true 0.01", res.Noise)
		}
		if res.Starts != 3 {
			t.Errorf("starts %d, want 3", res.Starts)
		}
	}
}

// TestFitPaperOptions runs the paper's per-series recipe (standardised,
// unit variance, lengthscale in [1, 40] started at 8, nugget 0.0025) on
// series simulated from that model at lengthscale 6 and checks the median
// fit, then checks that a fitted nugget also recovers the lengthscale.
func TestFitPaperOptions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("per-series fits")
	}
	data := sampleGP(t, RBF{1, 6}, Indices(50), 0.0025, 15, 11)
	fits, err := FitEach(RBF{1, 8}, data, PaperFitOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ls []float64
	for _, res := range fits {
		k := res.Kernel.(RBF)
		if k.Variance != 1 || k.Lengthscale < 1 || k.Lengthscale > 40 || res.Noise != 0.0025 {
			t.Fatalf("fit outside the paper's constraints: %+v, noise %v", k, res.Noise)
		}
		ls = append(ls, k.Lengthscale)
	}
	med := median(ls)
	if relErr(med, 6) > 0.15 {
		t.Errorf("median per-series lengthscale %v, want 6 within 15%% (fits %v)", med, ls)
	}

	noisy := sampleGP(t, RBF{1, 6}, Indices(50), 0.01, 15, 12)
	opts := PaperFitOptions()
	opts.Noise = Bound{1e-6, 1}
	ls = ls[:0]
	for _, s := range noisy {
		res, err := Fit(RBF{1, 8}, []Series{s}, opts)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, res.Kernel.(RBF).Lengthscale)
	}
	if med := median(ls); relErr(med, 6) > 0.15 {
		t.Errorf("fitted nugget: median lengthscale %v, want 6 within 15%%", med)
	}
}

func TestFitErrors(t *testing.T) {
	ok := Series{T: []float64{0, 1, 2}, Y: []float64{0, 1, 0}}
	if _, err := Fit(RBF{1, 1}, nil, FitOptions{}); err == nil {
		t.Error("no data accepted")
	}
	if _, err := Fit(RBF{1, 1}, []Series{{T: []float64{0, 1}, Y: []float64{1}}}, FitOptions{}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := Fit(RBF{1, 1}, []Series{{T: []float64{0, 1}, Y: []float64{1, math.NaN()}}}, FitOptions{}); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := Fit(RBF{1, 1}, []Series{ok}, FitOptions{Bounds: map[string]Bound{"lengthscale": {5, 2}}}); err == nil {
		t.Error("inverted bounds accepted")
	}
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
