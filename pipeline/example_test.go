package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/pipeline"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

func init() {
	register.Function1x1(describePerson)
}

// describePerson is a step of the user's own: one line per person
// released.
func describePerson(r pipeline.PersonRelease) string {
	n := 0
	for _, t := range r.Traces {
		n += t.Len()
	}
	return fmt.Sprintf("%s: %d points in %d traces, certified epsilon <= 1: %v (randomness %s)", r.UID, n, len(r.Traces), r.Certificate.EpsilonMax <= 1, r.Certificate.Randomness)
}

// Compose the release into a pipeline of your own: read trace files,
// release each person's traces (all of them jointly, with a certificate),
// and go on with the releases as you like; here, one line per person to a
// text file. The seed is for a reproducible example only: a release leaves
// Seeded false (crypto/rand on the workers).
func ExampleSanitizeTraces() {
	prior, err := os.ReadFile("../internal/sample/prior.json")
	if err != nil {
		panic(err)
	}
	files, _, err := pipeline.Match("../internal/sample/*/*.plt")
	if err != nil {
		panic(err)
	}
	out, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)

	p, s := beam.NewPipelineWithRoot()
	traces := pipeline.ReadTraces(s, beam.CreateList(s, files), pipeline.Reading{})
	released, _ := pipeline.SanitizeTraces(s, traces, pipeline.SanitizeParams{
		Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Seeded: true, Seed: 1,
	})
	textio.Write(s, filepath.Join(out, "people.txt"), beam.ParDo(s, describePerson, released))
	if _, err := pipeline.Run(context.Background(), p); err != nil {
		panic(err)
	}

	b, err := os.ReadFile(filepath.Join(out, "people.txt"))
	if err != nil {
		panic(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(lines) // the runner's order is its own
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// synth-1: 710 points in 2 traces, certified epsilon <= 1: true (randomness seeded:1)
	// synth-2: 929 points in 1 traces, certified epsilon <= 1: true (randomness seeded:1)
	// synth-3: 1311 points in 1 traces, certified epsilon <= 1: true (randomness seeded:1)
}

// Sanitise a corpus of files on Beam's Prism runner, in this process: the
// same release, certificates and manifest as the single-machine
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
		SanitizeParams: pipeline.SanitizeParams{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100},
		// Each folder of the sample is one person.
		Reading: pipeline.Reading{AsCorpus: true},
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
func ExampleSynthesize() {
	out, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(out)
	res, err := pipeline.Synthesize(context.Background(), pipeline.SynthesizeOptions{
		Input: "../internal/sample/*/*.plt", Output: filepath.Join(out, "db"),
		Mechanism: trajdb.MechanismPrefix, Epsilon: 1, CellM: 5000, BBox: trace.BBox{MinLat: 39.75, MinLon: 116.15, MaxLat: 40.10, MaxLon: 116.60}, MaxLen: 3, MaxSeqs: 1,
	})
	if err != nil {
		panic(err)
	}
	c := res.Cert
	fmt.Printf("%s over %d cells: epsilon %g spent over %d levels\n", c.Mechanism, c.Alphabet, c.EpsilonSpent, len(c.Levels))
	// Output:
	// prefix over 64 cells: epsilon 1 spent over 3 levels
}
