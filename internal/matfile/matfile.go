// Package matfile reads and writes the matrix text files of tracepriv's
// commands: noise covariances ("cip design --noise-out", "cip loss
// --noise", "sanitize --noise-out") and the covariance and transition
// matrices of "bdp calibrate".
//
// # Format
//
// One matrix row per line. The values of a row are separated by commas
// (with optional blanks around them) or, on a line without commas, by
// blanks (spaces or tabs). Blank lines, and lines whose first non-blank
// character is '#', are comments. Every value is a finite decimal or
// exponent number as Go's strconv.ParseFloat reads it; an empty value
// ("1,,2" or a trailing comma) is an error, not a zero. Every row has as
// many values as the first.
//
// A symmetric matrix (Matrix.Symmetric) must have
// |a_ij - a_ji| <= tol * max_kl |a_kl| for every i, j: the tolerance is
// relative to the matrix's largest entry, so it does not depend on units,
// and DefaultTol (1e-9) is far above the rounding of a matrix computed as
// symmetric and far below a real asymmetry. The two values are averaged.
//
// Write writes comma-separated rows with the shortest representation that
// reads back to the same float64, so a matrix survives a round trip
// exactly. Errors name the file, the line and the column (1-based, in
// bytes) of the value at fault, and say how to fix it.
//
// The package is internal: library callers pass gonum matrices directly;
// this is the commands' file interface, kept in one place.
package matfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/infile"
)

// DefaultTol is the relative symmetry tolerance of Symmetric.
const DefaultTol = 1e-9

// Error is a problem at a place in a matrix file. Line and Col are 1-based;
// Col is 0 when the problem is with a whole line, and Line too when it is
// with the whole file.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Matrix is a matrix read from a file, with where each value stood.
type Matrix struct {
	// Name is the file's name, as errors give it.
	Name string
	// Rows are the values, row by row.
	Rows [][]float64

	lines []int   // line of each row
	cols  [][]int // column of each value
}

// Dims returns the number of rows and columns.
func (m *Matrix) Dims() (r, c int) {
	if len(m.Rows) == 0 {
		return 0, 0
	}
	return len(m.Rows), len(m.Rows[0])
}

// Dense returns the matrix as a gonum matrix.
func (m *Matrix) Dense() *mat.Dense {
	r, c := m.Dims()
	d := mat.NewDense(r, c, nil)
	for i, row := range m.Rows {
		d.SetRow(i, row)
	}
	return d
}

// errAt returns an error at the value of row i, column j (0-based).
func (m *Matrix) errAt(i, j int, format string, args ...any) error {
	e := &Error{File: m.Name, Msg: fmt.Sprintf(format, args...)}
	if i < len(m.lines) {
		e.Line = m.lines[i]
		if j < len(m.cols[i]) {
			e.Col = m.cols[i][j]
		}
	}
	return e
}

// Square reports whether the matrix is square, and if n > 0 whether it is
// n x n.
func (m *Matrix) Square(n int) error {
	r, c := m.Dims()
	switch {
	case r != c:
		return &Error{File: m.Name, Msg: fmt.Sprintf("the matrix is %d x %d, not square: give one row per line, as many rows as values in a row", r, c)}
	case n > 0 && r != n:
		return &Error{File: m.Name, Msg: fmt.Sprintf("the matrix is %d x %d, %d x %d is needed", r, r, n, n)}
	}
	return nil
}

// Symmetric returns the matrix as a symmetric matrix, if it is square and
// |a_ij - a_ji| <= tol * max_kl |a_kl| (tol < 0 means DefaultTol), with
// a_ij and a_ji averaged.
func (m *Matrix) Symmetric(tol float64) (*mat.SymDense, error) {
	if err := m.Square(0); err != nil {
		return nil, err
	}
	if tol < 0 {
		tol = DefaultTol
	}
	n, _ := m.Dims()
	scale := 0.0
	for _, row := range m.Rows {
		for _, v := range row {
			scale = math.Max(scale, math.Abs(v))
		}
	}
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			a, b := m.Rows[i][j], m.Rows[j][i]
			if math.Abs(a-b) > tol*scale {
				return nil, m.errAt(j, i, "not symmetric: row %d column %d is %v, but row %d column %d is %v (at line %d); the difference is above %g times the largest entry %v: make the two equal",
					j+1, i+1, b, i+1, j+1, a, m.lines[i], tol, scale)
			}
			s.SetSym(i, j, (a+b)/2)
		}
	}
	return s, nil
}

// Read reads a matrix in the package's format from r; name is the file's
// name for errors.
func Read(r io.Reader, name string) (*Matrix, error) {
	m := &Matrix{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<30)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if t := strings.TrimSpace(text); t == "" || t[0] == '#' {
			continue
		}
		row, cols, err := parseRow(text)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.File, e.Line = name, line
			}
			return nil, err
		}
		if len(m.Rows) > 0 && len(row) != len(m.Rows[0]) {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("%d values, but the first row (line %d) has %d: every row needs the same number of values", len(row), m.lines[0], len(m.Rows[0]))}
		}
		m.Rows, m.lines, m.cols = append(m.Rows, row), append(m.lines, line), append(m.cols, cols)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(m.Rows) == 0 {
		return nil, &Error{File: name, Msg: "no matrix rows (only blank or # comment lines): write one row per line, values separated by commas or spaces"}
	}
	return m, nil
}

// parseRow splits a line into values and their 1-based columns.
func parseRow(text string) ([]float64, []int, error) {
	type field struct {
		s   string
		col int
	}
	var fields []field
	if strings.ContainsRune(text, ',') {
		start := 0
		for i := 0; i <= len(text); i++ {
			if i < len(text) && text[i] != ',' {
				continue
			}
			raw := text[start:i]
			lead := len(raw) - len(strings.TrimLeft(raw, " \t\r"))
			fields = append(fields, field{strings.TrimSpace(raw), start + lead + 1})
			start = i + 1
		}
	} else {
		for i := 0; i < len(text); {
			if c := text[i]; c == ' ' || c == '\t' || c == '\r' {
				i++
				continue
			}
			j := i
			for j < len(text) && text[j] != ' ' && text[j] != '\t' && text[j] != '\r' {
				j++
			}
			fields = append(fields, field{text[i:j], i + 1})
			i = j
		}
	}
	row, cols := make([]float64, len(fields)), make([]int, len(fields))
	for k, f := range fields {
		cols[k] = f.col
		if f.s == "" {
			return nil, nil, &Error{Col: f.col, Msg: fmt.Sprintf("value %d is empty: remove the extra comma or write the number", k+1)}
		}
		v, err := strconv.ParseFloat(f.s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, &Error{Col: f.col, Msg: fmt.Sprintf("value %d, %s, is not a finite number: write a decimal number such as 0.25 or 1e-3, separated from the next by a comma or a space", k+1, infile.Excerpt([]byte(f.s)))}
		}
		row[k] = v
	}
	return row, cols, nil
}

// ReadFile reads a matrix file.
func ReadFile(path string) (*Matrix, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Write writes m as comma-separated rows, each value with the fewest
// digits that read back exactly.
func Write(w io.Writer, m mat.Matrix) error {
	r, c := m.Dims()
	bw := bufio.NewWriter(w)
	b := make([]byte, 0, 24*c)
	for i := range r {
		b = b[:0]
		for j := range c {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, m.At(i, j), 'g', -1, 64)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes m to path atomically (the old file or the new one,
// never a partial one).
func WriteFile(path string, m mat.Matrix) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return Write(w, m) })
}
