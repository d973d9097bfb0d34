package sdp

import (
	"errors"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// fullEntry is one entry of a coefficient matrix with both triangles
// expanded, the form the Schur-complement formulas need.
type fullEntry struct {
	a, b int
	v    float64
}

type ccol struct {
	v     int
	f     *Sparse
	full  []fullEntry
	dense bool // assembled through V F V rather than entry by entry
}

type cblock struct {
	n    int
	cols []ccol // sparse columns first, then dense ones
}

// compiled is a validated Problem in the layout the solver works on.
type compiled struct {
	n      int
	c      []float64
	lpRows [][]LinTerm // merged coefficients of each linear row
	blocks []cblock
	sizes  []int
	f0     cvec
	a      *mat.Dense
	b      []float64
	p      int
}

func compile(p *Problem) *compiled {
	cp := &compiled{n: len(p.C), c: p.C, a: p.A, b: p.B}
	if p.A != nil {
		cp.p, _ = p.A.Dims()
	}
	cp.sizes = make([]int, len(p.LMIs))
	for k, l := range p.LMIs {
		cp.sizes[k] = l.Size
	}
	cp.f0 = newCvec(len(p.Linear), cp.sizes)
	for r, l := range p.Linear {
		cp.f0.lp[r] = l.F0
		m := map[int]float64{}
		for _, t := range l.Terms {
			m[t.Var] += t.V
		}
		row := make([]LinTerm, 0, len(m))
		for v, x := range m {
			if x != 0 {
				row = append(row, LinTerm{Var: v, V: x})
			}
		}
		sort.Slice(row, func(i, j int) bool { return row[i].Var < row[j].Var })
		cp.lpRows = append(cp.lpRows, row)
	}
	for k, l := range p.LMIs {
		if l.F0 != nil {
			l.F0.addTo(cp.f0.blk[k], 1)
		}
		merged := l.byVar()
		blk := cblock{n: l.Size}
		for v, s := range merged {
			s.normalize()
			if len(s.Entries) == 0 {
				continue
			}
			c := ccol{v: v, f: s}
			for _, e := range s.Entries {
				c.full = append(c.full, fullEntry{e.I, e.J, e.V})
				if e.I != e.J {
					c.full = append(c.full, fullEntry{e.J, e.I, e.V})
				}
			}
			c.dense = len(c.full) > l.Size
			blk.cols = append(blk.cols, c)
		}
		sort.Slice(blk.cols, func(i, j int) bool {
			ci, cj := blk.cols[i], blk.cols[j]
			if ci.dense != cj.dense {
				return !ci.dense
			}
			return ci.v < cj.v
		})
		cp.blocks = append(cp.blocks, blk)
	}
	return cp
}

// applyF sets dst = sum_j x_j F_j (without F0).
func (cp *compiled) applyF(dst cvec, x []float64) {
	dst.zero()
	for r, row := range cp.lpRows {
		var t float64
		for _, e := range row {
			t += e.V * x[e.Var]
		}
		dst.lp[r] = t
	}
	for k, blk := range cp.blocks {
		d := dst.blk[k]
		for _, c := range blk.cols {
			if xv := x[c.v]; xv != 0 {
				c.f.addTo(d, xv)
			}
		}
	}
}

// applyFT sets dst_j = <F_j, z>.
func (cp *compiled) applyFT(dst []float64, z cvec) {
	for j := range dst {
		dst[j] = 0
	}
	for r, row := range cp.lpRows {
		for _, e := range row {
			dst[e.Var] += e.V * z.lp[r]
		}
	}
	for k, blk := range cp.blocks {
		for _, c := range blk.cols {
			dst[c.v] += c.f.dot(z.blk[k])
		}
	}
}

// kkt is the factorised Newton system
//
//	[ H  A^T ] [dx]   [r1]
//	[ A   0  ] [dy] = [r2],   H = sum_k [tr(F_i W_k^-1 F_j W_k^-1)] + F_lp^T D F_lp,
//
// solved through K = H + A^T A (positive definite whenever [F; A] has full
// column rank, even if H alone is singular) and the p×p Schur complement
// A K^-1 A^T.
type kkt struct {
	cp     *compiled
	u      blas64.Triangular // K = U^T U
	schur  mat.Cholesky      // of A K^-1 A^T, when p > 0
	kinvAT *mat.Dense        // K^-1 A^T, n×p
}

var errSingular = errors.New("sdp: singular Newton system (are the constraint matrices linearly independent?)")

func (cp *compiled) factor(sc scaling) (*kkt, error) {
	n := cp.n
	h := make([]float64, n*n) // upper triangle used
	for r, row := range cp.lpRows {
		d := 1 / (sc.lp.w[r] * sc.lp.w[r])
		for a, ea := range row {
			for _, eb := range row[a:] {
				addUpper(h, n, ea.Var, eb.Var, d*ea.V*eb.V)
			}
		}
	}
	for k, blk := range cp.blocks {
		assembleBlock(blk, sc.blk[k].v, h, n)
	}
	if cp.p > 0 {
		// K = H + A^T A.
		ar := cp.a.RawMatrix()
		for r := 0; r < cp.p; r++ {
			row := ar.Data[r*ar.Stride : r*ar.Stride+n]
			for i, ai := range row {
				if ai == 0 {
					continue
				}
				hi := h[i*n : i*n+n]
				for j := i; j < n; j++ {
					hi[j] += ai * row[j]
				}
			}
		}
	}
	k := &kkt{cp: cp}
	// LAPACK's Potrf directly: mat.Cholesky would also estimate the
	// condition number, which costs as much again and is not needed here.
	keep := append([]float64(nil), h...)
	if !k.potrf(n, h) {
		// A tiny ridge rescues H that is singular only to rounding, as
		// happens late in the iteration when scalings are extreme.
		var tr float64
		for i := 0; i < n; i++ {
			tr += keep[i*n+i]
		}
		ridge := 1e-13 * tr / float64(n)
		for i := 0; i < n; i++ {
			keep[i*n+i] += ridge
		}
		if !k.potrf(n, keep) {
			return nil, errSingular
		}
	}
	if cp.p > 0 {
		k.kinvAT = mat.NewDense(n, cp.p, nil)
		col := make([]float64, n)
		for j := 0; j < cp.p; j++ {
			for i := range col {
				col[i] = cp.a.At(j, i)
			}
			k.cholSolve(blas64.Vector{N: n, Inc: 1, Data: col})
			k.kinvAT.SetCol(j, col)
		}
		var s mat.Dense
		s.Mul(cp.a, k.kinvAT)
		ss := mat.NewSymDense(cp.p, nil)
		for i := 0; i < cp.p; i++ {
			for j := i; j < cp.p; j++ {
				ss.SetSym(i, j, 0.5*(s.At(i, j)+s.At(j, i)))
			}
		}
		if !k.schur.Factorize(ss) {
			return nil, errSingular
		}
	}
	return k, nil
}

// addUpper adds v to the (i, j) entry of the upper triangle of h.
func addUpper(h []float64, n, i, j int, v float64) {
	if i > j {
		i, j = j, i
	}
	h[i*n+j] += v
}

// assembleBlock adds tr(F_i V F_j V) for every pair of columns of blk.
// h is the nv×nv Schur complement, upper triangle used.
func assembleBlock(blk cblock, vs *mat.SymDense, h []float64, nv int) {
	n := blk.n
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := vs.At(i, j)
			v[i*n+j], v[j*n+i] = x, x
		}
	}
	u := mat.NewDense(n, n, nil)
	vm := mat.NewDense(n, n, v)
	tmp := mat.NewDense(n, n, nil)
	for q, cq := range blk.cols {
		if !cq.dense {
			// Both sparse (dense columns sort last):
			// tr(F_p V F_q V) = sum F_p[a,b] F_q[c,d] V[b,c] V[d,a].
			for _, cpc := range blk.cols[:q+1] {
				var t float64
				for _, ep := range cpc.full {
					vb := v[ep.b*n : ep.b*n+n]
					va := v[ep.a*n : ep.a*n+n]
					var s float64
					for _, eq := range cq.full {
						s += eq.v * vb[eq.a] * va[eq.b]
					}
					t += ep.v * s
				}
				addUpper(h, nv, cpc.v, cq.v, t)
			}
			continue
		}
		// U = V F_q V once, then tr(F_p U) for every earlier column.
		fq := mat.NewDense(n, n, nil) // general storage: Dgemm, not the slower Dsymm
		for _, e := range cq.full {
			fq.Set(e.a, e.b, e.v)
		}
		tmp.Mul(vm, fq)
		u.Mul(tmp, vm)
		ur := u.RawMatrix()
		for _, cpc := range blk.cols[:q+1] {
			var t float64
			for _, ep := range cpc.full {
				t += ep.v * ur.Data[ep.b*ur.Stride+ep.a]
			}
			addUpper(h, nv, cpc.v, cq.v, t)
		}
	}
}

func (k *kkt) potrf(n int, h []float64) bool {
	t, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: h})
	k.u = t
	return ok
}

// cholSolve overwrites x with K^-1 x.
func (k *kkt) cholSolve(x blas64.Vector) {
	blas64.Trsv(blas.Trans, k.u, x)
	blas64.Trsv(blas.NoTrans, k.u, x)
}

// solve returns dx, dy with H dx + A^T dy = r1, A dx = r2.
func (k *kkt) solve(r1, r2 []float64) (dx, dy []float64, err error) {
	n, p := k.cp.n, k.cp.p
	rhs := mat.NewVecDense(n, append([]float64(nil), r1...))
	if p > 0 {
		// (H + A^T A) dx + A^T dy = r1 + A^T r2.
		rhs.MulVec(k.cp.a.T(), mat.NewVecDense(p, append([]float64(nil), r2...)))
		rhs.AddVec(rhs, mat.NewVecDense(n, r1))
	}
	// Two triangular solves with the factor U^T U; mat's SolveVecTo goes
	// through the blocked matrix routine, several times slower for one vector.
	kr := *rhs
	k.cholSolve(kr.RawVector())
	dy = make([]float64, p)
	if p > 0 {
		// A K^-1 (rhs - A^T dy) = r2  =>  S dy = A K^-1 rhs - r2.
		var t mat.VecDense
		t.MulVec(k.cp.a, &kr)
		t.SubVec(&t, mat.NewVecDense(p, r2))
		var y mat.VecDense
		if err := k.schur.SolveVecTo(&y, &t); err != nil {
			return nil, nil, errSingular
		}
		var corr mat.VecDense
		corr.MulVec(k.kinvAT, &y)
		kr.SubVec(&kr, &corr)
		copy(dy, y.RawVector().Data)
	}
	dx = make([]float64, n)
	for i := range dx {
		dx[i] = kr.AtVec(i)
	}
	return dx, dy, nil
}
