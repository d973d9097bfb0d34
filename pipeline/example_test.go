package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracepriv/tracepriv/pipeline"
)

// Sanitise a corpus on Beam's Prism runner, in this process: the same
// release, certificates and manifest as the single-machine
// sanitize.Corpus.
func ExampleSanitize() {
	prior, err := os.ReadFile("../internal/sample/prior.json")
	if err != nil {
		panic(err)
	}
	out, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	res, err := pipeline.Sanitize(context.Background(), pipeline.SanitizeOptions{
		Input: "../internal/sample/*/*.plt", Output: filepath.Join(out, "released"),
		Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100,
	})
	if err != nil {
		panic(err)
	}
	m := res.Manifest
	fmt.Printf("%d people, %d points, epsilon at most %g\n", len(m.Persons), m.Points, m.EpsilonTarget)
	// Output:
	// 3 people, 2950 points, epsilon at most 1
}

// Release a trajectory database on Beam: counts per tree node summed by
// the runner, noise drawn once per node over the public grid.
func ExampleRelease() {
	out, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	res, err := pipeline.Release(context.Background(), pipeline.ReleaseOptions{
		Input: "../internal/sample/*/*.plt", Output: filepath.Join(out, "db"),
		Mechanism: "prefix", Epsilon: 1, CellM: 5000, BBox: "39.75,116.15,40.10,116.60", MaxLen: 3, MaxSeqs: 1,
	})
	if err != nil {
		panic(err)
	}
	c := res.Cert
	fmt.Printf("%s over %d cells: epsilon %g spent over %d levels\n", c.Mechanism, c.Alphabet, c.EpsilonSpent, len(c.Levels))
	// Output:
	// prefix over 64 cells: epsilon 1 spent over 3 levels
}
