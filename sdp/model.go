package sdp

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Model builds a Problem the way papers state SDPs: scalar and symmetric
// matrix variables, affine expressions, LMIs, linear (in)equalities and an
// objective.
//
//	m := sdp.NewModel()
//	X := m.SymVar(n)
//	beta := m.ScalarVar()
//	m.PSD(X.Expr().Minus(sdp.ConstMat(ct)))           // X ⪰ Ct
//	m.Leq(X.Trace(), sdp.Const(trCt+c))                // tr X <= tr Ct + c
//	m.PSD(X.Expr().Congruence(p).Minus(sdp.ScalarMat(beta.Expr(), id)))
//	m.Maximize(beta.Expr())
//	sol, err := m.Solve(nil)
type Model struct {
	nvars    int
	obj      LinExpr
	maximize bool
	lmis     []LMI
	lin      []Linear
	eqs      []LinExpr // each == 0
}

// NewModel returns an empty model.
func NewModel() *Model { return &Model{} }

// Var is a scalar variable of a Model.
type Var struct{ index int }

// SymVar is a symmetric matrix variable of a Model: one scalar variable per
// entry of its upper triangle.
type SymVar struct {
	n, base int
}

// ScalarVar adds a free scalar variable.
func (m *Model) ScalarVar() Var {
	m.nvars++
	return Var{index: m.nvars - 1}
}

// SymVar adds a free symmetric n×n matrix variable (n(n+1)/2 scalars).
func (m *Model) SymVar(n int) *SymVar {
	x := &SymVar{n: n, base: m.nvars}
	m.nvars += n * (n + 1) / 2
	return x
}

// N returns the order of X.
func (x *SymVar) N() int { return x.n }

// index of entry (i, j), i <= j, in row-major upper-triangle order.
func (x *SymVar) index(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return x.base + i*x.n - i*(i-1)/2 + (j - i)
}

// At returns the scalar variable X_ij (= X_ji).
func (x *SymVar) At(i, j int) Var { return Var{index: x.index(i, j)} }

// Expr returns X as an affine matrix expression.
func (x *SymVar) Expr() MatExpr {
	e := MatExpr{n: x.n}
	for i := 0; i < x.n; i++ {
		for j := i; j < x.n; j++ {
			f := NewSparse(x.n)
			f.Entries = []Entry{{I: i, J: j, V: 1}}
			e.terms = append(e.terms, Term{Var: x.index(i, j), F: f})
		}
	}
	return e
}

// Trace returns tr X.
func (x *SymVar) Trace() LinExpr {
	var e LinExpr
	for i := 0; i < x.n; i++ {
		e.terms = append(e.terms, LinTerm{Var: x.index(i, i), V: 1})
	}
	return e
}

// LinExpr is an affine scalar expression sum_j a_j x_j + c. Its methods
// return new expressions and never modify the receiver.
type LinExpr struct {
	terms []LinTerm
	c     float64
}

// Const returns the constant expression c.
func Const(c float64) LinExpr { return LinExpr{c: c} }

// Expr returns v as an expression.
func (v Var) Expr() LinExpr { return LinExpr{terms: []LinTerm{{Var: v.index, V: 1}}} }

// Plus returns e + f.
func (e LinExpr) Plus(f LinExpr) LinExpr {
	t := make([]LinTerm, 0, len(e.terms)+len(f.terms))
	t = append(append(t, e.terms...), f.terms...)
	return LinExpr{terms: t, c: e.c + f.c}
}

// Minus returns e - f.
func (e LinExpr) Minus(f LinExpr) LinExpr { return e.Plus(f.Scale(-1)) }

// Scale returns a*e.
func (e LinExpr) Scale(a float64) LinExpr {
	t := make([]LinTerm, len(e.terms))
	for i, x := range e.terms {
		t[i] = LinTerm{Var: x.Var, V: a * x.V}
	}
	return LinExpr{terms: t, c: a * e.c}
}

// MatExpr is an affine symmetric matrix expression C + sum_j x_j F_j. Its
// methods return new expressions and never modify the receiver.
type MatExpr struct {
	n     int
	c     *mat.SymDense // nil for zero
	terms []Term
}

// ConstMat returns the constant expression a.
func ConstMat(a mat.Symmetric) MatExpr {
	n := a.SymmetricDim()
	c := mat.NewSymDense(n, nil)
	c.CopySym(a)
	return MatExpr{n: n, c: c}
}

// ScalarMat returns the expression v * a, e.g. beta*I.
func ScalarMat(v LinExpr, a mat.Symmetric) MatExpr {
	n := a.SymmetricDim()
	f := SparseFromDense(a)
	e := MatExpr{n: n}
	for _, t := range v.terms {
		g := &Sparse{N: n, Entries: make([]Entry, len(f.Entries))}
		for i, x := range f.Entries {
			g.Entries[i] = Entry{I: x.I, J: x.J, V: t.V * x.V}
		}
		e.terms = append(e.terms, Term{Var: t.Var, F: g})
	}
	if v.c != 0 {
		e.c = mat.NewSymDense(n, nil)
		e.c.ScaleSym(v.c, a)
	}
	return e
}

// N returns the order of e.
func (e MatExpr) N() int { return e.n }

// Plus returns e + f; it panics if the orders differ, as gonum's mat does.
func (e MatExpr) Plus(f MatExpr) MatExpr {
	if e.n != f.n {
		panic(fmt.Sprintf("sdp: adding matrix expressions of orders %d and %d", e.n, f.n))
	}
	out := MatExpr{n: e.n}
	out.terms = append(append(out.terms, e.terms...), f.terms...)
	switch {
	case e.c == nil && f.c == nil:
	case e.c == nil:
		out.c = mat.NewSymDense(e.n, nil)
		out.c.CopySym(f.c)
	case f.c == nil:
		out.c = mat.NewSymDense(e.n, nil)
		out.c.CopySym(e.c)
	default:
		out.c = mat.NewSymDense(e.n, nil)
		out.c.AddSym(e.c, f.c)
	}
	return out
}

// Minus returns e - f.
func (e MatExpr) Minus(f MatExpr) MatExpr { return e.Plus(f.Scale(-1)) }

// Scale returns a*e.
func (e MatExpr) Scale(a float64) MatExpr {
	out := MatExpr{n: e.n, terms: make([]Term, len(e.terms))}
	for i, t := range e.terms {
		g := &Sparse{N: e.n, Entries: make([]Entry, len(t.F.Entries))}
		for k, x := range t.F.Entries {
			g.Entries[k] = Entry{I: x.I, J: x.J, V: a * x.V}
		}
		out.terms[i] = Term{Var: t.Var, F: g}
	}
	if e.c != nil {
		out.c = mat.NewSymDense(e.n, nil)
		out.c.ScaleSym(a, e.c)
	}
	return out
}

// Congruence returns P e P^T for a k×n matrix P (n the order of e).
func (e MatExpr) Congruence(p mat.Matrix) MatExpr {
	k, n := p.Dims()
	if n != e.n {
		panic(fmt.Sprintf("sdp: congruence by a %d×%d matrix of an order-%d expression", k, n, e.n))
	}
	out := MatExpr{n: k}
	col := func(a int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = p.At(i, a)
		}
		return v
	}
	for _, t := range e.terms {
		// P F P^T = sum over entries of v (p_a p_b^T + p_b p_a^T) (once if a = b).
		d := mat.NewSymDense(k, nil)
		for _, x := range t.F.Entries {
			pa, pb := col(x.I), col(x.J)
			for i := 0; i < k; i++ {
				for j := i; j < k; j++ {
					v := pa[i] * pb[j]
					if x.I != x.J {
						v += pb[i] * pa[j]
					}
					d.SetSym(i, j, d.At(i, j)+x.V*v)
				}
			}
		}
		f := SparseFromDense(d)
		if len(f.Entries) > 0 {
			out.terms = append(out.terms, Term{Var: t.Var, F: f})
		}
	}
	if e.c != nil {
		var t, full mat.Dense
		t.Mul(p, e.c)
		full.Mul(&t, p.T())
		out.c = mat.NewSymDense(k, nil)
		for i := 0; i < k; i++ {
			for j := i; j < k; j++ {
				out.c.SetSym(i, j, 0.5*(full.At(i, j)+full.At(j, i)))
			}
		}
	}
	return out
}

// Trace returns tr e.
func (e MatExpr) Trace() LinExpr {
	var out LinExpr
	for _, t := range e.terms {
		var s float64
		for _, x := range t.F.Entries {
			if x.I == x.J {
				s += x.V
			}
		}
		if s != 0 {
			out.terms = append(out.terms, LinTerm{Var: t.Var, V: s})
		}
	}
	if e.c != nil {
		out.c = mat.Trace(e.c)
	}
	return out
}

// PSD adds the LMI e ⪰ 0.
func (m *Model) PSD(e MatExpr) {
	l := LMI{Size: e.n, Terms: e.terms}
	if e.c != nil {
		l.F0 = SparseFromDense(e.c)
	}
	m.lmis = append(m.lmis, l)
}

// Geq adds a >= b.
func (m *Model) Geq(a, b LinExpr) {
	d := a.Minus(b)
	m.lin = append(m.lin, Linear{F0: d.c, Terms: d.terms})
}

// Leq adds a <= b.
func (m *Model) Leq(a, b LinExpr) { m.Geq(b, a) }

// Eq adds a == b.
func (m *Model) Eq(a, b LinExpr) { m.eqs = append(m.eqs, a.Minus(b)) }

// Minimize sets the objective to minimise e.
func (m *Model) Minimize(e LinExpr) { m.obj, m.maximize = e, false }

// Maximize sets the objective to maximise e.
func (m *Model) Maximize(e LinExpr) { m.obj, m.maximize = e, true }

// Problem returns the model as a Problem (a minimisation; a maximised
// objective is negated, and its constant is dropped).
func (m *Model) Problem() *Problem {
	p := &Problem{C: make([]float64, m.nvars), LMIs: m.lmis, Linear: m.lin}
	sign := 1.0
	if m.maximize {
		sign = -1
	}
	for _, t := range m.obj.terms {
		p.C[t.Var] += sign * t.V
	}
	if len(m.eqs) > 0 {
		p.A = mat.NewDense(len(m.eqs), m.nvars, nil)
		p.B = make([]float64, len(m.eqs))
		for i, e := range m.eqs {
			for _, t := range e.terms {
				p.A.Set(i, t.Var, p.A.At(i, t.Var)+t.V)
			}
			p.B[i] = -e.c
		}
	}
	return p
}

// Solution is the result of Model.Solve.
type Solution struct {
	Status Status
	// Objective is the objective of the model at the primal solution, in
	// the model's own sense (the maximum for Maximize) and with its constant.
	Objective float64
	// Bound is the dual objective in the same sense: an upper bound for a
	// maximisation (a lower bound for a minimisation) when Status is Optimal.
	Bound  float64
	Result *Result
}

// Solve solves the model.
func (m *Model) Solve(settings *Settings) (*Solution, error) {
	if m.nvars == 0 {
		return nil, fmt.Errorf("sdp: model has no variables")
	}
	r, err := Solve(m.Problem(), settings)
	if err != nil {
		return nil, err
	}
	s := &Solution{Status: r.Status, Result: r, Objective: r.PrimalObj + m.obj.c, Bound: r.DualObj + m.obj.c}
	if m.maximize {
		s.Objective, s.Bound = -r.PrimalObj+m.obj.c, -r.DualObj+m.obj.c
	}
	return s, nil
}

// Value returns the value of v at the solution.
func (s *Solution) Value(v Var) float64 { return s.Result.X[v.index] }

// Eval returns the value of e at the solution.
func (s *Solution) Eval(e LinExpr) float64 {
	t := e.c
	for _, x := range e.terms {
		t += x.V * s.Result.X[x.Var]
	}
	return t
}

// SymValue returns the value of X at the solution.
func (s *Solution) SymValue(x *SymVar) *mat.SymDense {
	out := mat.NewSymDense(x.n, nil)
	for i := 0; i < x.n; i++ {
		for j := i; j < x.n; j++ {
			out.SetSym(i, j, s.Result.X[x.index(i, j)])
		}
	}
	return out
}

// Dual returns the dual matrix of the k-th LMI added with PSD (its
// Lagrange multiplier, positive semidefinite at the optimum).
func (s *Solution) Dual(k int) *mat.SymDense {
	if k < 0 || k >= len(s.Result.ZBlocks) {
		return nil
	}
	return s.Result.ZBlocks[k]
}
