package attack

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// Reconstruct against the textbook formulas with explicit inverses on a
// well-conditioned case.
func TestReconstructBruteForce(t *testing.T) {
	n := 8
	sigma := gp.Gram(gp.Matern32{Variance: 4, Lengthscale: 2}, gp.Indices(n))
	g := mat.NewSymDense(n, nil)
	for i := range n {
		g.SetSym(i, i, 0.5+0.1*float64(i))
		if i > 0 {
			g.SetSym(i-1, i, 0.05)
		}
	}
	z := []float64{3, 1, -2, 0.5, 4, 2, -1, 0}
	xhat, pv, err := Reconstruct(sigma, g, z)
	if err != nil {
		t.Fatal(err)
	}
	var m, minv mat.SymDense
	m.AddSym(sigma, g)
	var inv mat.Dense
	if err := inv.Inverse(&m); err != nil {
		t.Fatal(err)
	}
	minv.CopySym(mat.NewSymDense(n, inv.RawMatrix().Data))
	mean := 0.0
	for _, v := range z {
		mean += v / float64(n)
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = z[i] - mean
	}
	var w, x mat.VecDense
	w.MulVec(&inv, mat.NewVecDense(n, d))
	x.MulVec(sigma, &w)
	var sm, post mat.Dense
	sm.Mul(sigma, &inv)
	post.Mul(&sm, sigma)
	for i := range n {
		if math.Abs(xhat[i]-(mean+x.AtVec(i))) > 1e-10 {
			t.Errorf("x^[%d] = %v, want %v", i, xhat[i], mean+x.AtVec(i))
		}
		if want := sigma.At(i, i) - post.At(i, i); math.Abs(pv[i]-want) > 1e-10 {
			t.Errorf("posterior variance[%d] = %v, want %v", i, pv[i], want)
		}
	}
}

// On a smooth prior with independent noise the reconstruction beats the
// raw release, and its error matches the adversary's own posterior
// uncertainty (the mean is known to be zero here and the estimate of it
// adds a little): 200 seeded draws.
func TestRunImprovesOnRelease(t *testing.T) {
	n := 40
	sigma := gp.Gram(gp.RBF{Variance: 100, Lengthscale: 6}, gp.Indices(n))
	noise := mat.NewSymDense(n, nil)
	for i := range n {
		noise.SetSym(i, i, 25)
	}
	var ls, ln mat.Cholesky
	jit := mat.NewSymDense(n, nil)
	jit.CopySym(sigma)
	for i := range n {
		jit.SetSym(i, i, jit.At(i, i)+1e-8)
	}
	if !ls.Factorize(jit) || !ln.Factorize(noise) {
		t.Fatal("factorisation")
	}
	var lsT, lnT mat.TriDense
	ls.LTo(&lsT)
	ln.LTo(&lnT)
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(l *mat.TriDense) []float64 {
		z := mat.NewVecDense(n, nil)
		for i := range n {
			z.SetVec(i, rng.NormFloat64())
		}
		var x mat.VecDense
		x.MulVec(l, z)
		return x.RawVector().Data
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var rel, rec, post float64
	const reps = 200
	for range reps {
		tr := Planar{East: draw(&lsT), North: draw(&lsT)}
		ge, gn := draw(&lnT), draw(&lnT)
		re := Planar{East: make([]float64, n), North: make([]float64, n)}
		for i := range n {
			re.East[i], re.North[i] = tr.East[i]+ge[i], tr.North[i]+gn[i]
		}
		r, _, err := Run(sigma, noise, tr, re, all, 10)
		if err != nil {
			t.Fatal(err)
		}
		rel += r.ReleasedRMSE * r.ReleasedRMSE
		rec += r.ReconstructedRMSE * r.ReconstructedRMSE
		post += r.Posterior2Sigma * r.Posterior2Sigma / 4
	}
	rel, rec, post = math.Sqrt(rel/reps), math.Sqrt(rec/reps), math.Sqrt(post/reps)
	t.Logf("planar RMSE: release %.2f, reconstruction %.2f, posterior sd %.2f", rel, rec, post)
	if math.Abs(rel-math.Sqrt(50)) > 0.05*math.Sqrt(50) {
		t.Errorf("release RMSE %v, want sqrt(50)", rel)
	}
	if !(rec < 0.6*rel) || rec < post*0.95 || rec > post*1.25 {
		t.Errorf("reconstruction RMSE %v, release %v, posterior sd %v", rec, rel, post)
	}
}

func TestRunErrors(t *testing.T) {
	s := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 1}, gp.Indices(3))
	p := Planar{East: []float64{0, 0, 0}, North: []float64{0, 0, 0}}
	if _, _, err := Run(s, s, p, p, nil, 1); err == nil {
		t.Error("no secret points accepted")
	}
	if _, _, err := Run(s, s, p, p, []int{3}, 1); err == nil {
		t.Error("out-of-range secret accepted")
	}
	if _, _, err := Run(s, s, p, Planar{East: []float64{0}, North: []float64{0}}, []int{0}, 1); err == nil {
		t.Error("length mismatch accepted")
	}
}
