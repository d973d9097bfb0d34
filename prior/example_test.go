package prior_test

import (
	"fmt"
	"log"

	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
)

// Fit a prior on a corpus (here one trace of the bundled synthetic
// sample; a real corpus has thousands of windows and must not contain the traces to
// protect). FitPaper fits one kernel the paper's way, on short windows;
// Fit with Options compares kernels on long windows instead.
func ExampleFitPaper() {
	traces, err := sample.Traces()
	if err != nil {
		log.Fatal(err)
	}
	corpus := traces[:1]
	p, rep, err := prior.FitPaper(corpus, prior.PaperOptions{Kernel: "rbf", Corpus: corpus[0].Name})
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
	// 5 windows fitted of 6, skipped map[too_short:1]
	// points   0- 49: 50 fitted at 5 s, l_eff east 1.30 north 1.02
	// points  50- 99: 50 fitted at 5 s, l_eff east 1.12 north 1.34
	// points 100-149: 50 fitted at 5 s, l_eff east 1.31 north 0.97
	// points 150-199: 50 fitted at 5 s, l_eff east 8.00 north 8.00
	// points 200-249: 50 fitted at 5 s, l_eff east 8.00 north 1.33
	// prior family: rbf, lengthscale 5.8-31.7 s (quantiles [0.25 0.75]), variance 6 m^2
}
