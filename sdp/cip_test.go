package sdp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// rbf returns the RBF covariance exp(-(i-j)^2 / (2 l2)) on indices 0..n-1
// (unit variance), built inline so that this package does not depend on gp.
func rbf(n int, l2 float64) *mat.SymDense {
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d := float64(i - j)
			s.SetSym(i, j, math.Exp(-d*d/(2*l2)))
		}
	}
	return s
}

// basicSecret returns, for the basic secret at index s, At = Sigma[:,s] /
// Sigma_ss (n-vector, 1 at s) and the padded conditional covariance
// Ct = Sigma - Sigma[:,s] Sigma[s,:] / Sigma_ss (zero row and column at s),
// in the original coordinate order (cip-math.md section 1).
func basicSecret(sigma *mat.SymDense, s int) (at []float64, ct *mat.SymDense) {
	n := sigma.SymmetricDim()
	at = make([]float64, n)
	for i := range at {
		at[i] = sigma.At(i, s) / sigma.At(s, s)
	}
	ct = mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := sigma.At(i, j) - sigma.At(i, s)*sigma.At(s, j)/sigma.At(s, s)
			if i == s || j == s {
				v = 0
			}
			ct.SetSym(i, j, v)
		}
	}
	return at, ct
}

// sdpAModel states the paper's SDP_A for a basic secret (k = 1): variables
// X (= Ct + Sigma_g) and beta; maximise beta s.t. beta >= 0,
// P X P^T ⪰ beta I, X ⪰ Ct, tr X <= tr Ct + c, with P = At^+ (1×n).
func sdpAModel(at []float64, ct *mat.SymDense, c float64) (*Model, *SymVar, Var, []float64) {
	n := len(at)
	var aa float64
	for _, v := range at {
		aa += v * v
	}
	p := make([]float64, n)
	for i := range p {
		p[i] = at[i] / aa
	}
	m := NewModel()
	x := m.SymVar(n)
	beta := m.ScalarVar()
	m.Geq(beta.Expr(), Const(0))
	m.PSD(x.Expr().Congruence(mat.NewDense(1, n, p)).Minus(ScalarMat(beta.Expr(), eye(1))))
	m.PSD(x.Expr().Minus(ConstMat(ct)))
	m.Leq(x.Trace(), Const(mat.Trace(ct)+c))
	m.Maximize(beta.Expr())
	return m, x, beta, p
}

func eye(n int) *mat.SymDense {
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		d.SetSym(i, i, 1)
	}
	return d
}

// SDP_A for a basic secret: max p^T X p over X ⪰ Ct, tr(X - Ct) <= c is
// p^T Ct p + c ||p||^2, attained by the rank-one X - Ct = c p p^T / ||p||^2
// (cip-math.md sections 3 and 7). Computed here directly from p and Ct.
func TestSDPABasicSecretClosedForm(t *testing.T) {
	n, s, c := 20, 9, 1.0
	if !testing.Short() {
		n, s = 50, 24 // the paper's Figure 2a setting
	}
	at, ct := basicSecret(rbf(n, 36), s)
	m, x, beta, p := sdpAModel(at, ct, c)
	sol, err := m.Solve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Status != Optimal {
		t.Fatalf("status %v", sol.Status)
	}
	var pp float64
	for _, v := range p {
		pp += v * v
	}
	pv := mat.NewVecDense(n, p)
	want := mat.Inner(pv, ct, pv) + c*pp
	if relErr(sol.Objective, want) > 1e-7 || relErr(sol.Value(beta), want) > 1e-7 {
		t.Errorf("beta = %.12g (objective %.12g), closed form %.12g", sol.Value(beta), sol.Objective, want)
	}
	// The noise X - Ct is c p p^T / ||p||^2.
	xv := sol.SymValue(x)
	var worst float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g := xv.At(i, j) - ct.At(i, j)
			worst = math.Max(worst, math.Abs(g-c*p[i]*p[j]/pp))
		}
	}
	if worst > 1e-4 {
		t.Errorf("noise covariance differs from the rank-one optimum by %g", worst)
	}
}

// SDP_B: min tr Sigma s.t. Sigma ⪰ S_i. For commuting S_i = Q D_i Q^T the
// optimum is Q max(D_1, D_2) Q^T: here D_1 = diag(1,0,2), D_2 = diag(0,3,1),
// so the optimal trace is 1+3+2 = 6 for any rotation Q.
func TestSDPBCommuting(t *testing.T) {
	th := 0.7
	q := mat.NewDense(3, 3, []float64{
		math.Cos(th), -math.Sin(th), 0,
		math.Sin(th), math.Cos(th), 0,
		0, 0, 1,
	})
	rot := func(d ...float64) *mat.SymDense {
		var t, f mat.Dense
		t.Mul(q, mat.NewDiagDense(3, d))
		f.Mul(&t, q.T())
		out := mat.NewSymDense(3, nil)
		for i := 0; i < 3; i++ {
			for j := i; j < 3; j++ {
				out.SetSym(i, j, f.At(i, j))
			}
		}
		return out
	}
	m := NewModel()
	sig := m.SymVar(3)
	for _, si := range []*mat.SymDense{rot(1, 0, 2), rot(0, 3, 1)} {
		m.PSD(sig.Expr().Minus(ConstMat(si)))
	}
	m.Minimize(sig.Trace())
	sol, err := m.Solve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Status != Optimal || relErr(sol.Objective, 6) > 1e-8 {
		t.Fatalf("status %v, objective %.12g, want 6", sol.Status, sol.Objective)
	}
	want := rot(1, 3, 2)
	got := sol.SymValue(sig)
	if !mat.EqualApprox(got, want, 1e-5) {
		t.Errorf("Sigma = %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
}

// (E3) of cip-math.md for one basic secret: min tr G s.t.
// Ct + G - a a^T / t ⪰ 0, G ⪰ 0. With t = a^T (Ct + c0 I)^-1 a, computed
// by a Cholesky solve, (E2) says the least total noise is exactly c0.
func TestTargetEpsilonBasicSecret(t *testing.T) {
	n, s, c0 := 16, 7, 0.8
	at, ct := basicSecret(rbf(n, 9), s)
	k := mat.NewSymDense(n, nil)
	k.AddSym(ct, scaledSym(c0, eye(n)))
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("Ct + c0 I not positive definite")
	}
	av := mat.NewVecDense(n, at)
	var v mat.VecDense
	if err := ch.SolveVecTo(&v, av); err != nil {
		t.Fatal(err)
	}
	target := mat.Dot(av, &v)

	f := mat.NewSymDense(n, nil)
	f.SymRankOne(f, 1/target, av)
	f.AddSym(f, scaledSym(-1, ct))
	m := NewModel()
	g := m.SymVar(n)
	m.PSD(g.Expr().Minus(ConstMat(f)))
	m.PSD(g.Expr())
	m.Minimize(g.Trace())
	sol, err := m.Solve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Status != Optimal || relErr(sol.Objective, c0) > 1e-7 {
		t.Fatalf("status %v, least total noise %.12g, want %g", sol.Status, sol.Objective, c0)
	}
}

// Equality constraints: min x + y s.t. x - y = 1, [[x, 1], [1, y]] ⪰ 0.
// With x = y + 1: minimise 2y + 1 s.t. y(y+1) >= 1, y >= 0, so
// y = (sqrt5 - 1)/2 and the optimum is sqrt5.
func TestModelEquality(t *testing.T) {
	m := NewModel()
	x, y := m.ScalarVar(), m.ScalarVar()
	e00 := mat.NewSymDense(2, []float64{1, 0, 0, 0})
	e11 := mat.NewSymDense(2, []float64{0, 0, 0, 1})
	off := mat.NewSymDense(2, []float64{0, 1, 1, 0})
	m.PSD(ScalarMat(x.Expr(), e00).Plus(ScalarMat(y.Expr(), e11)).Plus(ConstMat(off)))
	m.Eq(x.Expr().Minus(y.Expr()), Const(1))
	m.Minimize(x.Expr().Plus(y.Expr()))
	sol, err := m.Solve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Status != Optimal || relErr(sol.Objective, math.Sqrt(5)) > 1e-8 {
		t.Fatalf("status %v, objective %.12g, want sqrt5", sol.Status, sol.Objective)
	}
	if relErr(sol.Value(y), (math.Sqrt(5)-1)/2) > 1e-6 {
		t.Errorf("y = %.10g", sol.Value(y))
	}
}
