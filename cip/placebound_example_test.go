package cip_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// The loss factor of every window of up to four hours moved rigidly,
// against every Matérn 1/2 member of lengthscale 60 s to 10 minutes that
// conditions on the window, under noise with Matérn 1/2 components from a
// minute to a week (unit weights) and a route component.
func ExamplePlaceConditionalBound() {
	var noise []gp.Kernel
	for l := 60.0; l <= 7*86400; l *= 2 {
		noise = append(noise, gp.Matern12{Variance: 1, Lengthscale: l})
	}
	noise = append(noise, gp.Matern12{Variance: 0.1, Lengthscale: cip.RouteLengthscale})
	b, err := cip.PlaceConditionalBound(gp.KernelMatern12, 60, 600, 4*3600, noise)
	if err != nil {
		panic(err)
	}
	// The bound scales as 1/c when every weight is multiplied by c: with
	// weights in m^2, eps = lambda/2 r^2 b/c.
	fmt.Printf("loss factor at most %.3g per unit weight\n", b)
	// Output: loss factor at most 1.13 per unit weight
}
