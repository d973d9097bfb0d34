package sample_test

import (
	"fmt"
	"log"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
)

// Example releases the bundled synthetic corpus against the bundled prior
// family: every person's points, places and route at epsilon 1 (order 2,
// 100 m). The seed makes the example reproducible; a real release leaves
// Source nil (crypto/rand).
func Example() {
	prior, err := sample.Prior()
	if err != nil {
		log.Fatal(err)
	}
	traces, err := sample.Traces()
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range traces {
		fmt.Printf("%s %s: %d points over %s\n", t.UID, t.Name, t.Len(), t.Duration())
	}
	fmt.Println("nominal prior member:", prior.Kernel, "origin:", prior.Origin.Lat, prior.Origin.Lon)
	outs, cert, err := sanitize.Release(traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d traces of %d people released, epsilon at most %.4g, private: %v\n", len(outs), len(cert.Persons), cert.EpsilonMax, cert.Private)
	// Output:
	// synth-1 synth-1/commute.plt: 268 points over 23m10s
	// synth-1 synth-1/lunch.plt: 442 points over 41m40s
	// synth-2 synth-2/cycle.plt: 929 points over 31m26s
	// synth-3 synth-3/walk.plt: 1311 points over 22m3s
	// nominal prior member: matern32 origin: 39.9042 116.4074
	// 4 traces of 3 people released, epsilon at most 1, private: false
}
