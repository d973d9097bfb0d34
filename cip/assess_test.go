package cip

import (
	"errors"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/param"
)

// TestAssess checks an Assessment against the functions it gathers,
// recomputed one by one, for independent noise (the block-diagonal bound
// applies) and for a designed noise (it does not).
func TestAssess(t *testing.T) {
	t.Parallel()
	sigma := rbf(4, 30)
	secrets := []Secret{Basic(10), Compound(20, 21)}
	g, err := IndependentUniform(30, 3)
	if err != nil {
		t.Fatal(err)
	}
	opt := AssessOptions{Lambda: 2, Radius: 0.5, Delta: 0.05, BlockDiagonalBound: true}
	a, err := Assess(sigma, g, secrets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if a.N != 30 || math.Abs(a.Budget-3) > 1e-12 || len(a.Secrets) != 2 || len(a.BlockDiagonalBound) != 2 {
		t.Fatalf("assessment %+v", a)
	}
	worst := 0.0
	for i, s := range secrets {
		l, err := LossFactor(sigma, g, s)
		if err != nil {
			t.Fatal(err)
		}
		sa := a.Secrets[i]
		if math.Abs(sa.LossFactor-l) > 1e-9*l {
			t.Errorf("secret %d: loss factor %v, LossFactor %v", i, sa.LossFactor, l)
		}
		e := Epsilon(l, 2, 0.5, s.NumLocations())
		worst = math.Max(worst, e)
		if math.Abs(*sa.Epsilon-e) > 1e-9*e {
			t.Errorf("secret %d: epsilon %v, want %v", i, *sa.Epsilon, e)
		}
		if gap, _ := PriorPosteriorGap(*sa.Epsilon, 2, 0.05); *sa.Gap != gap {
			t.Errorf("secret %d: gap %v, want %v", i, *sa.Gap, gap)
		}
		// Independent uniform noise has no cross terms; for it the bound
		// is (E1) itself.
		if math.Abs(a.BlockDiagonalBound[i]-l) > 1e-6*l {
			t.Errorf("secret %d: block-diagonal bound %v, loss %v", i, a.BlockDiagonalBound[i], l)
		}
	}
	if *a.Epsilon != worst || a.LossFactor != math.Max(a.Secrets[0].LossFactor, a.Secrets[1].LossFactor) {
		t.Errorf("worst: epsilon %v (want %v), loss factor %v", *a.Epsilon, worst, a.LossFactor)
	}
	post, _ := NewPosterior(sigma, g)
	if p, _ := post.SecretsTwoSigma(secrets); a.Posterior2Sigma != p {
		t.Errorf("posterior 2-sigma %v, want %v", a.Posterior2Sigma, p)
	}

	// A design's own certified factors are what its Assess states, and an
	// independent Assess of its matrix agrees with them.
	d, err := DesignNoise(DesignRequest{Method: MethodE3, Sigma: sigma, Secrets: secrets, Budget: 3})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := d.Assess(sigma, secrets, AssessOptions{BlockDiagonalBound: true})
	if err != nil {
		t.Fatal(err)
	}
	ai, err := Assess(sigma, d.SigmaG, secrets, AssessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range secrets {
		if ad.Secrets[i].LossFactor != d.LossFactors[i] || math.Abs(ai.Secrets[i].LossFactor-d.LossFactors[i]) > 1e-6*d.LossFactors[i] {
			t.Errorf("secret %d: design %v, its Assess %v, Assess %v", i, d.LossFactors[i], ad.Secrets[i].LossFactor, ai.Secrets[i].LossFactor)
		}
	}
	if ad.Epsilon != nil || ad.Secrets[0].Epsilon != nil {
		t.Error("epsilons without lambda and radius")
	}
	if ad.BlockDiagonalBound != nil {
		t.Errorf("the optimal design correlates the secret with the rest, yet a bound %v", ad.BlockDiagonalBound)
	}
}

// TestAssessOptionsRejected checks that options the guarantee cannot be
// stated for are refused as parameter errors naming the field.
func TestAssessOptionsRejected(t *testing.T) {
	sigma := rbf(4, 10)
	g, _ := IndependentUniform(10, 1)
	for _, tc := range []struct {
		opt  AssessOptions
		name string
	}{
		{AssessOptions{Lambda: 2}, "Radius"},
		{AssessOptions{Lambda: 1, Radius: 1}, "Lambda"},
		{AssessOptions{Lambda: 2, Radius: -1}, "Radius"},
		{AssessOptions{Lambda: math.Inf(1), Radius: 1}, "Lambda"},
		{AssessOptions{Delta: 0.1}, "Delta"},
		{AssessOptions{Lambda: 2, Radius: 1, Delta: 1}, "Delta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Assess(sigma, g, []Secret{Basic(3)}, tc.opt)
			var pe *param.Error
			if !errors.As(err, &pe) || pe.Name != tc.name {
				t.Errorf("%+v: %v, want a parameter error on %s", tc.opt, err, tc.name)
			}
		})
	}
}
