package sdp_test

import (
	"fmt"
	"log"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/sdp"
)

// The Lovász theta number of the 5-cycle, sqrt(5), from an SDPA file:
// maximise tr(J X) s.t. tr X = 1, X_ij = 0 on the edges, X ⪰ 0.
func ExampleSolveSDPA() {
	var b strings.Builder
	b.WriteString("\"Lovasz theta of C5\"\n6\n1\n5\n1 0 0 0 0 0\n")
	for i := 1; i <= 5; i++ {
		for j := i; j <= 5; j++ {
			fmt.Fprintf(&b, "0 1 %d %d 1\n", i, j)
		}
		fmt.Fprintf(&b, "1 1 %d %d 1\n", i, i)
		fmt.Fprintf(&b, "%d 1 %d %d 1\n", i+1, min(i, i%5+1), max(i, i%5+1))
	}
	p, err := sdp.ReadSDPA(strings.NewReader(b.String()))
	if err != nil {
		log.Fatal(err)
	}
	r, err := sdp.SolveSDPA(p, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status)
	fmt.Printf("theta = %.6f (sqrt 5 = %.6f)\n", r.PrimalObj, math.Sqrt(5))
	// Output:
	// optimal
	// theta = 2.236068 (sqrt 5 = 2.236068)
}

// The paper's SDP_B: the least-trace covariance that dominates two others.
// For the diagonal S_1 = diag(1, 0, 2), S_2 = diag(0, 3, 1) it is the
// elementwise maximum, of trace 6.
func ExampleModel() {
	m := sdp.NewModel()
	sigma := m.SymVar(3)
	for _, s := range [][]float64{{1, 0, 2}, {0, 3, 1}} {
		d := mat.NewSymDense(3, nil)
		for i, v := range s {
			d.SetSym(i, i, v)
		}
		m.PSD(sigma.Expr().Minus(sdp.ConstMat(d))) // Sigma ⪰ S_i
	}
	m.Minimize(sigma.Trace())
	sol, err := m.Solve(nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sol.Status)
	fmt.Printf("tr Sigma = %.6f\n", sol.Objective)
	s := sol.SymValue(sigma)
	fmt.Printf("diag = %.4f %.4f %.4f\n", s.At(0, 0), s.At(1, 1), s.At(2, 2))
	// Output:
	// optimal
	// tr Sigma = 6.000000
	// diag = 1.0000 3.0000 2.0000
}
