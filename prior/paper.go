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

// config is the paper's mode: Kernel set (DefaultKernel when empty).
func (o PaperOptions) config() config {
	k := o.Kernel
	if k == "" {
		k = DefaultKernel
	}
	return config{Kernel: k, MinDuration: o.MinDuration, MaxDuration: o.MaxDuration,
		MaxPoints: o.MaxPoints, MinPoints: o.MinPoints, PaperWindows: o.PaperWindows,
		Family: o.Family, InitLengthscale: o.InitLengthscale, FitOptions: o.FitOptions,
		Workers: o.Workers, Progress: o.Progress, Corpus: o.Corpus}
}

// Paper returns the paper's fit of kernel ("" for DefaultKernel; with
// firstWindows, only the first window of each trace) with o's window
// bounds, family quantiles, workers, progress and corpus name, the fields
// the two modes share: for a command line whose --kernel flag selects
// FitPaper over Fit.
func (o Options) Paper(kernel string, firstWindows bool) PaperOptions {
	return PaperOptions{Kernel: kernel, PaperWindows: firstWindows, MinDuration: o.MinDuration, MaxDuration: o.MaxDuration,
		MaxPoints: o.MaxPoints, MinPoints: o.MinPoints, Family: o.Family, Workers: o.Workers, Progress: o.Progress, Corpus: o.Corpus}
}

// Check reports whether FitPaper would accept o.
func (o PaperOptions) Check() error { return o.config().Check() }

// FitPaper fits one kernel the paper's way (see PaperOptions), where Fit
// compares kernels: the mode is chosen by the options' type.
func FitPaper(traces []*trace.Trace, o PaperOptions) (*Prior, *Report, error) {
	return fit(traces, o.config())
}
