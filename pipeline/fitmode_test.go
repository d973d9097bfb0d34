package pipeline

import (
	"testing"

	"github.com/tracepriv/tracepriv/prior"
)

// TestFitParamsMode: --kernel or --paper-windows select the paper's fit
// (prior.PaperOptions, as tracepriv fit does), and otherwise kernels are
// compared over every window (prior.Options with MaxWindows -1); the
// shared fields reach either mode.
func TestFitParamsMode(t *testing.T) {
	shared := FitParams{Family: [2]float64{0.2, 0.8}, MaxPoints: 70, Corpus: "c"}
	cmp, ok := shared.Mode().(prior.Options)
	if !ok || cmp.MaxWindows != -1 || cmp.Family != shared.Family || cmp.MaxPoints != 70 || cmp.Corpus != "c" {
		t.Errorf("no kernel: %#v, want the comparison over every window", shared.Mode())
	}
	for _, p := range []FitParams{{Kernel: "matern32"}, {PaperWindows: true}} {
		p.Family, p.MaxPoints, p.Corpus = shared.Family, shared.MaxPoints, shared.Corpus
		paper, ok := p.Mode().(prior.PaperOptions)
		if !ok || paper.Kernel != p.Kernel || paper.PaperWindows != p.PaperWindows || paper.Family != p.Family || paper.MaxPoints != 70 || paper.Corpus != "c" {
			t.Errorf("%+v: %#v, want the paper's fit", p, p.Mode())
		}
	}
}
