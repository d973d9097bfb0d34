package sanitize

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	psample "github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// heldOutFile is a GeoLife trace of user 000, held out from the bundled
// prior (fitted on 001-007): 1,477 fixes over 4.4 hours at 1-5 s.
const heldOutFile = "../../shared/data/geolife/000/20081028003826.plt"

// heldOutRelease is heldOutFile's trace (its first points) released with
// the bundled prior and its private corpus index at epsilon 1, lambda 2,
// r = 100 m, seed 3, and the noise covariance its certificate states.
// Shared read-only by the tests that check that release (issue 32: the
// same seeded release of 1,477 points is made once per test binary).
type heldOutRelease struct {
	prior *prior.Prior
	tr    *trace.Trace
	ts    []float64
	cert  *Certificate
	g     mat.Symmetric
}

var heldOutReleases struct {
	sync.Mutex
	m map[[2]int]*heldOutRelease
}

// heldOut returns the release of heldOutFile's first points (all with
// points 0), by default or with PlacesEveryLength, made once per test
// binary; it skips the test without the GeoLife data.
func heldOut(t *testing.T, points int, every bool) *heldOutRelease {
	t.Helper()
	if _, err := os.Stat(heldOutFile); err != nil {
		t.Skip("GeoLife data not found beside the repository")
	}
	key := [2]int{points, 0}
	if every {
		key[1] = 1
	}
	heldOutReleases.Lock()
	defer heldOutReleases.Unlock()
	if r, ok := heldOutReleases.m[key]; ok {
		return r
	}
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	trs, _, err := trace.ReadFile(heldOutFile, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := trs[0]
	if points > 0 {
		tr.Points = tr.Points[:points]
	}
	// The bundled prior's private index (built from GeoLife 001-007, not
	// shipped) says user 000 is not in its corpus.
	corpusIdx, err := psample.PriorCorpus("../../shared/data/geolife")
	if err != nil {
		t.Fatal(err)
	}
	_, cert, err := Trace(tr, Options{Prior: pr, PriorCorpus: corpusIdx, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(3), PlacesEveryLength: every})
	if err != nil {
		t.Fatal(err)
	}
	ts := secondsOf(t, tr.Points)
	g, err := cert.NoiseCovariance(cert.Persons[0], ts)
	if err != nil {
		t.Fatal(err)
	}
	r := &heldOutRelease{prior: pr, tr: tr, ts: ts, cert: cert, g: g}
	if heldOutReleases.m == nil {
		heldOutReleases.m = map[[2]int]*heldOutRelease{}
	}
	heldOutReleases.m[key] = r
	return r
}
