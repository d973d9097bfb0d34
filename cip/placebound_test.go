package cip

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// denseRigid is an independent dense (E1) evaluation of a rigid move of
// the window idx (contiguous indices) under prior sigma and noise g:
// v' (Ct + G)^-1 v, v = [1_S; A 1_S], A and Ct by Cholesky solves of
// sigma[S,S], the quadratic form by a Cholesky factorisation of Ct + G
// (no inverse formed). It does not use the library's conditioning.
func denseRigid(t *testing.T, sigma, g mat.Symmetric, idx []int) float64 {
	t.Helper()
	n := g.SymmetricDim()
	in := make(map[int]bool, len(idx))
	for _, i := range idx {
		in[i] = true
	}
	var u []int
	for i := range n {
		if !in[i] {
			u = append(u, i)
		}
	}
	k := len(idx)
	sss := mat.NewSymDense(k, nil)
	sus := mat.NewDense(max(len(u), 1), k, nil)
	for a, i := range idx {
		for b, j := range idx {
			sss.SetSym(a, b, sigma.At(i, j))
		}
		for c, j := range u {
			sus.Set(c, a, sigma.At(j, i))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sss) {
		t.Fatal("prior on the window is not positive definite")
	}
	ones := mat.NewVecDense(k, nil)
	for i := range k {
		ones.SetVec(i, 1)
	}
	var w mat.VecDense
	if err := ch.SolveVecTo(&w, ones); err != nil {
		t.Fatal(err)
	}
	m := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			m.SetSym(i, j, g.At(i, j))
		}
	}
	v := mat.NewVecDense(n, nil)
	for _, i := range idx {
		v.SetVec(i, 1)
	}
	if len(u) > 0 {
		var a1 mat.VecDense
		a1.MulVec(sus, &w)
		var x, sc mat.Dense
		if err := ch.SolveTo(&x, sus.T()); err != nil {
			t.Fatal(err)
		}
		sc.Mul(sus, &x)
		for r, i := range u {
			v.SetVec(i, a1.AtVec(r))
			for c, j := range u {
				if j >= i {
					m.SetSym(i, j, m.At(i, j)+sigma.At(i, j)-sc.At(r, c))
				}
			}
		}
	}
	var cm mat.Cholesky
	if !cm.Factorize(m) {
		t.Fatal("Ct + G is not positive definite")
	}
	var z mat.VecDense
	if err := cm.SolveVecTo(&z, v); err != nil {
		t.Fatal(err)
	}
	return mat.Dot(v, &z)
}

// placeTestNoise is an envelope-like noise: Matérn 1/2 and 3/2 components
// on a geometric grid of lengthscales, and a route component.
func placeTestNoise() []gp.Kernel {
	var noise []gp.Kernel
	for l := 10.0; l < 2e5; l *= 2 {
		noise = append(noise, gp.Matern12{Variance: 0.3, Lengthscale: l})
	}
	for l := 10.0; l < 2e4; l *= 2 {
		noise = append(noise, gp.Matern32{Variance: 0.2, Lengthscale: l})
	}
	return append(noise, gp.Matern12{Variance: 0.05, Lengthscale: RouteLengthscale})
}

// placeSamplings returns timestamps: dense GPS-like, sparse with gaps of
// lengthscales, and bursts separated by long gaps.
func placeSamplings(rng *rand.Rand) map[string][]float64 {
	gen := func(n int, gap func() float64) []float64 {
		ts := make([]float64, n)
		for i := 1; i < n; i++ {
			ts[i] = ts[i-1] + gap()
		}
		return ts
	}
	return map[string][]float64{
		"dense":  gen(360, func() float64 { return 1 + 4*rng.Float64() }),
		"sparse": gen(220, func() float64 { return 60 * rng.ExpFloat64() }),
		"bursts": gen(300, func() float64 {
			if rng.IntN(25) == 0 {
				return 300 + 600*rng.Float64()
			}
			return 1 + 2*rng.Float64()
		}),
	}
}

// PlaceConditionalBound is never below the exact loss, recomputed densely
// and independently, of windows of every duration (a few points, short
// stays, most of the trace, windows ending at a gap) against members of
// every Matérn kernel at lengthscales from the family's bottom (shorter
// than most windows) to its top, with a near-zero prior variance (the
// worst: Ct -> 0) and a large one; and it is reasonably tight: the
// largest exact loss is within a factor 3 of it for every kernel. The
// negative control: the bound computed for members no shorter than 10x
// the bottom is exceeded by a member at the bottom (the test can fail).
func TestPlaceConditionalBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	noise := placeTestNoise()
	var sum gp.Kernel = noise[0]
	for _, k := range noise[1:] {
		sum = gp.Sum{K1: sum, K2: k}
	}
	const lMin, lMax = 20.0, 200.0
	worst := map[string]float64{}
	exceeded := false
	samplings := placeSamplings(rng)
	for name, ts := range samplings {
		n := len(ts)
		g := gp.Gram(sum, ts)
		span := ts[n-1] - ts[0]
		windows := [][2]int{{n / 3, n / 3}, {n / 3, n/3 + 4}, {n / 4, n / 2}, {n / 5, 4 * n / 5}, {1, n - 2}, {0, n / 3}}
		// A window ending at the largest gap.
		big := 1
		for i := 2; i < n; i++ {
			if ts[i]-ts[i-1] > ts[big]-ts[big-1] {
				big = i
			}
		}
		windows = append(windows, [2]int{max(0, big-40), big - 1})
		for _, kernel := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
			b, err := PlaceConditionalBound(kernel, lMin, lMax, span, noise)
			if err != nil {
				t.Fatal(err)
			}
			loose, err := PlaceConditionalBound(kernel, 10*lMin, lMax, span, noise)
			if err != nil {
				t.Fatal(err)
			}
			ls, vars := []float64{lMin, math.Sqrt(lMin * lMax), lMax}, []float64{1e-6, 1}
			if testing.Short() {
				ls, vars = []float64{lMin, lMax}, []float64{1e-6}
			}
			for _, l := range ls {
				for _, variance := range vars {
					k, err := gp.NewKernel(kernel, variance, l, 0)
					if err != nil {
						t.Fatal(err)
					}
					sigma := gp.Gram(k, ts)
					for _, w := range windows {
						var idx []int
						for i := w[0]; i <= w[1]; i++ {
							idx = append(idx, i)
						}
						e := denseRigid(t, sigma, g, idx)
						if e > b {
							t.Errorf("%s sampling, %s at %g s (variance %g), window %v (%.0f s): exact %v above the bound %v",
								name, kernel, l, variance, w, ts[w[1]]-ts[w[0]], e, b)
						}
						if l == lMin && e > loose {
							exceeded = true
						}
						worst[kernel] = math.Max(worst[kernel], e/b)
					}
				}
			}
		}
	}
	for kernel, r := range worst {
		t.Logf("%s: largest exact loss / bound %.3f", kernel, r)
		if r < 1.0/3 {
			t.Errorf("%s: the bound is more than 3x the largest exact loss (%.3f)", kernel, r)
		}
	}
	if !exceeded {
		t.Error("negative control: no member at the bottom exceeded the bound computed for members 10x longer")
	}
}

// The derivative bounds PlaceConditionalBound uses: a random search over
// samplings (dense conditioning of unit-lengthscale members on the value 1
// at every time) stays within PlaceSlopeBounds, and comes close to them
// (the margin is about 5 %, not a hidden error).
func TestPlaceSlopeBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kernel := range []string{gp.KernelMatern32, gp.KernelMatern52} {
		k, _, _ := unitKernel(kernel)
		d1, d2 := k.deriv(), k.deriv().deriv()
		mu := PlaceSlopeBounds(kernel)
		best := make([]float64, len(mu))
		for trial := 0; trial < 4000; trial++ {
			n := 1 + rng.IntN(12)
			sc := math.Pow(10, -1.5+2.5*rng.Float64())
			ts := []float64{0}
			for i := 1; i < n; i++ {
				ts = append(ts, ts[i-1]+sc*rng.ExpFloat64())
			}
			tb := ts[n-1]
			r := mat.NewSymDense(n, nil)
			for i := range n {
				for j := i; j < n; j++ {
					r.SetSym(i, j, k.at(math.Abs(ts[i]-ts[j])))
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(r) {
				continue
			}
			ones := mat.NewVecDense(n, nil)
			for i := range n {
				ones.SetVec(i, 1)
			}
			var w mat.VecDense
			if err := ch.SolveVecTo(&w, ones); err != nil {
				continue
			}
			// Cov(f(t_i), f'(tb)) = k'(tb - t_i); Cov(f(t_i), f''(tb)) = k''(tb - t_i).
			m1, m2 := 0.0, 0.0
			for i := range n {
				m1 += d1.at(tb-ts[i]) * w.AtVec(i)
				m2 += d2.at(tb-ts[i]) * w.AtVec(i)
			}
			best[0] = math.Max(best[0], math.Abs(m1))
			if len(mu) > 1 {
				best[1] = math.Max(best[1], math.Abs(m2))
			}
		}
		for j := range mu {
			if best[j] > mu[j] || best[j] < mu[j]/1.1 {
				t.Errorf("%s derivative %d: largest found %v, bound %v", kernel, j+1, best[j], mu[j])
			}
		}
		t.Logf("%s: largest derivatives found %v, bounds %v", kernel, best, mu)
	}
}
