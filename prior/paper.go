package prior

import (
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/trace"
)

// PaperOptions configures FitPaper, the paper's single-kernel fit (Meehan
// and Chaudhuri's): one kernel on 240-320 s windows of at most 50 points,
// variance normalised to 1 and lengthscale in [1, 40] s. Zero fields take
// the defaults of that mode (DefaultKernel, DefaultMinDuration, …), never
// those of the kernel comparison, so a zero PaperOptions is the paper's
// fit. Its fields mean what Options' fields of the same name mean.
type PaperOptions struct {
	// Kernel is the one kernel fitted (default DefaultKernel, "rbf"; any
	// gp.NewKernel name but "periodic").
	Kernel string
	// MinDuration and MaxDuration bound a window's duration (defaults
	// DefaultMinDuration and DefaultMaxDuration).
	MinDuration, MaxDuration time.Duration
	// MaxPoints and MinPoints bound the points per window (defaults
	// DefaultMaxPoints and DefaultMinPoints).
	MaxPoints, MinPoints int
	// PaperWindows cuts only the first window of each trace, as the
	// authors' downsample_data.
	PaperWindows bool
	// Family holds the quantiles of the per-window lengthscales that
	// bound the family (default DefaultFamilyLow, DefaultFamilyHigh).
	Family [2]float64
	// InitLengthscale is where each fit starts, in seconds (default
	// DefaultInitLengthscale).
	InitLengthscale float64
	// FitOptions overrides gp.PaperFitOptions.
	FitOptions *gp.FitOptions
	// Workers, Progress and Corpus are Options'.
	Workers  int
	Progress func(done, total int)
	Corpus   string
}

// Options returns the Options of the paper's fit that o describes: the one
// configuration both entry points resolve (Options' defaults of the mode
// with Kernel set). Fit(traces, o.Options()) is FitPaper(traces, o).
func (o PaperOptions) Options() Options {
	k := o.Kernel
	if k == "" {
		// Kernel set is what selects the paper's mode in Options.
		k = DefaultKernel
	}
	return Options{Kernel: k, MinDuration: o.MinDuration, MaxDuration: o.MaxDuration,
		MaxPoints: o.MaxPoints, MinPoints: o.MinPoints, PaperWindows: o.PaperWindows,
		Family: o.Family, InitLengthscale: o.InitLengthscale, FitOptions: o.FitOptions,
		Workers: o.Workers, Progress: o.Progress, Corpus: o.Corpus}
}

// FitPaper fits one kernel the paper's way (see PaperOptions), where Fit
// with a zero Options compares kernels. It exists so that the mode is
// chosen by the type, not by whether Options.Kernel is empty.
func FitPaper(traces []*trace.Trace, o PaperOptions) (*Prior, *Report, error) {
	return Fit(traces, o.Options())
}
