package sanitize

import (
	"bytes"
	"os"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// benchTrace returns the first n points of a real GeoLife trace (user 000,
// 1,477 fixes at 1-5 s), or skips when the data set is not beside the
// repository.
func benchTrace(b *testing.B, n int) *trace.Trace {
	path := "../../shared/data/geolife/000/20081028003826.plt"
	if _, err := os.Stat(path); err != nil {
		b.Skip("GeoLife data not found:", err)
	}
	ts, _, err := trace.ReadFile(path, trace.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	t := ts[0]
	t.Points = t.Points[:n]
	return t
}

// BenchmarkTrace1000 is issue 5's end-to-end target: a 2-D GeoLife trace
// of 1,000 points, every point a secret, designed, sampled and certified
// (under 10 s), with the bundled prior and the secure source.
func BenchmarkTrace1000(b *testing.B) {
	t := benchTrace(b, 1000)
	pr, err := gp.ReadPrior(bytes.NewReader(sample.Prior))
	if err != nil {
		b.Fatal(err)
	}
	opt := Options{Prior: pr, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Secure()}
	for b.Loop() {
		if _, _, err := Trace(t, opt); err != nil {
			b.Fatal(err)
		}
	}
}
