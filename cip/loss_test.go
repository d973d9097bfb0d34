package cip

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/tracepriv/tracepriv/gp"
)

// TestWoodburyEqualsDirect compares the one-factorisation evaluator with
// the literal (E1) on RBF and periodic priors, including l_eff = 10 where
// the prior is singular in floating point.
func TestWoodburyEqualsDirect(t *testing.T) {
	rng := newRNG(1)
	priors := map[string]*mat.SymDense{
		"rbf1":   rbf(1, 50),
		"rbf2.5": rbf(2.5, 50),
		"rbf6.1": rbf(6.1, 50),
		"rbf10":  rbf(10, 50),
		"per0.5": periodic(0.5, 48),
		"per1.5": periodic(1.5, 48),
	}
	for name, sigma := range priors {
		n := sigma.SymmetricDim()
		iso, _ := IndependentUniform(n, 1)
		noises := map[string]*mat.SymDense{
			"isotropic":  iso,
			"correlated": randomNoise(rng, n, 1),
			"large":      randomNoise(rng, n, 20),
		}
		secrets := []Secret{Basic(0), Basic(24), Basic(n - 1), Compound(24, 25), Compound(16, 32), Compound(3, 10, 40)}
		for nn, g := range noises {
			got, err := LossFactors(sigma, g, secrets)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range secrets {
				want, err := LossFactorDirect(sigma, g, s)
				if err != nil {
					t.Fatal(err)
				}
				if relErr(got[i], want) > 1e-10 {
					t.Errorf("%s %s %v: Woodbury %.15g, direct %.15g (rel %.2g)", name, nn, s.Indices, got[i], want, relErr(got[i], want))
				}
			}
		}
	}
}

// TestLossAgainstExplicitInverse checks (E1) on a well-conditioned setting
// against At^T K^-1 At formed with an explicit inverse.
func TestLossAgainstExplicitInverse(t *testing.T) {
	sigma := gp.Gram(gp.Matern32{Variance: 1, Lengthscale: 3}, gp.Indices(20))
	g := randomNoise(newRNG(2), 20, 2)
	for _, s := range [][]int{{7}, {7, 8}, {0, 19, 5}} {
		q, _, _ := bruteLossMatrix(sigma, g, s)
		_, want, _ := eigExtremes(q)
		got, err := LossFactor(sigma, g, Compound(s...))
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got, want) > 1e-10 {
			t.Errorf("S=%v: %v, explicit inverse %v", s, got, want)
		}
	}
}

// TestTheorem34EqualsE1 checks that for block-diagonal noise with isotropic
// noise on the secret, Theorem 3.4's 1/sigma_s^2 + alpha* equals (E1), for
// basic and compound secrets.
func TestTheorem34EqualsE1(t *testing.T) {
	rng := newRNG(3)
	for _, sigma := range []*mat.SymDense{rbf(2.5, 30), rbf(6.1, 30), periodic(1, 30)} {
		for _, s := range [][]int{{12}, {12, 13}, {4, 20}} {
			u := gp.Complement(s, 30)
			guu := randomNoise(rng, len(u), 3)
			g := mat.NewSymDense(30, nil)
			for i, p := range u {
				for j, q := range u {
					g.SetSym(p, q, guu.At(i, j))
				}
			}
			for _, p := range s {
				g.SetSym(p, p, 0.3)
			}
			bound, err := BlockDiagonalLossBound(sigma, g, Compound(s...))
			if err != nil {
				t.Fatal(err)
			}
			exact, err := LossFactor(sigma, g, Compound(s...))
			if err != nil {
				t.Fatal(err)
			}
			if relErr(bound, exact) > 1e-10 {
				t.Errorf("S=%v: Theorem 3.4 %v, (E1) %v", s, bound, exact)
			}
			if bound < 1/0.3 {
				t.Errorf("bound %v below the direct term", bound)
			}
		}
	}
	// Cross terms are rejected.
	if _, err := BlockDiagonalLossBound(rbf(2, 5), randomNoise(rng, 5, 1), Basic(2)); !errors.Is(err, ErrCrossTerms) {
		t.Errorf("Theorem 3.4 with cross terms: error %v, want ErrCrossTerms", err)
	}
}

// TestBasicLossIsPrecisionGain checks the identity the evaluator rests on:
// for a basic secret, L = 1/posterior variance - 1/prior variance, with the
// posterior variance from an explicit (Sigma^-1 + SigmaG^-1)^-1.
func TestBasicLossIsPrecisionGain(t *testing.T) {
	sigma := gp.Gram(gp.Matern52{Variance: 2, Lengthscale: 2}, gp.Indices(15))
	g := randomNoise(newRNG(4), 15, 1.5)
	var si, gi, sum, post mat.Dense
	if err := si.Inverse(sigma); err != nil {
		t.Fatal(err)
	}
	if err := gi.Inverse(g); err != nil {
		t.Fatal(err)
	}
	sum.Add(&si, &gi)
	if err := post.Inverse(&sum); err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		want := 1/post.At(i, i) - 1/sigma.At(i, i)
		got, err := LossFactor(sigma, g, Basic(i))
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got, want) > 1e-9 {
			t.Errorf("secret %d: %v, precision gain %v", i, got, want)
		}
	}
}

// TestRenyiMonteCarloE1 estimates D_lambda between the release
// distributions under two hypotheses on the secret by Monte Carlo, sampling
// the generative model (conditional prior, then noise) with a fixed seed,
// and compares it with lambda/2 ||Delta||^2 L at the worst-case
// displacement. The log-likelihood ratio is evaluated independently of
// the code under test, in closed form checked against gonum's
// distmv.Normal.
func TestRenyiMonteCarloE1(t *testing.T) {
	t.Parallel()
	const n = 20
	rng := newRNG(5)
	cases := []struct {
		name  string
		sigma *mat.SymDense
		g     *mat.SymDense
		s     []int
	}{
		{"rbf iso basic", rbf(2.5, n), mustSym(IndependentUniform(n, 0.5)), []int{9}},
		{"rbf correlated compound", rbf(2, n), randomNoise(rng, n, 1), []int{9, 10}},
		{"periodic correlated basic", gp.Gram(gp.Periodic{Variance: 1, Lengthscale: 1, Period: 8}, gp.Indices(n)), randomNoise(rng, n, 2), []int{4}},
		// The designs tracepriv releases with: (E3) for every point, for a
		// compound secret and for a subset of the points.
		{"e3 every point", rbf(2.5, n), mustDesign(OptimalTarget(rbf(2.5, n), EveryPoint(n), []float64{1}, nil)), []int{9}},
		{"e3 compound", rbf(2, n), mustDesign(OptimalTarget(rbf(2, n), []Secret{Compound(9, 10)}, []float64{3}, nil)), []int{9, 10}},
		{"e3 subset", rbf(2.5, n), mustDesign(OptimalTarget(rbf(2.5, n), []Secret{Basic(0), Basic(4), Basic(8), Basic(12), Basic(16)}, []float64{1}, nil)), []int{8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, lambda := range []float64{2, 3} {
				l, err := LossFactor(c.sigma, c.g, Compound(c.s...))
				if err != nil {
					t.Fatal(err)
				}
				// Worst-case direction: top eigenvector of the loss matrix.
				q, at, k := bruteLossMatrix(c.sigma, c.g, c.s)
				var e mat.EigenSym
				e.Factorize(q, true)
				var vecs mat.Dense
				e.VectorsTo(&vecs)
				dir := mat.NewVecDense(len(c.s), nil)
				dir.CopyVec(vecs.ColView(len(c.s) - 1))
				// Scale the displacement so the divergence is about 0.3.
				r := math.Sqrt(0.6 / (lambda * l))
				dir.ScaleVec(r, dir)
				want := lambda / 2 * r * r * l

				cond, err := gp.Condition(c.sigma, c.s)
				if err != nil {
					t.Fatal(err)
				}
				xs0 := make([]float64, len(c.s)) // hypothesis s_i = 0
				// hypothesis s_j = Delta gives mean At Delta (m1 below)
				m0 := mat.NewVecDense(n, nil)
				var m1 mat.VecDense
				m1.MulVec(at, dir)
				p0, ok0 := distmv.NewNormal(m0.RawVector().Data, k, nil)
				p1, ok1 := distmv.NewNormal(m1.RawVector().Data, k, nil)
				if !ok0 || !ok1 {
					t.Fatal("K not positive definite")
				}
				rc, rg := sqrtPSD(cond.C), sqrtPSD(c.g)
				// -short: a quarter of the draws, so twice the standard
				// error (about 0.006 against the 0.3 asked for); the 4-SE
				// tolerance follows it and still fails a loss factor off by
				// 8 % or more (40,000 draws: 4 %).
				samples := 40000
				if testing.Short() {
					samples = 10000
				}
				// Both hypotheses share K, so the log-likelihood ratio is
				// linear in z: log p0(z) - log p1(z) = m1'K^-1 m1 / 2 -
				// (K^-1 m1)'z. It is evaluated so (two O(n^2) solves a draw
				// were 58 % of the test) and checked against distmv's
				// LogProb on the first draws.
				var kc mat.Cholesky
				if !kc.Factorize(k) {
					t.Fatal("K not positive definite")
				}
				var w mat.VecDense
				if err := kc.SolveVecTo(&w, &m1); err != nil {
					t.Fatal(err)
				}
				half := mat.Dot(&m1, &w) / 2
				logs := make([]float64, samples)
				z := mat.NewVecDense(n, nil)
				for i := range logs {
					// Z | X_S = 0: X_U = A*0 + C^1/2 xi, X_S = 0, plus G.
					var xu, gn mat.VecDense
					xu.MulVec(rc, stdNormals(rng, len(cond.U)))
					gn.MulVec(rg, stdNormals(rng, n))
					for j := range n {
						z.SetVec(j, gn.AtVec(j))
					}
					for j, p := range cond.U {
						z.SetVec(p, z.AtVec(p)+xu.AtVec(j))
					}
					for j, p := range cond.S {
						z.SetVec(p, z.AtVec(p)+xs0[j])
					}
					llr := half - mat.Dot(&w, z)
					if i < 100 {
						zz := z.RawVector().Data
						if ref := p0.LogProb(zz) - p1.LogProb(zz); math.Abs(llr-ref) > 1e-9*(1+math.Abs(ref)) {
							t.Fatalf("draw %d: log-likelihood ratio %v, distmv's %v", i, llr, ref)
						}
					}
					logs[i] = (lambda - 1) * llr
				}
				got, se := logMeanExp(logs)
				got /= lambda - 1
				se /= lambda - 1
				t.Logf("%s lambda=%v: Monte Carlo %.4f ± %.4f, (E1) %.4f", c.name, lambda, got, se, want)
				if math.Abs(got-want) > 4*se {
					t.Errorf("%s lambda=%v: Monte Carlo %v ± %v, (E1) %v", c.name, lambda, got, se, want)
				}
			}
		})
	}
}

func mustDesign(d *SetDesign, err error) *mat.SymDense {
	if err != nil {
		panic(err)
	}
	return d.SigmaG
}

func mustSym(g *mat.SymDense, err error) *mat.SymDense {
	if err != nil {
		panic(err)
	}
	return g
}

// logMeanExp returns log(mean(exp(x))) and its delta-method standard error.
func logMeanExp(x []float64) (float64, float64) {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	var s, s2 float64
	for _, v := range x {
		w := math.Exp(v - mx)
		s += w
		s2 += w * w
	}
	n := float64(len(x))
	mean := s / n
	variance := s2/n - mean*mean
	return mx + math.Log(mean), math.Sqrt(variance/n) / mean
}

func TestEpsilonAndTarget(t *testing.T) {
	// lambda/2 * kLoc * r^2 * L = 1.5 * 2 * 0.25 * 2.
	if got := Epsilon(2, 3, 0.5, 2); got != 1.5 {
		t.Errorf("Epsilon = %v, want 1.5", got)
	}
	tl, err := TargetLossFactor(1.5, 3, 0.5, 2)
	if err != nil || relErr(tl, 2) > 1e-15 {
		t.Errorf("TargetLossFactor = %v, %v, want 2", tl, err)
	}
	if _, err := TargetLossFactor(1, 1, 1, 1); err == nil {
		t.Error("lambda = 1 accepted")
	}
}

// TestEpsilons checks the per-secret epsilons and the worst against values
// worked by hand from lambda/2 * kLoc * r^2 * L, and that they meet the
// targets TargetLossFactors sets.
func TestEpsilons(t *testing.T) {
	secrets := []Secret{Basic(0), Compound(1, 2), {Indices: []int{3, 4}, KLoc: 1}}
	// lambda 3, r 0.5: 1.5 * 0.25 * kLoc * L = 0.375 kLoc L.
	eps, worst := Epsilons(secrets, []float64{2, 1, 4}, 3, 0.5)
	want := []float64{0.75, 0.75, 1.5}
	for i := range want {
		if eps[i] != want[i] {
			t.Errorf("secret %d: epsilon %v, want %v", i, eps[i], want[i])
		}
	}
	if worst != 1.5 {
		t.Errorf("worst %v, want 1.5", worst)
	}
	targets, err := TargetLossFactors(secrets, 0.8, 3, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	eps, worst = Epsilons(secrets, targets, 3, 0.5)
	for i, e := range eps {
		if relErr(e, 0.8) > 1e-15 {
			t.Errorf("secret %d at its target loss factor: epsilon %v, want 0.8", i, e)
		}
	}
	if relErr(worst, 0.8) > 1e-15 {
		t.Errorf("worst at the targets %v, want 0.8", worst)
	}
	if _, worst := Epsilons(nil, nil, 3, 0.5); worst != 0 {
		t.Errorf("no secrets: worst %v, want 0", worst)
	}
	if _, worst := Epsilons(secrets[:1], []float64{math.Inf(1)}, 3, 0.5); !math.IsInf(worst, 1) {
		t.Errorf("infinite loss factor: worst %v, want +Inf", worst)
	}
	defer func() {
		if recover() == nil {
			t.Error("mismatched lengths did not panic")
		}
	}()
	Epsilons(secrets, []float64{1}, 3, 0.5)
}

func TestLossInfiniteWithoutNoiseOnSecret(t *testing.T) {
	// Noise only away from the secret of an independent prior: the secret
	// is released exactly, the loss is infinite.
	sigma := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	g := mat.NewSymDense(3, []float64{0, 0, 0, 0, 1, 0, 0, 0, 1})
	l, err := LossFactor(sigma, g, Basic(0))
	if err != nil {
		t.Fatal(err)
	}
	// Sigma + SigmaG is positive definite, so no jitter: the posterior
	// variance of X_0 is exactly zero.
	if !math.IsInf(l, 1) {
		t.Errorf("loss %v, want +Inf", l)
	}
}

func TestLossErrors(t *testing.T) {
	sigma := rbf(1, 5)
	if _, err := LossFactor(sigma, rbf(1, 4), Basic(0)); err == nil {
		t.Error("size mismatch accepted")
	}
	if _, err := LossFactor(sigma, sigma, Basic(5)); err == nil {
		t.Error("out-of-range secret accepted")
	}
	if _, err := LossFactor(sigma, sigma, Compound(1, 1)); err == nil {
		t.Error("repeated index accepted")
	}
}
