package stattest_test

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/internal/stattest"
)

func ExampleDPCheck() {
	// Output histograms of a mechanism on neighbouring inputs x and x'.
	a := []int{4000, 3000, 2000, 1000}
	b := []int{1000, 2000, 3000, 4000}
	r, err := stattest.DPCheck{Epsilon: math.Log(2)}.Check(a, b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("OK %v, worst bin %d, max ratio %.1f\n", r.OK, r.Worst.Bin, r.MaxRatio)
	r, _ = stattest.DPCheck{Epsilon: math.Log(4.5)}.Check(a, b)
	fmt.Printf("OK %v at e^eps = 4.5\n", r.OK)
	// Output:
	// OK false, worst bin 0, max ratio 4.0
	// OK true at e^eps = 4.5
}
