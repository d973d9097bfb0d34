package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

func init() { register(newFitCmd) }

// fitCmd is "tracepriv fit".
type fitCmd struct {
	env        *cli.Env
	ins        []string
	out, plt   string
	rf         cli.ReadFlags
	opt        prior.Options
	kernel     string // --kernel: the paper's fit of this kernel (prior.FitPaper)
	paperWins  bool   // --paper-windows: the paper's fit on its windows
	minD, maxD time.Duration
	family     []float64
	force      bool
}

func newFitCmd(env *cli.Env) *cobra.Command {
	c := &fitCmd{env: env}
	long, example := help("fit")
	cmd := &cobra.Command{
		Use:     "fit --in CORPUS --out PRIOR.json",
		Short:   "Fit a Gaussian-process prior class on a corpus of traces",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&c.ins, "in", nil, "corpus: a trace file or a directory (searched recursively); repeatable")
	f.StringVarP(&c.out, "out", "o", "", "prior file to write (JSON)")
	f.StringVar(&c.plt, "plot", "", "histogram of l_eff to draw: .svg, .png or .pdf")
	f.BoolVar(&c.force, "force", false, "replace --out and --plot if they exist")
	f.StringVar(&c.kernel, "kernel", "", "fit this one kernel the paper's way (rbf, matern32, matern52; 240-320 s windows, lengthscale <= 40 s) instead of comparing kernels")
	f.StringSliceVar(&c.opt.Kernels, "kernels", slices.Clone(prior.CompareKernels), "kernels compared by held-out likelihood; sums of a short and a long kernel on request: matern32+matern32, matern12+matern32 (docs/fit.md)")
	f.Float64SliceVar(&c.family, "family", nil, "quantiles LO,HI of the per-window lengthscales that bound the prior family (1 - HI for the variance); default 0.05,0.95 (0.25,0.75 with --kernel)")
	f.DurationVar(&c.minD, "min-duration", 0, "shortest window (default 20m, 4m with --kernel)")
	f.DurationVar(&c.maxD, "max-duration", 0, "longest window (default 2h, 5m20s with --kernel)")
	f.IntVar(&c.opt.MaxPoints, "max-points", 0, "most points fitted per window, denser windows are thinned (default 200, 50 with --kernel)")
	f.IntVar(&c.opt.MinPoints, "min-points", 0, "fewest points fitted per window (default 20, 10 with --kernel)")
	f.DurationVar(&c.opt.MinSpacing, "min-spacing", 0, "least time between fitted fixes when comparing kernels (default 10s)")
	f.IntVar(&c.opt.MaxWindows, "max-windows", 0, "most windows fitted when comparing kernels, a larger corpus is subsampled evenly (default 240; -1 for all)")
	f.IntVar(&c.opt.Workers, "workers", 0, "windows fitted in parallel (default: all cores)")
	f.BoolVar(&c.paperWins, "paper-windows", false, "cut as the authors' code: only the first window of each trace (for reproducing the paper)")
	c.rf.Add(cmd)
	c.rf.AddCorpus(cmd.Flags(), "the persons label the fitted windows (give each person's folder as an --in, or the corpus with --corpus)")
	return cmd
}

// check refuses flags that cannot make a fit.
func (c *fitCmd) check(fl *pflag.FlagSet) error {
	opt, family := &c.opt, c.family
	switch {
	case len(c.ins) == 0 || c.out == "":
		return usageErrorf("fit: --in and --out are required")
	case fl.Changed("family") && (len(family) != 2 || !(family[0] > 0 && family[0] <= family[1] && family[1] < 1)):
		return usageErrorf("fit: --family %v: give two quantiles LO,HI with 0 < LO <= HI < 1, e.g. 0.05,0.95", family)
	case fl.Changed("min-duration") && c.minD < 0:
		// options reads 0 as "no minimum"; a negative one was read so too.
		return usageErrorf("fit: --min-duration %v must be 0 (no minimum) or positive", c.minD)
	case fl.Changed("max-duration") && c.maxD <= 0:
		return usageErrorf("fit: --max-duration %v must be positive", c.maxD)
	case fl.Changed("max-points") && opt.MaxPoints <= 0, fl.Changed("min-points") && opt.MinPoints <= 0:
		return usageErrorf("fit: --max-points %d and --min-points %d must be positive", opt.MaxPoints, opt.MinPoints)
	case fl.Changed("min-spacing") && opt.MinSpacing <= 0:
		return usageErrorf("fit: --min-spacing %v must be positive", opt.MinSpacing)
	case fl.Changed("max-windows") && opt.MaxWindows == 0:
		return usageErrorf("fit: --max-windows 0: give a positive number, or -1 for no bound")
	case fl.Changed("kernel") && fl.Changed("kernels"):
		return usageErrorf("fit: give --kernel (one kernel, the paper's way) or --kernels (compared), not both")
	}
	if err := cli.CheckFigure("--plot", c.plt); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	return nil
}

func (c *fitCmd) run(fl *pflag.FlagSet) error {
	start := time.Now()
	if err := c.check(fl); err != nil {
		return err
	}
	idxPath := prior.CorpusIndexPath(c.out)
	if err := checkOutputs(c.ins, c.force, map[string]string{"--out": c.out, "--plot": c.plt, "--out's corpus index": idxPath}); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	// A Ticker, not a bar alone: off a terminal (a log, a pipe) it still
	// prints a line every 10 s, so that a corpus fit of minutes is never
	// silent. Like attack's, it is silent with --json (and --quiet).
	penv := *c.env
	penv.Quiet = c.env.Quiet || c.env.JSON
	res, traces, err := c.read(&penv)
	if err != nil {
		return err
	}
	opt := c.options(fl)
	// The number of windows is known once Fit has cut them.
	var tick *cli.Ticker
	opt.Progress = func(done, total int) {
		if tick == nil {
			tick = penv.Ticker(total, "fit: fitting windows")
		}
		tick.Set(done, "windows")
	}
	var p *prior.Prior
	var rep *prior.Report
	if c.kernel != "" || c.paperWins {
		p, rep, err = prior.FitPaper(traces, opt.Paper(c.kernel, c.paperWins))
	} else {
		p, rep, err = prior.Fit(traces, opt)
	}
	if err != nil {
		// prior.Options' parameters are named as their flags.
		err, _ = param.AsFlag(err, nil)
		return fmt.Errorf("fit: %w", err)
	}
	summary := *rep
	summary.Fits = nil
	res.Report, res.PaperLEffQuartiles, res.Prior = &summary, prior.PaperLEffQuartiles, p
	if err := c.write(res, rep, idxPath); err != nil {
		return err
	}
	res.ElapsedS = time.Since(start).Seconds()
	return c.env.Emit(res, res.WriteText)
}

// read reads the corpus, each --in as given, so that the one person rule
// (trace.PersonRule) sees each input, a corpus with --corpus.
func (c *fitCmd) read(penv *cli.Env) (*prior.FitSummary, []*trace.Trace, error) {
	files, ignored, err := trace.Files(c.ins...)
	if err != nil {
		return nil, nil, fmt.Errorf("fit: --in: %w", err)
	}
	res := &prior.FitSummary{Corpus: c.ins, Files: len(files), Ignored: ignored, Out: c.out, Plot: c.plt}
	var traces []*trace.Trace
	read := penv.Ticker(len(files), "fit: reading")
	nread := 0
	irep, err := c.rf.ReadEach(c.ins, func(_ string, ts []*trace.Trace) {
		traces = append(traces, ts...)
		nread++
		read.Set(min(nread, len(files)), "files")
	})
	if err != nil {
		return nil, nil, fmt.Errorf("fit: %w", err)
	}
	c.env.ReportSkipped(irep)
	// The prior records its persons, and sanitize refuses a person it was
	// fitted on: say when folders were merged.
	c.env.HintCorpus(&c.rf, c.ins...)
	res.Deduplicated, res.SkippedRecords, res.InputSummary = irep.Deduplicated, irep.Skipped, irep.Summary()
	return res, traces, nil
}

// options are the flags' prior.Options. Zero options mean the library's
// defaults for the mode; a flag the user gives is theirs (--min-duration
// 0: none).
func (c *fitCmd) options(fl *pflag.FlagSet) prior.Options {
	opt := c.opt
	if fl.Changed("min-duration") {
		opt.MinDuration = max(c.minD, time.Nanosecond)
	}
	if fl.Changed("max-duration") {
		opt.MaxDuration = c.maxD
	}
	// The prior is published: it names its corpus without the machine's
	// absolute paths (infile.PublicName).
	names := make([]string, len(c.ins))
	for i, in := range c.ins {
		names[i] = infile.PublicName(in)
	}
	opt.Corpus = strings.Join(names, ", ")
	if fl.Changed("family") {
		opt.Family = [2]float64{c.family[0], c.family[1]}
	}
	return opt
}

// write writes the prior, its private corpus index and its plot together
// or not at all.
func (c *fitCmd) write(res *prior.FitSummary, rep *prior.Report, idxPath string) error {
	p := res.Prior
	group := []atomicfile.File{{Path: c.out, Perm: 0o644, Fill: p.Write}}
	if x := rep.CorpusIndex; x != nil {
		group = append(group, atomicfile.File{Path: idxPath, Perm: 0o600, Fill: x.Write})
		res.CorpusIndex, res.CorpusIndexFixes, res.CorpusIndexPersons = idxPath, x.Fixes, len(x.Persons)
	}
	if c.plt != "" {
		img, err := cli.RenderToBytes(c.plt, func(tmp string) error { return cli.PlotFit(tmp, rep, p) })
		if err != nil {
			return fmt.Errorf("fit: --plot %s: %w; nothing written", c.plt, err)
		}
		group = append(group, atomicfile.File{Path: c.plt, Perm: 0o644, Fill: func(w io.Writer) error {
			_, err := w.Write(img)
			return err
		}})
	}
	if err := atomicfile.WriteGroup(group); err != nil {
		return fmt.Errorf("fit: nothing written: %w", err)
	}
	return nil
}
