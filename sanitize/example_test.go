package sanitize_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// Sanitise traces against a public prior family with Release, the entry
// point README.md shows: every point, place and the route a secret,
// epsilon 1 at Rényi order 2 within 100 m, for every lengthscale of the
// family, per person. The trace is the bundled synthetic sample (package
// sample); the seed is for a reproducible example only: releases leave
// Source nil (crypto/rand).
func ExampleRelease() {
	traces, err := sample.Traces()
	if err != nil {
		log.Fatal(err)
	}
	in := traces[:1]             // a made-up person's commute
	prior, err := sample.Prior() // tracepriv fit wrote it, on GeoLife users 001-007
	if err != nil {
		log.Fatal(err)
	}
	outs, cert, err := sanitize.Release(in, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)})
	if err != nil {
		log.Fatal(err)
	}
	out, p := outs[0], cert.Persons[0]
	fmt.Printf("%d points released, timestamps kept: %v\n", out.Len(), out.Points[0].Time.Equal(in[0].Points[0].Time))
	fmt.Printf("family: %v\n", cert.PriorFamily)
	fmt.Printf("method %s: epsilon %.3g (%s) for all %d points of person %s\n", cert.Design, p.EpsilonMax, p.EpsilonKind, p.Secrets.Count, p.UID)
	c := p.SecretClasses
	fmt.Printf("points %.3g, places %.3g (covered %v), route %.3g\n", c.Points.Epsilon, c.Places.Epsilon, c.Places.Covered, c.Route.Epsilon)
	fmt.Printf("best guess between two places 100 m apart: %.1f %%\n", 100*cert.Meaning.BestGuessAccuracy)
	fmt.Printf("RMS noise %.0f m (%.2fx one known prior); origin from the %s; private %v\n", p.RMSNoiseM, p.RMSOverSingle, cert.Origin.Source, cert.Private)
	// Output:
	// 268 points released, timestamps kept: true
	// family: matern12, lengthscale in [20, 7.2e+05] s; matern32, lengthscale in [20, 7200] s; matern52, lengthscale in [20, 7200] s
	// method envelope: epsilon 1 (upper_bound) for all 268 points of person synth-1
	// points 1, places 1 (covered true), route 0.235
	// best guess between two places 100 m apart: 69.1 %
	// RMS noise 400 m (2.83x one known prior); origin from the prior; private false
}

// Release a file and write the result with its certificate: both land,
// or neither does. Reading the certificate back is what an auditor or
// attack.FromCertificate starts from.
func ExampleFiles() {
	traces, err := sample.Traces()
	if err != nil {
		log.Fatal(err)
	}
	in := traces[:1]
	prior, err := sample.Prior()
	if err != nil {
		log.Fatal(err)
	}
	out, cert, err := sanitize.Release(in, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "release")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	files := sanitize.Files{Traces: filepath.Join(dir, "commute.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "commute.cert.json")}
	if err := files.Write(in, out, cert); err != nil {
		log.Fatal(err)
	}
	back, err := sanitize.ReadCertificateFile(files.Certificate)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("person %s: %d points, epsilon %.3g, randomness %s\n", back.Persons[0].UID, back.Persons[0].Points, back.Persons[0].EpsilonMax, back.Randomness)
	// Output:
	// person synth-1: 268 points, epsilon 1, randomness seeded:1
}

// What an epsilon means to a person: at Rényi order 2, within 100 m, the
// best guess between two places 100 m apart (equally likely beforehand).
func ExampleMeaningOf() {
	for _, eps := range []float64{0.1, 1, 4} {
		m := sanitize.MeaningOf(eps, 2, 100)
		fmt.Printf("epsilon %g: mu %.3f, best guess %.1f %%\n", eps, m.GDPMu, 100*m.BestGuessAccuracy)
	}
	// Output:
	// epsilon 0.1: mu 0.316, best guess 56.3 %
	// epsilon 1: mu 1.000, best guess 69.1 %
	// epsilon 4: mu 2.000, best guess 84.1 %
}
