package sdp

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The largest eigenvalue of C is max tr(C X) s.t. tr X = 1, X ⪰ 0; checked
// against gonum's symmetric eigensolver.
func TestMaxEigenvalue(t *testing.T) {
	c := mat.NewSymDense(4, []float64{
		4, 1, -2, 0.5,
		1, 3, 0, 1,
		-2, 0, 5, -1,
		0.5, 1, -1, 2,
	})
	var es mat.EigenSym
	if !es.Factorize(c, false) {
		t.Fatal("eigen")
	}
	vals := es.Values(nil)
	want := vals[len(vals)-1]
	p := &SDPA{M: 1, Blocks: []int{4}, A: []float64{1}}
	for i := 0; i < 4; i++ {
		for j := i; j < 4; j++ {
			p.Entries = append(p.Entries, SDPAEntry{Mat: 0, I: i, J: j, V: c.At(i, j)})
		}
		p.Entries = append(p.Entries, SDPAEntry{Mat: 1, I: i, J: i, V: 1})
	}
	r := solveSDPA(t, p)
	if r.Status != Optimal {
		t.Fatalf("status %v", r.Status)
	}
	for _, v := range []float64{r.PrimalObj, r.DualObj} {
		if relErr(v, want) > 1e-8 {
			t.Errorf("objective %.12g, want lambda_max %.12g", v, want)
		}
	}
	if r.RelGap > 1e-8 {
		t.Errorf("relative gap %g", r.RelGap)
	}
}

// An LP in SDPA form (one diagonal block): max 3 x1 + 2 x2 s.t.
// x1 + x2 + s1 = 4, x1 + 3 x2 + s2 = 6, all >= 0. Vertices (0,0), (4,0),
// (3,1), (0,2) give 0, 12, 11, 4: optimum 12 at x = (4, 0).
func TestLPAsDiagonalBlock(t *testing.T) {
	p := &SDPA{M: 2, Blocks: []int{-4}, A: []float64{4, 6}, Entries: []SDPAEntry{
		{Mat: 0, I: 0, J: 0, V: 3}, {Mat: 0, I: 1, J: 1, V: 2},
		{Mat: 1, I: 0, J: 0, V: 1}, {Mat: 1, I: 1, J: 1, V: 1}, {Mat: 1, I: 2, J: 2, V: 1},
		{Mat: 2, I: 0, J: 0, V: 1}, {Mat: 2, I: 1, J: 1, V: 3}, {Mat: 2, I: 3, J: 3, V: 1},
	}}
	r := solveSDPA(t, p)
	if r.Status != Optimal {
		t.Fatalf("status %v", r.Status)
	}
	if relErr(r.PrimalObj, 12) > 1e-8 || relErr(r.DualObj, 12) > 1e-8 {
		t.Errorf("objectives %.12g %.12g, want 12", r.PrimalObj, r.DualObj)
	}
	x := r.X[0]
	if math.Abs(x.At(0, 0)-4) > 1e-6 || math.Abs(x.At(1, 1)) > 1e-6 {
		t.Errorf("x = (%g, %g), want (4, 0)", x.At(0, 0), x.At(1, 1))
	}
	// Dual: y1 >= 3, y1 >= ... optimum y = (3, 0) (x2's reduced cost 2 - 3 < 0).
	if math.Abs(r.Y[0]-3) > 1e-6 || math.Abs(r.Y[1]) > 1e-6 {
		t.Errorf("y = %v, want (3, 0)", r.Y)
	}
}

// Max-cut relaxation of K3: the SDP value is n^2/4 = 2.25 (X = 3/2 I - J/2),
// and of the 5-cycle: (n/4) lambda_max(L) = (5/4)(2 - 2 cos(4 pi/5)), tight
// because C5 is vertex transitive.
func TestMaxCutKnownValues(t *testing.T) {
	k3 := [][]float64{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}
	c5 := make([][]float64, 5)
	for i := range c5 {
		c5[i] = make([]float64, 5)
	}
	for _, e := range cycleEdges(5) {
		c5[e[0]][e[1]], c5[e[1]][e[0]] = 1, 1
	}
	for _, tc := range []struct {
		name string
		w    [][]float64
		want float64
	}{
		{"K3", k3, 2.25},
		{"C5", c5, 1.25 * (2 - 2*math.Cos(4*math.Pi/5))},
	} {
		r := solveSDPA(t, maxCutSDPA(tc.w))
		if r.Status != Optimal {
			t.Errorf("%s: status %v", tc.name, r.Status)
			continue
		}
		if relErr(r.PrimalObj, tc.want) > 1e-8 || relErr(r.DualObj, tc.want) > 1e-8 {
			t.Errorf("%s: objectives %.12g %.12g, want %.12g", tc.name, r.PrimalObj, r.DualObj, tc.want)
		}
	}
}

// Lovász theta: sqrt(5) for the 5-cycle, 4 for the Petersen graph.
func TestLovaszTheta(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges [][2]int
		want  float64
	}{
		{"C5", 5, cycleEdges(5), math.Sqrt(5)},
		{"Petersen", 10, petersenEdges(), 4},
	} {
		r := solveSDPA(t, thetaSDPA(tc.n, tc.edges))
		if r.Status != Optimal {
			t.Errorf("%s: status %v", tc.name, r.Status)
			continue
		}
		if relErr(r.PrimalObj, tc.want) > 1e-8 || relErr(r.DualObj, tc.want) > 1e-8 {
			t.Errorf("%s: objectives %.12g %.12g, want %.12g", tc.name, r.PrimalObj, r.DualObj, tc.want)
		}
		if r.RelGap > 1e-8 {
			t.Errorf("%s: relative gap %g", tc.name, r.RelGap)
		}
	}
}

// (P) max tr(C X) s.t. tr(X) = -1 has no X ⪰ 0; (D) min -y s.t. y I - C ⪰ 0
// is unbounded.
func TestPrimalInfeasible(t *testing.T) {
	p := &SDPA{M: 1, Blocks: []int{2}, A: []float64{-1}, Entries: []SDPAEntry{
		{Mat: 0, I: 0, J: 0, V: 1}, {Mat: 0, I: 0, J: 1, V: 0.5},
		{Mat: 1, I: 0, J: 0, V: 1}, {Mat: 1, I: 1, J: 1, V: 1},
	}}
	r := solveSDPA(t, p)
	if r.Status != PrimalInfeasible {
		t.Fatalf("status %v, want %v", r.Status, PrimalInfeasible)
	}
	// The certificate is a ray of (D): y A_1 ⪰ 0 with a^T y < 0.
	if !(r.Y[0]*p.A[0] < 0 && r.Y[0] > 0) {
		t.Errorf("certificate y = %v", r.Y)
	}
}

// (D): y diag(1,-1) - I ⪰ 0 is infeasible; (P) max tr X s.t. X11 - X22 = 1
// is unbounded.
func TestDualInfeasible(t *testing.T) {
	p := &SDPA{M: 1, Blocks: []int{2}, A: []float64{1}, Entries: []SDPAEntry{
		{Mat: 0, I: 0, J: 0, V: 1}, {Mat: 0, I: 1, J: 1, V: 1},
		{Mat: 1, I: 0, J: 0, V: 1}, {Mat: 1, I: 1, J: 1, V: -1},
	}}
	r := solveSDPA(t, p)
	if r.Status != DualInfeasible {
		t.Fatalf("status %v, want %v", r.Status, DualInfeasible)
	}
	// The certificate is a ray X ⪰ 0 with tr(A_1 X) = 0 and tr(C X) > 0.
	x := r.X[0]
	if math.Abs(x.At(0, 0)-x.At(1, 1)) > 1e-6 || x.At(0, 0)+x.At(1, 1) <= 0 {
		t.Errorf("certificate X = %v", mat.Formatted(x))
	}
}

func TestValidateErrors(t *testing.T) {
	lmi := func(size int, entries ...Entry) []LMI {
		return []LMI{{Size: size, Terms: []Term{{Var: 0, F: &Sparse{N: size, Entries: entries}}}}}
	}
	for _, tc := range []struct {
		name string
		p    *Problem
		want string
	}{
		{"no vars", &Problem{}, "no variables"},
		{"no cones", &Problem{C: []float64{1}}, "no cone constraints"},
		{"nan objective", &Problem{C: []float64{math.NaN()}, LMIs: lmi(1, Entry{0, 0, 1})}, "objective coefficient 0"},
		{"entry range", &Problem{C: []float64{1}, LMIs: lmi(2, Entry{0, 2, 1})}, "entry (0,2) outside"},
		{"var range", &Problem{C: []float64{1}, Linear: []Linear{{Terms: []LinTerm{{Var: 3, V: 1}}}}}, "variable 3 out of range"},
		{"eq dims", &Problem{C: []float64{1}, LMIs: lmi(1, Entry{0, 0, 1}), A: mat.NewDense(1, 2, nil), B: []float64{1}}, "2 columns"},
	} {
		if _, err := Solve(tc.p, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A variable that no constraint involves is reported (the problem is
// then unbounded or the variable undetermined).
func TestUnconstrainedVariable(t *testing.T) {
	lmi := []LMI{{Size: 1, Terms: []Term{{Var: 0, F: &Sparse{N: 1, Entries: []Entry{{0, 0, 1}}}}}}}
	for _, c := range [][]float64{{1, 1}, {1, 0}} {
		_, err := Solve(&Problem{C: c, LMIs: lmi}, nil)
		if err == nil || !strings.Contains(err.Error(), "variable 1 appears in no constraint") {
			t.Errorf("c = %v: error %v", c, err)
		}
	}
}

func TestMaxIterations(t *testing.T) {
	prob, err := thetaSDPA(10, petersenEdges()).Problem()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Solve(prob, &Settings{MaxIter: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != MaxIterations || r.Iterations != 2 {
		t.Errorf("status %v after %d iterations", r.Status, r.Iterations)
	}
}

// Complementary slackness and dual feasibility of a returned solution:
// <S, Z> = 0 and <F_j, Z> = c_j, checked on the Petersen theta problem.
func TestSolutionCertificates(t *testing.T) {
	prob, _ := thetaSDPA(10, petersenEdges()).Problem()
	r, err := Solve(prob, nil)
	if err != nil || r.Status != Optimal {
		t.Fatalf("%v %v", err, r.Status)
	}
	if g := symDot(r.SBlocks[0], r.ZBlocks[0]); math.Abs(g) > 1e-7 {
		t.Errorf("<S, Z> = %g", g)
	}
	for j, tm := range prob.LMIs[0].Terms {
		if d := tm.F.dot(r.ZBlocks[0]) - prob.C[tm.Var]; math.Abs(d) > 1e-7 {
			t.Errorf("dual constraint %d violated by %g", j, d)
		}
	}
	var es mat.EigenSym
	for k, m := range []*mat.SymDense{r.SBlocks[0], r.ZBlocks[0]} {
		es.Factorize(m, false)
		if v := es.Values(nil)[0]; v < -1e-9 {
			t.Errorf("matrix %d has eigenvalue %g", k, v)
		}
	}
}

// X_ii = 1 with X_12 = 2 has no PSD solution (|X_12| <= 1): (P) infeasible.
// A diagonal block with max x1 s.t. x1 - x2 = 0 is unbounded: (D) infeasible.
func TestInfeasibleStructured(t *testing.T) {
	n := 6
	p := &SDPA{M: n + 1, Blocks: []int{n}, A: make([]float64, n+1)}
	for i := 0; i < n; i++ {
		p.A[i] = 1
		p.Entries = append(p.Entries, SDPAEntry{Mat: i + 1, I: i, J: i, V: 1}, SDPAEntry{Mat: 0, I: i, J: (i + 1) % n, V: 1})
	}
	p.A[n] = 4 // tr(A X) = 2 X_01 = 4
	p.Entries = append(p.Entries, SDPAEntry{Mat: n + 1, I: 0, J: 1, V: 1})
	if r := solveSDPA(t, p); r.Status != PrimalInfeasible {
		t.Errorf("correlation > 1: status %v", r.Status)
	}
	lp := &SDPA{M: 1, Blocks: []int{-2}, A: []float64{0}, Entries: []SDPAEntry{
		{Mat: 0, I: 0, J: 0, V: 1}, {Mat: 1, I: 0, J: 0, V: 1}, {Mat: 1, I: 1, J: 1, V: -1},
	}}
	if r := solveSDPA(t, lp); r.Status != DualInfeasible {
		t.Errorf("unbounded LP: status %v", r.Status)
	}
}
