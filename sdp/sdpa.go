package sdp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// SDPAEntry is one nonzero of an SDPA problem, 0-based: matrix Mat (0 is C,
// 1..M are A_1..A_M), block Block, position (I, J) with I <= J.
type SDPAEntry struct {
	Mat, Block, I, J int
	V                float64
}

// SDPA is a semidefinite program in the SDPA standard form
//
//	(P) maximise tr(C X)  s.t. tr(A_i X) = a_i (i = 1..M),  X ⪰ 0
//	(D) minimise a^T y    s.t. Z = sum_i y_i A_i - C ⪰ 0,
//
// with X, Z, C, A_i block diagonal. A negative block size -k declares a
// diagonal block of order k (k nonnegative scalar variables: an LP block).
// This is the convention of SDPA and CSDP.
type SDPA struct {
	M       int
	Blocks  []int
	A       []float64 // the right-hand side a, length M
	Entries []SDPAEntry
}

// ReadSDPA parses the SDPA sparse format (.dat-s). Comment lines start with
// '"' or '*' before the data; the separators { } ( ) , are treated as
// spaces. Errors name the line and the field at fault, and quote a bad token
// as infile.Excerpt does (at most infile.ExcerptLen bytes, escaped): a
// megabyte token must not make a megabyte error. An error of the text, as
// opposed to one of reading r, is a *FormatError.
func ReadSDPA(r io.Reader) (*SDPA, error) {
	p, err := readSDPA(r)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		err = &FormatError{Err: err}
	}
	return p, err
}

// FormatError is an SDPA text ReadSDPA cannot read as a problem; its
// message names the line and the field at fault.
type FormatError struct{ Err error }

func (e *FormatError) Error() string { return e.Err.Error() }
func (e *FormatError) Unwrap() error { return e.Err }

func readSDPA(r io.Reader) (*SDPA, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	line := 0
	var fields []string
	next := func() bool {
		for sc.Scan() {
			line++
			t := strings.TrimSpace(sc.Text())
			if t == "" {
				continue
			}
			fields = strings.Fields(strings.Map(func(r rune) rune {
				switch r {
				case '{', '}', '(', ')', ',':
					return ' '
				}
				return r
			}, t))
			if len(fields) > 0 {
				return true
			}
		}
		return false
	}
	errf := func(format string, args ...any) error {
		return fmt.Errorf("sdpa: line %d: "+format, append([]any{line}, args...)...)
	}
	// Header comments.
	for {
		if !next() {
			if err := sc.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("sdpa: empty input")
		}
		if c := fields[0][0]; c != '"' && c != '*' {
			break
		}
	}
	p := &SDPA{}
	m, err := strconv.Atoi(fields[0])
	if err != nil || m < 0 {
		return nil, errf("number of constraints (mDIM): %s is not a nonnegative integer", infile.Excerpt([]byte(fields[0])))
	}
	p.M = m
	if !next() {
		return nil, errf("missing number of blocks (nBLOCK)")
	}
	nb, err := strconv.Atoi(fields[0])
	if err != nil || nb <= 0 {
		return nil, errf("number of blocks (nBLOCK): %s is not a positive integer", infile.Excerpt([]byte(fields[0])))
	}
	// Block sizes and the vector a may wrap over lines; read tokens.
	var pending []string
	token := func(what string) (string, error) {
		for len(pending) == 0 {
			if !next() {
				return "", errf("unexpected end of input reading %s", what)
			}
			pending = fields
		}
		t := pending[0]
		pending = pending[1:]
		return t, nil
	}
	for b := 0; b < nb; b++ {
		what := fmt.Sprintf("size of block %d", b+1)
		t, err := token(what)
		if err != nil {
			return nil, err
		}
		k, err := strconv.Atoi(strings.TrimSuffix(t, ".0"))
		if err != nil || k == 0 {
			return nil, errf("%s: %s is not a nonzero integer", what, infile.Excerpt([]byte(t)))
		}
		p.Blocks = append(p.Blocks, k)
	}
	pending = nil // rest of the block-size line is a comment
	p.A = make([]float64, m)
	for i := 0; i < m; i++ {
		what := fmt.Sprintf("entry %d of the objective vector", i+1)
		t, err := token(what)
		if err != nil {
			return nil, err
		}
		if p.A[i], err = parseFloat(t); err != nil {
			return nil, errf("%s: %s is not a number", what, infile.Excerpt([]byte(t)))
		}
	}
	for next() {
		if len(fields) < 5 {
			return nil, errf("entry needs 5 fields (matrix block i j value), got %d", len(fields))
		}
		names := [4]string{"matrix number", "block number", "row", "column"}
		var idx [4]int
		for f := 0; f < 4; f++ {
			v, err := strconv.Atoi(fields[f])
			if err != nil {
				return nil, errf("%s: %s is not an integer", names[f], infile.Excerpt([]byte(fields[f])))
			}
			idx[f] = v
		}
		v, err := parseFloat(fields[4])
		if err != nil {
			return nil, errf("value: %s is not a number", infile.Excerpt([]byte(fields[4])))
		}
		if idx[0] < 0 || idx[0] > m {
			return nil, errf("matrix number %d outside 0..%d", idx[0], m)
		}
		if idx[1] < 1 || idx[1] > nb {
			return nil, errf("block number %d outside 1..%d", idx[1], nb)
		}
		size := p.Blocks[idx[1]-1]
		order := size
		if order < 0 {
			order = -order
		}
		i, j := idx[2], idx[3]
		if i < 1 || i > order {
			return nil, errf("row %d outside 1..%d of block %d", i, order, idx[1])
		}
		if j < 1 || j > order {
			return nil, errf("column %d outside 1..%d of block %d", j, order, idx[1])
		}
		if size < 0 && i != j {
			return nil, errf("off-diagonal entry (%d,%d) in diagonal block %d", i, j, idx[1])
		}
		if i > j {
			i, j = j, i
		}
		if v != 0 {
			p.Entries = append(p.Entries, SDPAEntry{Mat: idx[0], Block: idx[1] - 1, I: i - 1, J: j - 1, V: v})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sdpa: line %d: %w", line, err)
	}
	return p, nil
}

// parseFloat accepts Fortran-style exponents (1.0D+01) as well as Go's.
func parseFloat(s string) (float64, error) {
	s = strings.Map(func(r rune) rune {
		if r == 'd' || r == 'D' {
			return 'e'
		}
		return r
	}, s)
	return strconv.ParseFloat(s, 64)
}

// WriteSDPA writes p in the SDPA sparse format, exactly (%.17g).
func WriteSDPA(w io.Writer, p *SDPA) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d\n%d\n", p.M, len(p.Blocks))
	for i, b := range p.Blocks {
		if i > 0 {
			bw.WriteByte(' ')
		}
		fmt.Fprintf(bw, "%d", b)
	}
	bw.WriteByte('\n')
	for i, a := range p.A {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.FormatFloat(a, 'g', 17, 64))
	}
	bw.WriteByte('\n')
	for _, e := range p.Entries {
		fmt.Fprintf(bw, "%d %d %d %d %s\n", e.Mat, e.Block+1, e.I+1, e.J+1, strconv.FormatFloat(e.V, 'g', 17, 64))
	}
	return bw.Flush()
}

// Problem converts the SDPA dual (D) into the inequality form solved by
// Solve: variables y, objective a, LMIs sum y_i A_i - C ⪰ 0 (diagonal
// blocks become linear rows).
func (p *SDPA) Problem() (*Problem, error) {
	if p.M == 0 {
		return nil, fmt.Errorf("sdpa: problem has no constraints (mDIM = 0)")
	}
	if len(p.A) != p.M {
		return nil, fmt.Errorf("sdpa: objective vector has %d entries, want %d", len(p.A), p.M)
	}
	lmiOf := make([]int, len(p.Blocks))
	lpOff := make([]int, len(p.Blocks))
	prob := &Problem{C: append([]float64(nil), p.A...)}
	nlp := 0
	for b, s := range p.Blocks {
		switch {
		case s > 0:
			lmiOf[b] = len(prob.LMIs)
			prob.LMIs = append(prob.LMIs, LMI{Size: s, F0: NewSparse(s)})
		case s < 0:
			lmiOf[b] = -1
			lpOff[b] = nlp
			nlp += -s
		default:
			return nil, fmt.Errorf("sdpa: block %d has size 0", b+1)
		}
	}
	prob.Linear = make([]Linear, nlp)
	terms := make([]map[int]*Sparse, len(prob.LMIs))
	for k := range terms {
		terms[k] = map[int]*Sparse{}
	}
	for _, e := range p.Entries {
		if e.Block < 0 || e.Block >= len(p.Blocks) || e.Mat < 0 || e.Mat > p.M {
			return nil, fmt.Errorf("sdpa: entry %+v out of range", e)
		}
		if k := lmiOf[e.Block]; k >= 0 {
			if e.Mat == 0 {
				prob.LMIs[k].F0.Set(e.I, e.J, -e.V)
				continue
			}
			s, ok := terms[k][e.Mat-1]
			if !ok {
				s = NewSparse(prob.LMIs[k].Size)
				terms[k][e.Mat-1] = s
			}
			s.Set(e.I, e.J, e.V)
			continue
		}
		if e.I != e.J {
			return nil, fmt.Errorf("sdpa: off-diagonal entry in diagonal block %d", e.Block+1)
		}
		r := lpOff[e.Block] + e.I
		if e.Mat == 0 {
			prob.Linear[r].F0 -= e.V
		} else {
			prob.Linear[r].Terms = append(prob.Linear[r].Terms, LinTerm{Var: e.Mat - 1, V: e.V})
		}
	}
	for k := range terms {
		for v := 0; v < p.M; v++ {
			if s, ok := terms[k][v]; ok {
				prob.LMIs[k].Terms = append(prob.LMIs[k].Terms, Term{Var: v, F: s})
			}
		}
	}
	return prob, nil
}

// SDPAResult is the solution of an SDPA problem, in SDPA's (and CSDP's)
// conventions: PrimalObj = tr(C X) of the maximisation (P), DualObj = a^T y
// of (D). Status PrimalInfeasible means (P) is infeasible (certified by a
// ray of (D)), DualInfeasible means (D) is infeasible.
type SDPAResult struct {
	Status     Status        `json:"status"`
	PrimalObj  float64       `json:"primal_objective"`
	DualObj    float64       `json:"dual_objective"`
	Gap        float64       `json:"gap"`
	RelGap     float64       `json:"relative_gap"`
	PrimalRes  float64       `json:"primal_residual"`
	DualRes    float64       `json:"dual_residual"`
	Iterations int           `json:"iterations"`
	Time       time.Duration `json:"-"`
	Seconds    float64       `json:"seconds"`
	Y          []float64     `json:"y"`
	X          []*mat.Dense  `json:"-"` // one per block; diagonal blocks as k×k diagonal matrices
	Z          []*mat.Dense  `json:"-"`
	Conic      *Result       `json:"-"`
}

// WriteText writes the result as the aligned text "tracepriv sdp solve"
// prints: status, objectives, gap, residuals, iterations and seconds.
func (r *SDPAResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "status            %s\nprimal_objective  %.12g\ndual_objective    %.12g\ngap               %.3g\nrelative_gap      %.3g\nprimal_residual   %.3g\ndual_residual     %.3g\niterations        %d\nseconds           %.3f\n",
		r.Status, r.PrimalObj, r.DualObj, r.Gap, r.RelGap, r.PrimalRes, r.DualRes, r.Iterations, r.Seconds)
	return err
}

// SolveSDPA solves the SDPA problem p.
func SolveSDPA(p *SDPA, settings *Settings) (*SDPAResult, error) {
	prob, err := p.Problem()
	if err != nil {
		return nil, err
	}
	r, err := Solve(prob, settings)
	if err != nil {
		return nil, err
	}
	out := &SDPAResult{
		Status:     r.Status,
		PrimalObj:  r.DualObj,
		DualObj:    r.PrimalObj,
		Gap:        r.Gap,
		RelGap:     r.RelGap,
		PrimalRes:  r.DualRes,
		DualRes:    r.PrimalRes,
		Iterations: r.Iterations,
		Time:       r.Time,
		Seconds:    r.Time.Seconds(),
		Y:          r.X,
		Conic:      r,
	}
	// The conic primal is SDPA's dual: swap the infeasibility statuses.
	switch r.Status {
	case PrimalInfeasible:
		out.Status = DualInfeasible
	case DualInfeasible:
		out.Status = PrimalInfeasible
	}
	k, off := 0, 0
	for _, s := range p.Blocks {
		if s > 0 {
			out.X = append(out.X, mat.DenseCopyOf(r.ZBlocks[k]))
			out.Z = append(out.Z, mat.DenseCopyOf(r.SBlocks[k]))
			k++
			continue
		}
		x := mat.NewDense(-s, -s, nil)
		z := mat.NewDense(-s, -s, nil)
		for i := 0; i < -s; i++ {
			x.Set(i, i, r.ZLP[off+i])
			z.Set(i, i, r.SLP[off+i])
		}
		off += -s
		out.X = append(out.X, x)
		out.Z = append(out.Z, z)
	}
	return out, nil
}

// SDPA returns p in SDPA form: its variables become y, the objective a = c,
// and each LMI F0 + sum x_j F_j ⪰ 0 becomes a block with A_j = F_j and
// C = -F0; linear rows become one diagonal block, placed last. Equality
// constraints have no place in the SDPA dual and are rejected.
func (p *Problem) SDPA() (*SDPA, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.A != nil {
		return nil, fmt.Errorf("sdpa: equality constraints cannot be written in SDPA form")
	}
	out := &SDPA{M: len(p.C), A: append([]float64(nil), p.C...)}
	for b, l := range p.LMIs {
		out.Blocks = append(out.Blocks, l.Size)
		add := func(mat int, s *Sparse) {
			for _, e := range s.Entries {
				v := e.V
				if mat == 0 {
					v = -v
				}
				out.Entries = append(out.Entries, SDPAEntry{Mat: mat, Block: b, I: e.I, J: e.J, V: v})
			}
		}
		if l.F0 != nil {
			f0 := &Sparse{N: l.Size, Entries: append([]Entry(nil), l.F0.Entries...)}
			f0.normalize()
			add(0, f0)
		}
		merged := l.byVar()
		for v := 0; v < len(p.C); v++ {
			if s, ok := merged[v]; ok {
				s.normalize()
				add(v+1, s)
			}
		}
	}
	if len(p.Linear) > 0 {
		b := len(out.Blocks)
		out.Blocks = append(out.Blocks, -len(p.Linear))
		for r, l := range p.Linear {
			if l.F0 != 0 {
				out.Entries = append(out.Entries, SDPAEntry{Mat: 0, Block: b, I: r, J: r, V: -l.F0})
			}
			m := map[int]float64{}
			for _, t := range l.Terms {
				m[t.Var] += t.V
			}
			for v := 0; v < len(p.C); v++ {
				if x := m[v]; x != 0 {
					out.Entries = append(out.Entries, SDPAEntry{Mat: v + 1, Block: b, I: r, J: r, V: x})
				}
			}
		}
	}
	return out, nil
}
