package cip

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestOptimalBasicTable reproduces the (E2) columns of cip-math.md's table
// (RBF on indices, n = 50, secret 24, total noise 1.0). The note prints
// three significant figures; the check is against those digits, with the
// loss factor certified by (E1) for the design returned and the posterior
// metric from the GP adversary.
func TestOptimalBasicTable(t *testing.T) {
	rows := []struct{ leff, loss, twoSigma float64 }{
		{1.0, 1.53, 1.26},
		{2.5, 3.49, 0.94},
		{6.1, 7.72, 0.68},
		{10, 11.9, 0.56},
	}
	for _, r := range rows {
		sigma := rbf(r.leff, 50)
		d, err := OptimalBasic(sigma, 24, 1.0)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d.Budget-1) > 1e-12 {
			t.Errorf("l_eff %v: budget %v, want 1", r.leff, d.Budget)
		}
		// The certificate agrees with the closed form a^T (Ct + cI)^-1 a.
		if relErr(d.LossFactor, d.Predicted) > 1e-9 {
			t.Errorf("l_eff %v: certified %v, closed form %v", r.leff, d.LossFactor, d.Predicted)
		}
		// And with the literal (E1), although Ct + SigmaG is nearly
		// singular for this rank-one noise.
		direct, err := LossFactorDirect(sigma, d.SigmaG, Basic(24))
		if err != nil {
			t.Fatal(err)
		}
		if relErr(direct, d.LossFactor) > 1e-9 {
			t.Errorf("l_eff %v: certified %v, direct (E1) %v", r.leff, d.LossFactor, direct)
		}
		p, err := NewPosterior(sigma, d.SigmaG)
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := p.TwoSigma(Basic(24))
		t.Logf("l_eff %v: loss factor %.6f (jitter %.2g), posterior 2-sigma %.6f", r.leff, d.LossFactor, d.Jitter, ts)
		if !roundsTo(d.LossFactor, r.loss) {
			t.Errorf("l_eff %v: loss factor %v, note says %v", r.leff, d.LossFactor, r.loss)
		}
		if !roundsTo(ts, r.twoSigma) {
			t.Errorf("l_eff %v: posterior 2-sigma %v, note says %v", r.leff, ts, r.twoSigma)
		}
	}
}

// roundsTo reports whether x rounds to the printed value (its number of
// decimals: 1.53 -> 2, 11.9 -> 1).
func roundsTo(x, printed float64) bool {
	for dec := 0; dec <= 6; dec++ {
		s := math.Pow(10, float64(dec))
		if math.Abs(math.Round(printed*s)-printed*s) < 1e-9 {
			return math.Round(x*s) == math.Round(printed*s)
		}
	}
	return false
}

// TestOptimalBasicBeatsAlternatives checks that at equal budget no random
// feasible design (full-rank, rank-one, perturbations of the optimum) and
// neither Approach C baseline certifies a smaller loss factor.
func TestOptimalBasicBeatsAlternatives(t *testing.T) {
	rng := newRNG(9)
	for _, sigma := range []*mat.SymDense{rbf(2.5, 30), rbf(6.1, 30), periodic(1, 30)} {
		const i, budget = 14, 0.6
		d, err := OptimalBasic(sigma, i, budget)
		if err != nil {
			t.Fatal(err)
		}
		alts := map[string]*mat.SymDense{}
		alts["uniform"], _ = IndependentUniform(30, budget)
		alts["concentrated"], _ = IndependentConcentrated(30, Basic(i), budget)
		for k := range 40 {
			alts["full"+string(rune('a'+k))] = randomNoise(rng, 30, budget)
			alts["rank1"+string(rune('a'+k))] = randomRankOne(rng, 30, budget)
			// A small perturbation of the optimum, renormalised.
			pert := randomNoise(rng, 30, 0.01*budget)
			pert.AddSym(pert, d.SigmaG)
			pert.ScaleSym(budget/mat.Trace(pert), pert)
			alts["perturbed"+string(rune('a'+k))] = pert
		}
		for name, g := range alts {
			l, err := LossFactor(sigma, g, Basic(i))
			if err != nil {
				t.Fatal(err)
			}
			if l < d.LossFactor*(1-1e-9) {
				t.Errorf("%s beats (E2): %v < %v", name, l, d.LossFactor)
			}
		}
		lu, _ := LossFactor(sigma, alts["uniform"], Basic(i))
		lc, _ := LossFactor(sigma, alts["concentrated"], Basic(i))
		t.Logf("(E2) %.4f, uniform %.4f, concentrated %.4f", d.LossFactor, lu, lc)
	}
}

// TestOptimalBasicTarget checks target mode: the design meets the target,
// and the optimal design at a 1% smaller budget (the least loss any noise
// of that budget can reach) violates it.
func TestOptimalBasicTarget(t *testing.T) {
	for _, sigma := range []*mat.SymDense{rbf(1, 50), rbf(6.1, 50), rbf(10, 50), periodic(1.07, 48)} {
		for _, target := range []float64{0.5, 5, 40} {
			d, err := OptimalBasicTarget(sigma, 24, target)
			if err != nil {
				t.Fatal(err)
			}
			if d.LossFactor > target {
				t.Errorf("target %v: certified loss %v", target, d.LossFactor)
			}
			smaller, err := OptimalBasic(sigma, 24, 0.99*d.Budget)
			if err != nil {
				t.Fatal(err)
			}
			if !(smaller.LossFactor > target) {
				t.Errorf("target %v: budget %v is not minimal (%v at 99%%)", target, d.Budget, smaller.LossFactor)
			}
			// Same problem in budget mode gives the same loss.
			back, _ := OptimalBasic(sigma, 24, d.Budget)
			if relErr(back.LossFactor, d.LossFactor) > 1e-9 {
				t.Errorf("budget mode at the target budget: %v vs %v", back.LossFactor, d.LossFactor)
			}
		}
	}
	if _, err := OptimalBasicTarget(rbf(1, 5), 2, 0); err == nil {
		t.Error("zero target accepted")
	}
	if _, err := OptimalBasic(rbf(1, 5), 2, 0); err == nil {
		t.Error("zero budget accepted")
	}
}

func TestOptimalBasicEdges(t *testing.T) {
	// A single point: all noise on it, L = 1/c.
	one := mat.NewSymDense(1, []float64{1})
	d, err := OptimalBasic(one, 0, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(d.LossFactor, 4) > 1e-12 {
		t.Errorf("one point: loss %v, want 4", d.LossFactor)
	}
	// Independent points: nothing to gain from correlation, the optimum is
	// concentrated noise, L = 1/c.
	id := mat.NewSymDense(5, []float64{1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1})
	d, _ = OptimalBasic(id, 3, 0.5)
	if relErr(d.LossFactor, 2) > 1e-12 || math.Abs(d.SigmaG.At(3, 3)-0.5) > 1e-12 {
		t.Errorf("independent prior: loss %v, noise on secret %v", d.LossFactor, d.SigmaG.At(3, 3))
	}
}
