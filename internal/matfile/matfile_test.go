package matfile

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestReadSeparatorsAndComments(t *testing.T) {
	in := "# a 3 x 3 covariance\n\n1, 0.5 ,0.25\n  # indented comment\n0.5\t1   0.5\n0.25 0.5 1e0\n"
	m, err := Read(strings.NewReader(in), "c.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{1, 0.5, 0.25}, {0.5, 1, 0.5}, {0.25, 0.5, 1}}
	if r, c := m.Dims(); r != 3 || c != 3 {
		t.Fatalf("dims %d x %d", r, c)
	}
	for i := range want {
		for j := range want[i] {
			if m.Rows[i][j] != want[i][j] {
				t.Errorf("(%d,%d) = %v, want %v", i, j, m.Rows[i][j], want[i][j])
			}
		}
	}
	if m.lines[0] != 3 || m.lines[2] != 6 || m.cols[0][1] != 4 || m.cols[1][1] != 5 {
		t.Errorf("positions: lines %v, columns %v", m.lines, m.cols)
	}
	s, err := m.Symmetric(-1)
	if err != nil {
		t.Fatal(err)
	}
	if s.At(0, 2) != 0.25 || m.Dense().At(2, 0) != 0.25 {
		t.Errorf("symmetric %v", mat.Formatted(s))
	}
}

// Bad input: every error names file:line:column (or file:line for a whole
// row, file for the whole matrix) and says what to do.
func TestReadErrors(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"word", "0.5,0.5\n0.5,oops\n", []string{"m.csv:2:5:", `value 2, "oops", is not a finite number`, "write a decimal number"}},
		{"spaces", "1 2\n3  x\n", []string{"m.csv:2:4:", `"x"`}},
		{"empty value", "1,,2\n", []string{"m.csv:1:3:", "value 2 is empty", "remove the extra comma"}},
		{"trailing comma", "1,2,\n", []string{"m.csv:1:5:", "value 3 is empty"}},
		{"nan", "NaN 1\n", []string{"m.csv:1:1:", "not a finite number"}},
		{"inf", "1,+Inf\n", []string{"m.csv:1:3:", "not a finite number"}},
		{"mixed separators", "1 2,3\n", []string{"m.csv:1:1:", `"1 2"`}},
		{"semicolon", "1;2\n", []string{"m.csv:1:1:", `"1;2"`}},
		{"ragged", "1,2\n# c\n3\n", []string{"m.csv:3:", "1 values, but the first row (line 1) has 2"}},
		{"empty", "# nothing\n\n", []string{"m.csv:", "no matrix rows"}},
	} {
		_, err := Read(strings.NewReader(c.in), "m.csv")
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: error %v is not an *Error", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
	}
}

func TestSymmetric(t *testing.T) {
	read := func(s string) *Matrix {
		m, err := Read(strings.NewReader(s), "s.csv")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Relative to the largest entry: 1e-10 off on entries of 1e3 passes at
	// the default tolerance, 1e-5 does not.
	if _, err := read("1000,1\n1.0000000001,1000\n").Symmetric(-1); err != nil {
		t.Errorf("rounding-level asymmetry refused: %v", err)
	}
	_, err := read("1000,1\n1.00001,1000\n").Symmetric(-1)
	if err == nil || !strings.Contains(err.Error(), "s.csv:2:1: not symmetric: row 2 column 1 is 1.00001, but row 1 column 2 is 1 (at line 1)") {
		t.Errorf("asymmetry: %v", err)
	}
	// The tolerance scales with the matrix: the same relative asymmetry at
	// a scale of 1e-6 is refused too.
	if _, err := read("1e-6,1e-9\n1.00001e-9,1e-6\n").Symmetric(-1); err == nil {
		t.Error("small-scale asymmetry accepted")
	}
	// Tolerance 0 asks for exact symmetry; a looser one accepts.
	if _, err := read("1,0.5\n0.5000001,1\n").Symmetric(0); err == nil {
		t.Error("tolerance 0 accepted an asymmetric matrix")
	}
	s, err := read("1,0.5\n0.5000001,1\n").Symmetric(1e-6)
	if err != nil || math.Abs(s.At(0, 1)-0.50000005) > 1e-15 {
		t.Errorf("loose tolerance: %v, off-diagonal %v (want the average)", err, s)
	}
	if _, err := read("1,2,3\n4,5,6\n").Symmetric(-1); err == nil || !strings.Contains(err.Error(), "2 x 3, not square") {
		t.Errorf("non-square: %v", err)
	}
	if err := read("1,2\n3,4\n").Square(3); err == nil || !strings.Contains(err.Error(), "3 x 3 is needed") {
		t.Errorf("size: %v", err)
	}
}

// Write then Read gives back the same float64 values.
func TestRoundTrip(t *testing.T) {
	vals := []float64{1.0 / 3, -2.5e-300, 6.02214076e23, 0, math.Pi, -0.1, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64}
	n := 3
	d := mat.NewDense(n, n, vals)
	path := filepath.Join(t.TempDir(), "x.csv")
	if err := WriteFile(path, d); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.Dense(), d) {
		t.Errorf("round trip: %v, want %v", mat.Formatted(m.Dense()), mat.Formatted(d))
	}
	var b bytes.Buffer
	if err := Write(&b, mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2})); err != nil {
		t.Fatal(err)
	}
	if b.String() != "1,0.5\n0.5,2\n" {
		t.Errorf("written %q", b.String())
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.csv")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
