package readme

import (
	"fmt"
	"log"
	"math"
	"os"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// snippet is the library example of README.md, verbatim between the
// markers (indented one tab); TestREADMESnippet keeps the two identical
// and runs it.
func snippet() {
	// BEGIN README
	traces, report, err := trace.ReadFile("20081024020959.plt", trace.ReadOptions{UID: "000"})
	if err != nil {
		log.Fatal(err) // e.g. "x.plt:12: field \"lat\": \"39.9x\" is not a number"
	}
	// Dirty rows (repeated timestamps, bad fields, a cut last line) are repaired or
	// skipped and counted by reason (docs/input.md); ReadOptions{Strict: true} stops instead.
	fmt.Println(report.SkippedRows(), report.ByReason())

	// Certified CIP loss of the optimal correlated noise for one basic secret.
	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6}, gp.Indices(50))
	design, err := cip.OptimalBasic(sigma, 24, 1.0) // total noise budget tr(Sigma_g) = 1
	fmt.Println(design.LossFactor)                  // certified by (E1); eps(lambda) = lambda/2 * r^2 * L

	// Least noise protecting every point at a target loss factor, (E3).
	all, err := cip.OptimalTarget(sigma, cip.EveryPoint(50), []float64{2.0}, nil)
	fmt.Println(all.Budget, all.LossFactor, all.LowerBound)

	// End to end: traces, a public prior family, a target; sanitised traces and the
	// certificate, per person (see sanitize.ExampleRelease, a checked version of this).
	prior, err := prior.ReadFile("prior.json")
	outs, cert, err := sanitize.Release(traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100})
	fmt.Println(len(outs), cert.EpsilonMax, cert.EpsilonKind, cert.Persons[0].RMSNoiseM)
	err = sanitize.WriteCertificate(os.Stdout, cert) // sanitize.ReadCertificate reads it back

	// Geo-indistinguishable noise from crypto/rand.
	pl := noise.PlanarLaplace{Epsilon: math.Log(10) / 100} // per metre
	dx, dy := pl.Rand()
	fmt.Println(pl.RadiusQuantile(0.9), dx, dy)
	// END README
}
