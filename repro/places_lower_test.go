package repro

import (
	"bytes"
	"os"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// BenchmarkPlacesLowerBound runs "tracepriv repro places-lower-bound" on
// the traces where issue 31's RMS targets are measured: the first 1,000
// fixes of GeoLife 000/20081028003826.plt (BenchmarkNoiseCost's trace) and
// the whole 1,477-fix, 4.4-hour trace (TestPlacesEveryLength's), with the
// bundled family, stays of 30, 50 and 90 minutes from every point (one in
// two on the longer trace, to keep the run within minutes: a subset of
// the windows still gives a valid bound), epsilon 1, lambda 2, r = 100 m,
// six rounds of the trial (four on the longer trace). It reports the lower bound on rms_noise_m of
// every Gaussian mechanism certifying those stays against every member
// (bound_rms_m), the RMS of a noise the computation found that certifies them
// (design_rms_m), and the default's and PlacesEveryLength's RMS. It is
// skipped when the data set is not beside the repository.
func BenchmarkPlacesLowerBound(b *testing.B) {
	const file = "../../shared/data/geolife/000/20081028003826.plt"
	if _, err := os.Stat(file); err != nil {
		b.Skip("GeoLife data not found:", err)
	}
	for _, c := range []struct {
		name                  string
		points, stride, round int
	}{{"1000-points", 1000, 1, 6}, {"held-out-4.4h-stride-2", 0, 2, 4}} {
		b.Run(c.name, func(b *testing.B) {
			var rep *PlacesLower
			for b.Loop() {
				var err error
				rep, err = runPlacesLowerPrefix(file, c.points, PlacesLowerOptions{Stride: c.stride, Rounds: c.round})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rep.Bound.RMSNoiseM, "bound_rms_m")
			b.ReportMetric(rep.Bound.DesignRMSM, "design_rms_m")
			b.ReportMetric(rep.DefaultRMSM, "default_rms_m")
			b.ReportMetric(rep.EveryLengthRMSM, "every_length_rms_m")
		})
	}
}

// runPlacesLowerPrefix runs RunPlacesLower on the first n points of file
// (all when n is 0) with the bundled prior and the settings.
func runPlacesLowerPrefix(file string, n int, opt PlacesLowerOptions) (*PlacesLower, error) {
	trs, _, err := trace.ReadFile(file, trace.ReadOptions{})
	if err != nil {
		return nil, err
	}
	tr := joinInTime(trs)
	if n > 0 && n < len(tr.Points) {
		tr.Points = tr.Points[:n]
	}
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		return nil, err
	}
	opt.Prior = pr
	return RunPlacesLower(tr, opt)
}
