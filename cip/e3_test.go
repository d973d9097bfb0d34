package cip

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sdp"
)

// e3Constraint returns F = At (Sigma_SS + I/t) At^T - Sigma for a secret,
// with At = Sigma_:S Sigma_SS^-1 formed by Cholesky solves.
func e3Constraint(t testing.TB, sigma mat.Symmetric, s Secret, target float64) *mat.SymDense {
	t.Helper()
	n := sigma.SymmetricDim()
	k := len(s.Indices)
	var ch mat.Cholesky
	if !ch.Factorize(gp.Sub(sigma, s.Indices)) {
		t.Fatalf("Sigma_SS of %v not positive definite", s.Indices)
	}
	var x mat.Dense // Sigma_SS^-1 Sigma_S: = At^T
	if err := ch.SolveTo(&x, gp.Block(sigma, s.Indices, allIndices(n))); err != nil {
		t.Fatal(err)
	}
	mid := mat.NewSymDense(k, nil)
	mid.CopySym(gp.Sub(sigma, s.Indices))
	for a := range k {
		mid.SetSym(a, a, mid.At(a, a)+1/target)
	}
	var t1, full mat.Dense
	t1.Mul(x.T(), mid)
	full.Mul(&t1, &x)
	out := symmetrize(&full)
	out.AddSym(out, scaledSym(sigma, -1))
	return out
}

// genericE3 solves (E3) with the generic interior-point solver: the
// reference the fast designer is checked against.
func genericE3(t testing.TB, sigma mat.Symmetric, secrets []Secret, ts []float64) (obj, bound float64) {
	t.Helper()
	n := sigma.SymmetricDim()
	m := sdp.NewModel()
	g := m.SymVar(n)
	for j, s := range secrets {
		m.PSD(g.Expr().Minus(sdp.ConstMat(e3Constraint(t, sigma, s, ts[j]))))
	}
	m.PSD(g.Expr())
	m.Minimize(g.Trace())
	sol, err := m.Solve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Status != sdp.Optimal && sol.Status != sdp.NearOptimal {
		t.Fatalf("generic (E3): status %v", sol.Status)
	}
	return sol.Objective, sol.Bound
}

// irregular returns a Gram matrix at uneven GeoLife-like sampling times
// (gaps of 1 to 5 units).
func irregular(n int, l float64) *mat.SymDense {
	gaps := []float64{1, 3, 2, 5, 1, 4, 2, 1, 3, 5}
	ts := make([]float64, n)
	for i := 1; i < n; i++ {
		ts[i] = ts[i-1] + gaps[i%len(gaps)]
	}
	return gp.Gram(gp.RBF{Variance: 1, Lengthscale: l}, ts)
}

func everyKth(n, k int) []Secret {
	var s []Secret
	for i := 0; i < n; i += k {
		s = append(s, Basic(i))
	}
	return s
}

func fullTargets(ts []float64, m int) []float64 {
	if len(ts) == m {
		return ts
	}
	out := make([]float64, m)
	for i := range out {
		out[i] = ts[0]
	}
	return out
}

// checkTargets fails unless every certified loss is within its target and
// the certificate is the Evaluator's on the returned noise.
func checkTargets(t *testing.T, sigma mat.Symmetric, secrets []Secret, d *SetDesign, ts []float64, budgetMode bool) {
	t.Helper()
	e, err := NewEvaluator(sigma, d.SigmaG)
	if err != nil {
		t.Fatal(err)
	}
	per, err := e.LossFactors(secrets)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for j, l := range per {
		if l != d.PerSecret[j] {
			t.Errorf("secret %v: PerSecret %v is not the certificate %v", secrets[j].Indices, d.PerSecret[j], l)
		}
		if l > ts[j] {
			t.Errorf("secret %v: certified loss factor %.12g above target %.12g", secrets[j].Indices, l, ts[j])
		}
		worst = math.Max(worst, l)
	}
	if d.LossFactor != worst {
		t.Errorf("LossFactor %v, worst certified %v", d.LossFactor, worst)
	}
	if relErr(d.Budget, mat.Trace(d.SigmaG)) > 1e-14 {
		t.Errorf("Budget %v, tr SigmaG %v", d.Budget, mat.Trace(d.SigmaG))
	}
	// In target mode the bound is on the least budget, in budget mode on
	// the least level.
	if v := d.Budget; !budgetMode && !(d.LowerBound <= v) {
		t.Errorf("lower bound %.12g above the budget %.12g", d.LowerBound, v)
	}
	if v := d.Level; budgetMode && !(d.LowerBound <= v) {
		t.Errorf("lower bound %.12g above the level %.12g", d.LowerBound, v)
	}
}

type e3Case struct {
	name    string
	sigma   *mat.SymDense
	secrets []Secret
	targets []float64
}

func e3Cases() []e3Case {
	s := rbf(3, 14)
	var varying []float64
	for i := range 14 {
		varying = append(varying, 1+float64(i%4))
	}
	return []e3Case{
		{"all points", s, EveryPoint(14), []float64{2}},
		{"all points, irregular times", irregular(14, 4), EveryPoint(14), []float64{1.5}},
		{"all points, varying targets", s, EveryPoint(14), varying},
		{"every 4th point", s, everyKth(14, 4), []float64{2}},
		{"compound", s, []Secret{Compound(6, 7, 8)}, []float64{2}},
		{"mixed", s, []Secret{Compound(2, 3), Basic(8), Basic(12), Compound(12, 13)}, []float64{2, 1, 3, 2}},
	}
}

// (E3) as the designer states it (At (Sigma_SS + I/t) At^T - Sigma) is
// cip-math's F = At At^T / t - Ct.
func TestE3ConstraintMatchesCipMath(t *testing.T) {
	sigma := rbf(3, 12)
	for _, s := range []Secret{Basic(0), Basic(5), Compound(4, 5), Compound(2, 7, 9)} {
		t.Run(fmt.Sprint(s.Indices), func(t *testing.T) {
			tgt := 1.7
			f := e3Constraint(t, sigma, s, tgt)
			cond, err := gp.Condition(sigma, s.Indices)
			if err != nil {
				t.Fatal(err)
			}
			ct := paddedConditional(cond, 12)
			at := mat.NewDense(12, len(s.Indices), nil)
			for c, i := range cond.S {
				at.Set(i, c, 1)
			}
			for r, i := range cond.U {
				for c := range cond.S {
					at.Set(i, c, cond.A.At(r, c))
				}
			}
			want := mat.NewSymDense(12, nil)
			want.SymOuterK(1/tgt, at)
			want.AddSym(want, scaledSym(ct, -1))
			if !mat.EqualApprox(f, want, 1e-9) {
				t.Errorf("secret %v: F differs from At At^T/t - Ct", s.Indices)
			}
		})
	}
}

// The fast designer agrees with a generic interior-point solve of (E3),
// meets every target on its certificate, and its lower bound is below
// both its budget and the generic optimum.
func TestOptimalTargetMatchesGenericSDP(t *testing.T) {
	t.Parallel()
	for _, c := range e3Cases() {
		t.Run(c.name, func(t *testing.T) {
			d, err := OptimalTarget(c.sigma, c.secrets, c.targets, nil)
			if err != nil {
				t.Fatal(err)
			}
			ts := fullTargets(c.targets, len(c.secrets))
			checkTargets(t, c.sigma, c.secrets, d, ts, false)
			obj, _ := genericE3(t, c.sigma, c.secrets, ts)
			if relErr(d.Budget, obj) > 1e-5 {
				t.Errorf("%s: budget %.10g, generic (E3) optimum %.10g", d.Method, d.Budget, obj)
			}
			// The generic solver's answer meets its constraints only to its
			// tolerance (1e-8 relative to the data), so it can sit below the
			// true optimum by about that much.
			if d.LowerBound > obj*(1+1e-6) {
				t.Errorf("lower bound %.10g above the generic optimum %.10g", d.LowerBound, obj)
			}
			if gap := (d.Budget - d.LowerBound) / d.Budget; gap > 1e-5 {
				t.Errorf("%s: optimality gap %.3g (budget %.10g, bound %.10g)", d.Method, gap, d.Budget, d.LowerBound)
			}
		})
	}
}

// Minimality: 1% less noise, either the same design scaled or the best
// design for that budget, misses some target.
func TestOptimalTargetIsMinimal(t *testing.T) {
	t.Parallel()
	for _, c := range e3Cases() {
		t.Run(c.name, func(t *testing.T) {
			ts := fullTargets(c.targets, len(c.secrets))
			d, err := OptimalTarget(c.sigma, c.secrets, c.targets, nil)
			if err != nil {
				t.Fatal(err)
			}
			per, err := LossFactors(c.sigma, scaledSym(d.SigmaG, 0.99), c.secrets)
			if err != nil {
				t.Fatal(err)
			}
			missed := false
			for j, l := range per {
				missed = missed || l > ts[j]
			}
			if !missed {
				t.Errorf("0.99 x the design still meets every target")
			}
			// Budget mode at 0.99 x the budget, with targets equal to a
			// common level over KLoc, reaches a level above the target's.
			level := 0.0
			for j, s := range c.secrets {
				level = math.Max(level, ts[j]*float64(s.NumLocations()))
			}
			uniform := true
			for j, s := range c.secrets {
				uniform = uniform && ts[j]*float64(s.NumLocations()) == level
			}
			if !uniform {
				return
			}
			b, err := OptimalBudget(c.sigma, c.secrets, 0.99*d.Budget, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !(b.Level > level) {
				t.Errorf("at 0.99 x the least budget the best level is %.10g, not above %.10g", b.Level, level)
			}
		})
	}
}

// One basic secret: (E3) reduces to (E2).
func TestOptimalSetSingleBasic(t *testing.T) {
	t.Parallel()
	sigma := rbf(6.1, 50)
	for _, i := range []int{0, 24} {
		want, err := OptimalBasicTarget(sigma, i, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := OptimalTarget(sigma, []Secret{Basic(i)}, []float64{2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got.Budget, want.Budget) > 1e-6 {
			t.Errorf("secret %d: budget %.10g, OptimalBasicTarget %.10g", i, got.Budget, want.Budget)
		}
		checkTargets(t, sigma, []Secret{Basic(i)}, got, []float64{2}, false)
		wb, err := OptimalBasic(sigma, i, 1)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := OptimalBudget(sigma, []Secret{Basic(i)}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(gb.LossFactor, wb.LossFactor) > 1e-6 {
			t.Errorf("secret %d: loss factor %.10g at budget 1, OptimalBasic %.10g", i, gb.LossFactor, wb.LossFactor)
		}
	}
}

// Budget mode spends exactly the budget, its level is certified and
// bounded below, and it beats the paper's Multiple Secrets at the paper's
// total noise.
func TestOptimalBudget(t *testing.T) {
	t.Parallel()
	n := 12
	sigma := rbf(3, n)
	secrets := EveryPoint(n)
	paper, paperPer, err := PaperMultipleSecrets(sigma, secrets, 0.02*float64(n), nil)
	if err != nil {
		t.Fatal(err)
	}
	paperWorst := 0.0
	for _, l := range paperPer {
		paperWorst = math.Max(paperWorst, l)
	}
	for _, c := range []struct {
		name    string
		secrets []Secret
	}{
		{"all points", secrets},
		{"every 3rd point", everyKth(n, 3)},
		{"mixed", []Secret{Compound(2, 3), Basic(6), Compound(9, 11)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := OptimalBudget(sigma, c.secrets, paper.Budget, nil)
			if err != nil {
				t.Fatal(err)
			}
			if relErr(d.Budget, paper.Budget) > 1e-9 || relErr(mat.Trace(d.SigmaG), paper.Budget) > 1e-9 {
				t.Errorf("%s: tr SigmaG %.12g, budget %.12g", c.name, mat.Trace(d.SigmaG), paper.Budget)
			}
			checkTargets(t, sigma, c.secrets, d, d.Targets, true)
			level := 0.0
			for j, s := range c.secrets {
				level = math.Max(level, d.PerSecret[j]*float64(s.NumLocations()))
			}
			if level != d.Level {
				t.Errorf("%s: Level %v, certified %v", c.name, d.Level, level)
			}
			if !(d.LowerBound <= d.Level) || d.Level-d.LowerBound > 1e-5*d.Level {
				t.Errorf("%s: level %.10g, lower bound %.10g", c.name, d.Level, d.LowerBound)
			}
			if c.name == "all points" && !(d.LossFactor < paperWorst) {
				t.Errorf("worst loss factor %.4g, the paper's Multiple Secrets %.4g at the same total noise", d.LossFactor, paperWorst)
			}
			// Target mode at the level found needs the same budget.
			tt, err := OptimalTarget(sigma, c.secrets, d.Targets, nil)
			if err != nil {
				t.Fatal(err)
			}
			if relErr(tt.Budget, d.Budget) > 1e-5 {
				t.Errorf("%s: target mode at the budget-mode level needs %.10g, budget %.10g", c.name, tt.Budget, d.Budget)
			}
		})
	}
}

// cip-math section 4: all 50 basic secrets, RBF l_eff 6.1, total noise
// 17.2. The exact minimax design reaches 2.91; the paper's Multiple
// Secrets 7.45.
func TestOptimalBudgetFigure2c(t *testing.T) {
	d, err := OptimalBudget(rbf(6.1, 50), EveryPoint(50), 17.2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.LossFactor > 2.91 || d.LossFactor >= 7.45 {
		t.Errorf("worst certified loss factor %.6g", d.LossFactor)
	}
	if d.Level-d.LowerBound > 1e-9*d.Level {
		t.Errorf("level %.12g, lower bound %.12g", d.Level, d.LowerBound)
	}
	if relErr(d.Budget, 17.2) > 1e-12 {
		t.Errorf("budget %.15g", d.Budget)
	}
}

// Proportional noise c Sigma gives every basic secret loss factor
// 1/(c Sigma_ii) exactly, whatever the prior.
func TestProportionalLossExact(t *testing.T) {
	for _, sigma := range []*mat.SymDense{rbf(6.1, 30), irregular(30, 4), periodic(3, 30)} {
		c := 0.37
		per, err := LossFactors(sigma, scaledSym(sigma, c), EveryPoint(30))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range per {
			if want := 1 / (c * sigma.At(i, i)); relErr(l, want) > 1e-9 {
				t.Errorf("point %d: loss factor %.12g, 1/(c Sigma_ii) %.12g", i, l, want)
			}
		}
	}
}

func TestOptimalSetProgress(t *testing.T) {
	calls := 0
	opts := &SetOptions{Progress: func(done, total int) {
		calls++
		if done < 1 || done > total {
			t.Errorf("progress %d of %d", done, total)
		}
	}}
	d, err := OptimalTarget(rbf(3, 12), everyKth(12, 3), []float64{2}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if calls != d.Iterations || calls == 0 {
		t.Errorf("%d progress calls, %d iterations", calls, d.Iterations)
	}
}

func TestOptimalSetBadInput(t *testing.T) {
	sigma := rbf(3, 8)
	for _, c := range []struct {
		name    string
		sigma   mat.Symmetric
		secrets []Secret
		targets []float64
		budget  float64
		want    string
	}{
		{"no secrets", sigma, nil, []float64{1}, 1, "no secrets"},
		{"zero target", sigma, EveryPoint(8), []float64{0}, 1, "target"},
		{"negative target", sigma, []Secret{Basic(1)}, []float64{-1}, 1, "target"},
		{"NaN target", sigma, []Secret{Basic(1)}, []float64{math.NaN()}, 1, "target"},
		{"infinite target", sigma, []Secret{Basic(1)}, []float64{math.Inf(1)}, 1, "target"},
		{"mismatched targets", sigma, EveryPoint(8), []float64{1, 2}, 1, "2 targets for 8 secrets"},
		{"index out of range", sigma, []Secret{Basic(8)}, []float64{1}, 1, "out of range"},
		{"repeated index", sigma, []Secret{Compound(2, 2)}, []float64{1}, 1, "repeated"},
		{"nil prior", nil, []Secret{Basic(0)}, []float64{1}, 1, "nil"},
		{"zero budget", sigma, []Secret{Basic(0)}, []float64{1}, 0, "budget"},
		{"NaN budget", sigma, []Secret{Basic(0)}, []float64{1}, math.NaN(), "budget"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.budget == 1 {
				_, err = OptimalTarget(c.sigma, c.secrets, c.targets, nil)
			} else {
				_, err = OptimalBudget(c.sigma, c.secrets, c.budget, nil)
			}
			// Every refusal of bad input is a *param.Error (a bad target,
			// budget, secret or prior), without the package's name: the
			// caller adds its context once.
			var pe *param.Error
			switch {
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
			case !errors.As(err, &pe):
				t.Errorf("%s: error %v (%T), want a *param.Error", c.name, err, err)
			case strings.HasPrefix(err.Error(), "cip: "):
				t.Errorf("%s: error %v starts with the package's name", c.name, err)
			}
		})
	}
	if _, err := OptimalBudget(sigma, nil, 1, nil); err == nil {
		t.Errorf("budget mode without secrets: no error")
	}
}
