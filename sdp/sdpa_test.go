package sdp

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// Example 1 of the SDPA manual, with comments and { , } separators. Its
// optimum is 41.9 in SDPA's (minimisation) convention, -41.9 as tr(C X) in
// CSDP's, which csdp 6.2 reproduces.
func TestReadSDPAExample1(t *testing.T) {
	f, err := os.Open("testdata/example1.dat-s")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadSDPA(f)
	if err != nil {
		t.Fatal(err)
	}
	if p.M != 3 || !reflect.DeepEqual(p.Blocks, []int{2}) || !reflect.DeepEqual(p.A, []float64{48, -8, 20}) || len(p.Entries) != 7 {
		t.Fatalf("parsed %+v", p)
	}
	r := solveSDPA(t, p)
	if r.Status != Optimal || relErr(r.PrimalObj, -41.9) > 1e-8 || relErr(r.DualObj, -41.9) > 1e-8 {
		t.Errorf("status %v, objectives %.12g %.12g, want -41.9", r.Status, r.PrimalObj, r.DualObj)
	}
}

func TestSDPARoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	p := randomFeasibleSDPA(rng, 6, []int{5, -3, 2})
	var buf bytes.Buffer
	if err := WriteSDPA(&buf, p); err != nil {
		t.Fatal(err)
	}
	q, err := ReadSDPA(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Errorf("round trip changed the problem:\n%+v\n%+v", p, q)
	}
}

func TestReadSDPAErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "\"only a comment\"\n", "empty input"},
		{"bad m", "x\n1\n2\n1\n", "line 1: number of constraints"},
		{"bad nblock", "1\n0\n2\n1\n", "line 2: number of blocks"},
		{"bad block size", "1\n2\n2 y\n1\n", "line 3: size of block 2"},
		{"short a", "2\n1\n2\n1\n", "entry 2 of the objective vector"},
		{"bad a", "1\n1\n2\nabc\n", "line 4: entry 1 of the objective vector"},
		{"short entry", "1\n1\n2\n1\n0 1 1 1\n", "line 5: entry needs 5 fields"},
		{"bad value", "1\n1\n2\n1\n0 1 1 1 zz\n", "line 5: value"},
		{"matrix range", "1\n1\n2\n1\n2 1 1 1 1\n", "line 5: matrix number 2"},
		{"block range", "1\n1\n2\n1\n1 2 1 1 1\n", "line 5: block number 2"},
		{"row range", "1\n1\n2\n1\n1 1 3 1 1\n", "line 5: row 3"},
		{"diag block", "1\n1\n-2\n1\n1 1 1 2 1\n", "line 5: off-diagonal entry"},
	} {
		_, err := ReadSDPA(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestReadSDPAErrorsQuoteExcerpt: a bad token of a megabyte, in each field that quotes its
// token, gives an error of a few hundred bytes naming the field, with at most
// infile.ExcerptLen bytes of the token (escaped) and its length; short tokens are quoted whole.
func TestReadSDPAErrorsQuoteExcerpt(t *testing.T) {
	huge := "\x01" + strings.Repeat("9x", 1<<19)
	for _, tc := range []struct{ name, in, want string }{
		{"m", huge + "\n1\n2\n1\n", "number of constraints"},
		{"nblock", "1\n" + huge + "\n2\n1\n", "number of blocks"},
		{"block size", "1\n1\n" + huge + "\n1\n", "size of block 1"},
		{"a", "1\n1\n2\n" + huge + "\n", "entry 1 of the objective vector"},
		{"index", "1\n1\n2\n1\n0 " + huge + " 1 1 1\n", "block number"},
		{"value", "1\n1\n2\n1\n0 1 1 1 " + huge + "\n", "value"},
	} {
		_, err := ReadSDPA(strings.NewReader(tc.in))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := err.Error()
		want := strconv.Quote(huge[:infile.ExcerptLen]) + "… (" + strconv.Itoa(len(huge)) + " bytes)"
		if len(msg) > 200 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, want) {
			t.Errorf("%s: an error of %d bytes: %.300s; want at most 200 naming %q and quoting %s", tc.name, len(msg), msg, tc.want, want)
		}
	}
	if _, err := ReadSDPA(strings.NewReader("1\n1\n2\nab\x01c\n")); err == nil || !strings.Contains(err.Error(), `"ab\x01c" is not a number`) {
		t.Errorf("a short token: %v, want it quoted whole", err)
	}
}

// Fortran exponents and separators on the block line are accepted.
func TestReadSDPAFortranExponent(t *testing.T) {
	p, err := ReadSDPA(strings.NewReader("1\n1\n(2)\n{1.0D+00}\n1 1 1 1 1.0d0\n1 1 2 2 1\n0 1 1 2 5E-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.A[0] != 1 || p.Entries[0].V != 1 || p.Entries[2].V != 0.5 {
		t.Errorf("parsed %+v", p)
	}
}

// A model converted to SDPA solves to the same optimum: SDP_B of
// TestSDPBCommuting in a diagonal setting (optimal trace 1+3+2).
func TestProblemToSDPA(t *testing.T) {
	m := NewModel()
	sig := m.SymVar(3)
	m.PSD(sig.Expr().Minus(ConstMat(diagSym(1, 0, 2))))
	m.PSD(sig.Expr().Minus(ConstMat(diagSym(0, 3, 1))))
	m.Geq(sig.Trace(), Const(0)) // a linear row, to exercise the diagonal block
	m.Minimize(sig.Trace())
	s, err := m.Problem().SDPA()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Blocks, []int{3, 3, -1}) {
		t.Fatalf("blocks %v", s.Blocks)
	}
	r := solveSDPA(t, s)
	// The SDPA dual objective a^T y is the model's objective.
	if r.Status != Optimal || relErr(r.DualObj, 6) > 1e-8 || relErr(r.PrimalObj, 6) > 1e-8 {
		t.Errorf("status %v objectives %.12g %.12g, want 6", r.Status, r.PrimalObj, r.DualObj)
	}
}

func diagSym(d ...float64) *mat.SymDense {
	s := mat.NewSymDense(len(d), nil)
	for i, v := range d {
		s.SetSym(i, i, v)
	}
	return s
}
