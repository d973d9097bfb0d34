package sdp

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Entry is one stored entry of a sparse symmetric matrix. Only the upper
// triangle is stored: an entry with I < J stands for both (I, J) and (J, I).
type Entry struct {
	I, J int
	V    float64
}

// Sparse is a sparse symmetric matrix of order N, stored as its upper
// triangle. Constraint matrices of modelling problems are mostly elementary
// (one or two nonzeros), and the Schur-complement assembly exploits that.
type Sparse struct {
	N       int
	Entries []Entry
}

// NewSparse returns an empty n×n sparse symmetric matrix.
func NewSparse(n int) *Sparse { return &Sparse{N: n} }

// Set adds v at (i, j) and (j, i). Repeated calls for the same position add up.
func (s *Sparse) Set(i, j int, v float64) {
	if i > j {
		i, j = j, i
	}
	s.Entries = append(s.Entries, Entry{I: i, J: j, V: v})
}

// normalize sorts the entries, merges duplicates and drops zeros.
func (s *Sparse) normalize() {
	sort.Slice(s.Entries, func(a, b int) bool {
		ea, eb := s.Entries[a], s.Entries[b]
		if ea.I != eb.I {
			return ea.I < eb.I
		}
		return ea.J < eb.J
	})
	out := s.Entries[:0]
	for _, e := range s.Entries {
		if n := len(out); n > 0 && out[n-1].I == e.I && out[n-1].J == e.J {
			out[n-1].V += e.V
			continue
		}
		out = append(out, e)
	}
	kept := out[:0]
	for _, e := range out {
		if e.V != 0 {
			kept = append(kept, e)
		}
	}
	s.Entries = kept
}

// Dense returns s as a dense symmetric matrix.
func (s *Sparse) Dense() *mat.SymDense {
	d := mat.NewSymDense(s.N, nil)
	s.addTo(d, 1)
	return d
}

// addTo adds alpha*s to d.
func (s *Sparse) addTo(d *mat.SymDense, alpha float64) {
	for _, e := range s.Entries {
		d.SetSym(e.I, e.J, d.At(e.I, e.J)+alpha*e.V)
	}
}

// dot returns the trace inner product <s, d> = tr(s d).
func (s *Sparse) dot(d *mat.SymDense) float64 {
	var t float64
	for _, e := range s.Entries {
		if e.I == e.J {
			t += e.V * d.At(e.I, e.I)
		} else {
			t += 2 * e.V * d.At(e.I, e.J)
		}
	}
	return t
}

// SparseFromDense returns the nonzero upper-triangle entries of a.
func SparseFromDense(a mat.Symmetric) *Sparse {
	n := a.SymmetricDim()
	s := NewSparse(n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if v := a.At(i, j); v != 0 {
				s.Entries = append(s.Entries, Entry{I: i, J: j, V: v})
			}
		}
	}
	return s
}

// Term is the coefficient matrix of variable Var in a linear matrix inequality.
type Term struct {
	Var int
	F   *Sparse
}

// LMI is the constraint F0 + sum_j x_j F_j ⪰ 0 on a symmetric block of
// order Size. Variables that do not appear have F_j = 0.
type LMI struct {
	Size  int
	F0    *Sparse // may be nil for zero
	Terms []Term
}

// byVar gathers the LMI's terms by variable (a variable may appear in
// several terms): the entries of each variable's matrix, not yet
// normalised.
func (l *LMI) byVar() map[int]*Sparse {
	merged := map[int]*Sparse{}
	for _, t := range l.Terms {
		s, ok := merged[t.Var]
		if !ok {
			s = NewSparse(l.Size)
			merged[t.Var] = s
		}
		s.Entries = append(s.Entries, t.F.Entries...)
	}
	return merged
}

// LinTerm is one coefficient of a linear (nonnegative-orthant) constraint.
type LinTerm struct {
	Var int
	V   float64
}

// Linear is the scalar constraint F0 + sum_j V_j x_j >= 0.
type Linear struct {
	F0    float64
	Terms []LinTerm
}

// Problem is a conic program in the inequality form
//
//	minimise    c^T x
//	subject to  F0_k + sum_j x_j F_jk ⪰ 0   for every LMI block k,
//	            f0_r + sum_j x_j f_jr >= 0  for every linear row r,
//	            A x = b.
//
// It is the standard form of CVXOPT's conelp with G = -F and h = F0. Its
// conic dual is
//
//	maximise    -<F0, Z> - b^T y
//	subject to  <F_j, Z> = c_j + (A^T y)_j,   Z ⪰ 0 (blockwise), z >= 0 (linear rows).
type Problem struct {
	C      []float64 // objective, one entry per variable
	LMIs   []LMI
	Linear []Linear
	A      *mat.Dense // p×n equality matrix; nil when p = 0
	B      []float64
}

// NumVars returns the number of scalar variables, len(p.C).
func (p *Problem) NumVars() int { return len(p.C) }

// Validate reports the first structural error in p: indices out of range,
// non-finite data, mismatched sizes.
func (p *Problem) Validate() error {
	n := len(p.C)
	if n == 0 {
		return fmt.Errorf("sdp: problem has no variables")
	}
	for j, v := range p.C {
		if !isFinite(v) {
			return fmt.Errorf("sdp: objective coefficient %d is %v", j, v)
		}
	}
	if len(p.LMIs) == 0 && len(p.Linear) == 0 {
		return fmt.Errorf("sdp: problem has no cone constraints")
	}
	checkSparse := func(k int, what string, s *Sparse, size int) error {
		if s == nil {
			return nil
		}
		if s.N != size {
			return fmt.Errorf("sdp: LMI %d: %s has order %d, block has order %d", k, what, s.N, size)
		}
		for _, e := range s.Entries {
			if e.I < 0 || e.J < 0 || e.I >= size || e.J >= size {
				return fmt.Errorf("sdp: LMI %d: %s entry (%d,%d) outside a block of order %d", k, what, e.I, e.J, size)
			}
			if !isFinite(e.V) {
				return fmt.Errorf("sdp: LMI %d: %s entry (%d,%d) is %v", k, what, e.I, e.J, e.V)
			}
		}
		return nil
	}
	for k, l := range p.LMIs {
		if l.Size <= 0 {
			return fmt.Errorf("sdp: LMI %d has order %d", k, l.Size)
		}
		if err := checkSparse(k, "F0", l.F0, l.Size); err != nil {
			return err
		}
		for _, t := range l.Terms {
			if t.Var < 0 || t.Var >= n {
				return fmt.Errorf("sdp: LMI %d: variable %d out of range [0,%d)", k, t.Var, n)
			}
			if err := checkSparse(k, fmt.Sprintf("coefficient of variable %d", t.Var), t.F, l.Size); err != nil {
				return err
			}
		}
	}
	for r, l := range p.Linear {
		if !isFinite(l.F0) {
			return fmt.Errorf("sdp: linear constraint %d: constant is %v", r, l.F0)
		}
		for _, t := range l.Terms {
			if t.Var < 0 || t.Var >= n {
				return fmt.Errorf("sdp: linear constraint %d: variable %d out of range [0,%d)", r, t.Var, n)
			}
			if !isFinite(t.V) {
				return fmt.Errorf("sdp: linear constraint %d: coefficient of variable %d is %v", r, t.Var, t.V)
			}
		}
	}
	// A variable outside every constraint makes the Newton system singular;
	// the problem is then unbounded or the variable undetermined, and the
	// caller should drop it.
	used := make([]bool, n)
	for _, l := range p.LMIs {
		for _, t := range l.Terms {
			for _, e := range t.F.Entries {
				if e.V != 0 {
					used[t.Var] = true
					break
				}
			}
		}
	}
	for _, l := range p.Linear {
		for _, t := range l.Terms {
			used[t.Var] = used[t.Var] || t.V != 0
		}
	}
	if p.A != nil {
		r, c := p.A.Dims()
		for i := 0; i < r && c == n; i++ {
			for j := 0; j < n; j++ {
				used[j] = used[j] || p.A.At(i, j) != 0
			}
		}
	}
	for j, u := range used {
		if !u {
			return fmt.Errorf("sdp: variable %d appears in no constraint", j)
		}
	}
	if p.A != nil {
		r, c := p.A.Dims()
		if c != n {
			return fmt.Errorf("sdp: equality matrix has %d columns, want %d", c, n)
		}
		if len(p.B) != r {
			return fmt.Errorf("sdp: equality right-hand side has length %d, want %d", len(p.B), r)
		}
		if r > n {
			return fmt.Errorf("sdp: %d equalities for %d variables", r, n)
		}
	} else if len(p.B) != 0 {
		return fmt.Errorf("sdp: equality right-hand side given without a matrix")
	}
	return nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
