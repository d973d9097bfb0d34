package gp_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/gp"

	"gonum.org/v1/gonum/mat"
)

// The state-space form of a Matérn 3/2 kernel, and the covariance of its
// state two seconds apart, A(2) Pinf, whose first entry is the kernel.
func ExampleStateSpace() {
	k := gp.Matern32{Variance: 4, Lengthscale: 10}
	m, err := gp.StateSpace(k)
	if err != nil {
		panic(err)
	}
	a, _ := m.Transition(2)
	var c mat.Dense
	c.Mul(a, m.Pinf())
	fmt.Printf("order %d, lambda %.4f, Qc %.4f\n", m.Order, m.Lambda, m.Qc())
	fmt.Printf("Cov(f(t+2), f(t)) = %.6f, kernel %.6f\n", c.At(0, 0), k.Eval(2, 0))
	// Output:
	// order 1, lambda 0.1732, Qc 0.0831
	// Cov(f(t+2), f(t)) = 3.808845, kernel 3.808845
}
