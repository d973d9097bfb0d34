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
	ts, _, err := trace.ReadFile(path, trace.ReadOptions{Lenient: true})
	if err != nil {
		b.Fatal(err)
	}
	t := ts[0]
	t.Points = t.Points[:n]
	return t
}

func bundledPrior(b *testing.B) *gp.Prior {
	pr, err := gp.ReadPrior(bytes.NewReader(sample.Prior))
	if err != nil {
		b.Fatal(err)
	}
	return pr
}

// BenchmarkTrace1000 sanitises a 2-D GeoLife trace of 1,000 points, every
// point a secret, against the bundled prior family, end to end (design,
// certificate, exact sampling) with the secure source.
func BenchmarkTrace1000(b *testing.B) {
	t := benchTrace(b, 1000)
	opt := Options{Prior: bundledPrior(b), Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Secure()}
	for b.Loop() {
		if _, _, err := Trace(t, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoiseCost compares, on one 1,000-point GeoLife trace and the
// same target (epsilon 1, lambda 2, r = 100 m, every point), the noise of
// the robust design (envelope over the bundled family) with the
// single-prior design the tool used to release (proportional to the prior
// at the family's upper end, the old 0.75-quantile fit) and with the
// single prior at the nominal lengthscale. It reports the RMS displacement
// per point of each; only the robust one holds for the whole family.
func BenchmarkNoiseCost(b *testing.B) {
	t := benchTrace(b, 1000)
	fam := bundledPrior(b)
	for _, c := range []struct {
		name string
		l    float64 // 0: the family
	}{{"family", 0}, {"single-upper", fam.LengthscaleMax}, {"single-nominal", fam.Lengthscale}} {
		b.Run(c.name, func(b *testing.B) {
			p := *fam
			if c.l > 0 {
				p.Lengthscale, p.LengthscaleMin, p.LengthscaleMax = c.l, 0, 0
			}
			opt := Options{Prior: &p, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Secure()}
			var rms float64
			for b.Loop() {
				_, cert, err := Trace(t, opt)
				if err != nil {
					b.Fatal(err)
				}
				rms = cert.Persons[0].RMSNoiseM
			}
			b.ReportMetric(rms, "rms_m")
		})
	}
}
