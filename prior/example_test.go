package prior_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// Fit a prior on a corpus (here one bundled GeoLife trace; a real corpus
// has thousands of windows and must not contain the traces to protect).
// Kernel "rbf" fits one kernel the paper's way, on short windows; the
// default (Kernel empty) compares kernels on long windows instead.
func ExampleFit() {
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{Name: sample.Name})
	if err != nil {
		log.Fatal(err)
	}
	corpus, err := trace.ReadAll(r)
	if err != nil {
		log.Fatal(err)
	}
	p, rep, err := prior.Fit(corpus, prior.Options{Kernel: "rbf", Corpus: sample.Name})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d windows fitted of %d, skipped %v\n", rep.Windows, rep.Candidates, rep.Skipped)
	for _, f := range rep.Fits {
		fmt.Printf("points %3d-%3d: %2d fitted at %.0f s, l_eff east %.2f north %.2f\n", f.First, f.Last, f.Points, f.PeriodS, f.LEff[0], f.LEff[1])
	}
	f := p.Family()
	fmt.Printf("prior family: %s, lengthscale %.1f-%.1f s (quantiles %v), variance %.0f m^2\n", f.Kernel, f.LengthscaleMin, f.LengthscaleMax, *p.Fit.FamilyQuantiles, f.Variance)
	// Output:
	// 3 windows fitted of 6, skipped map[too_short:3]
	// points   0- 51: 50 fitted at 5 s, l_eff east 3.94 north 1.35
	// points  70-126: 50 fitted at 5 s, l_eff east 2.56 north 3.45
	// points 176-228: 50 fitted at 5 s, l_eff east 1.05 north 1.44
	// prior family: rbf, lengthscale 6.9-16.1 s (quantiles [0.25 0.75]), variance 249 m^2
}
