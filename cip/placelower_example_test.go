package cip_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// How much noise must any Gaussian mechanism add so that every 2-minute
// stay of a trace sampled every 5 s, moved by 100 m, is within epsilon 1
// at lambda 2 against a Matérn 3/2 adversary at 20 s? The bound holds for
// every noise shape; the certified trial is a noise that meets the target
// for those stays, so the least noise lies between the two.
func ExamplePlacesNoiseLowerBound() {
	ts := make([]float64, 100)
	for i := range ts {
		ts[i] = 5 * float64(i)
	}
	b, err := cip.PlacesNoiseLowerBound(cip.PlaceLowerRequest{
		Times:   ts,
		Members: []cip.PlaceLowerMember{{Kernel: gp.KernelMatern32, Lengthscale: 20, Variance: 400}},
		Windows: cip.StayWindows(ts, []float64{120}, 1),
		Epsilon: 1, Lambda: 2, Radius: 100,
		Rounds: 4,
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d stays; every Gaussian mechanism: at least %.0f m RMS; a noise certifying them: %.0f m\n",
		b.Constraints, b.RMSNoiseM, b.DesignRMSM)
	// Output: 76 stays; every Gaussian mechanism: at least 200 m RMS; a noise certifying them: 202 m
}
