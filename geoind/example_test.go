package geoind_test

import (
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/noise"
)

// The accuracy of the planar Laplace mechanism for ε = ln 10 per 100 m:
// the release is within α_N(0.9) of the secret nine times in ten.
func ExampleNoiseAccuracy() {
	eps := math.Ln10 / 100
	fmt.Printf("α(0.9) = %.1f m, mean error %.1f m\n", geoind.NoiseAccuracy(eps, 0.9), geoind.ExpectedError(eps))
	// Output: α(0.9) = 168.9 m, mean error 86.9 m
}

// A session of the predictive mechanism: the first query gets fresh noise;
// a query a minute later, a few metres away, reuses it when the private
// test accepts it, paying only for the test. With α = 3 km the noise costs
// c_N/(αε) = 3.8897/(3000·0.023026) = 5.6 % of ε and each test
// η c_θ (1+1/γ)/(αε) = 0.5·ln 5·2.25/(3000·0.023026) = 2.6 %.
func ExampleSession() {
	eps := math.Ln10 / 100
	cfg := geoind.Config{
		Mechanism: "pm", Manager: "fixed-utility",
		Params:   geoind.Params{Epsilon: eps, PR0: 0.5},
		Accuracy: 3000, Origin: geoind.LatLon{Lat: 39.9, Lon: 116.4},
		Noise: geoind.PlanarLaplace{Grid: 1},
	}
	// Seeded for a reproducible example only; production uses nil
	// (crypto/rand).
	s, err := geoind.NewSession(cfg, noise.Seeded(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2008, 10, 24, 2, 10, 0, 0, time.UTC)
	for i := range 3 {
		rep, err := s.Query(geo.Point{Lat: 39.9841 + 0.0001*float64(i), Lon: 116.3185}, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d: mode %s, hard %v, spent %.1f%% of ε\n", rep.Step, rep.Mode, rep.Hard, 100*rep.Spent/rep.Budget)
	}
	// Output:
	// step 0: mode noise, hard true, spent 5.6% of ε
	// step 1: mode test, hard false, spent 8.3% of ε
	// step 2: mode test, hard false, spent 10.9% of ε
}
