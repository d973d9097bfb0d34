package attack_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/attack"
)

// The place adversary weighs each released point of a stay by what the
// noise law says it is worth: with independent noise of variances 1, 1
// and 4 m^2 the third point counts a quarter, and the estimate's standard
// deviation is 1/sqrt(1 + 1 + 1/4) m per coordinate.
func ExampleEstimatePlace() {
	east := []float64{0, 10, 20}
	north := []float64{5, 5, 5}
	k := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 4})
	p, err := attack.EstimatePlace(east, north, k)
	if err != nil {
		panic(err)
	}
	fmt.Printf("place (%.4f, %.4f) m, SD %.4f m per coordinate\n", p.East, p.North, p.SD)
	// Output: place (6.6667, 5.0000) m, SD 0.6667 m per coordinate
}
