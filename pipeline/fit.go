package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// FitOptions configures a prior fit over a corpus. Zero fields take
// prior.Options' defaults.
type FitOptions struct {
	// Input is the corpus's file pattern (see Match) and Output the prior
	// file to write (JSON, as gp.Prior.Write); Force replaces an existing
	// Output.
	Input, Output string
	Force         bool
	// Report, if set, is a file to write the fit's report to (JSON,
	// prior.Report without the per-window fits), with the prior.
	Report string
	// Family, Kernel, MinDuration, MaxDuration, MaxPoints, MinPoints and
	// PaperWindows are prior.Options'.
	Family                   [2]float64
	Kernel                   string
	MinDuration, MaxDuration time.Duration
	MaxPoints, MinPoints     int
	PaperWindows             bool
	// Reading says how files are read; with Strict a file that cannot be
	// read stops the fit instead of being skipped.
	Reading
}

// Options returns the prior.Options the fit uses; the prior names its
// corpus by the input pattern.
func (o FitOptions) Options() prior.Options {
	// A corpus on Beam fits every window (MaxWindows -1): the single
	// machine's evenly spread subsample of 240 would need a global step
	// before fitting ("tracepriv fit --max-windows -1" is the same fit).
	return prior.Options{Kernel: o.Kernel, MinDuration: o.MinDuration, MaxDuration: o.MaxDuration,
		MaxPoints: o.MaxPoints, MinPoints: o.MinPoints, PaperWindows: o.PaperWindows, Family: o.Family, Corpus: o.Input, MaxWindows: -1}
}

// windowTask is one window to fit, with the span of its trace it covers:
// enough to fit it anywhere.
type windowTask struct {
	// File and Trace (index in the file) say where the window comes from;
	// Offset is the index in the trace of Points[0].
	File   string
	Trace  int
	UID    string
	Name   string
	Offset int
	Points []trace.Point
	// Window's indices are into Points.
	Window prior.Window
}

// windowOutcome is a fitted (or skipped) window and where it came from.
type windowOutcome struct {
	File   string
	Trace  int
	Result prior.WindowResult
}

// fileSummary is what cutting one file's traces into windows counted, or
// why it could not be read.
type fileSummary struct {
	File   string
	Report prior.Report
	Err    string
}

func init() {

	register.DoFn5x1[context.Context, string, func(windowTask), func(fileSummary), func(prior.Positions), error](&windowFn{})
	register.Emitter1[windowTask]()
	register.Emitter1[fileSummary]()
	register.Emitter1[prior.Positions]()
	register.Combiner1[prior.Positions](&positionsFn{})
	register.DoFn2x1[windowTask, func(windowOutcome), error](&fitFn{})
	register.Emitter1[windowOutcome]()
	register.DoFn4x1[[]byte, func(*windowOutcome) bool, func(*fileSummary) bool, func(*prior.Positions) bool, error](&chooseFn{})
	register.Iter1[windowOutcome]()
	register.Iter1[fileSummary]()
	register.Iter1[prior.Positions]()
}

// windowFn reads a file and cuts each of its traces into windows
// (prior.Windows), counting its positions for the corpus's centre. A file
// that cannot be read is skipped and counted, as the single-machine
// command skips it, unless reading is strict.
type windowFn struct {
	Cfg FitOptions
	opt prior.Options
	ro  trace.ReadOptions

	unreadable beam.Counter
}

func (f *windowFn) Setup() error {
	f.opt = f.Cfg.Options()
	f.unreadable = beam.NewCounter(metricsNamespace, "unreadable_files")
	var err error
	if f.ro, err = f.Cfg.Reading.options(); err != nil {
		return stageError("%v", err)
	}
	return nil
}

func (f *windowFn) ProcessElement(ctx context.Context, path string, emit func(windowTask), summary func(fileSummary), positions func(prior.Positions)) error {
	traces, _, err := trace.ReadFile(path, f.ro)
	if err != nil && f.ro.Strict {
		return stageError("%s: %v", path, err)
	}
	if err != nil {
		// The step's context carries its counters; another drops them.
		f.unreadable.Inc(ctx, 1)
		log.Warnf(ctx, "skipped unreadable file %s: %v", path, err)
		summary(fileSummary{File: path, Err: err.Error()})
		return nil
	}
	s := fileSummary{File: path, Report: prior.Report{Skipped: map[string]int{}}}
	var pos prior.Positions
	for k, t := range traces {
		ws, rep, err := prior.Windows([]*trace.Trace{t}, f.opt)
		if err != nil {
			return stageError("%s: %v", path, err)
		}
		s.Report.Merge(rep)
		pos.Add(t)
		for _, w := range ws {
			first, last := w.Index[0], w.Index[len(w.Index)-1]
			w.Index = slices.Clone(w.Index)
			for i := range w.Index {
				w.Index[i] -= first
			}
			emit(windowTask{File: path, Trace: k, UID: t.UID, Name: t.Name, Offset: first,
				Points: t.Points[first : last+1], Window: w})
		}
	}
	summary(s)
	positions(pos)
	return nil
}

// positionsFn adds up the corpus's position counts (prior.Positions), a
// combiner a runner can apply on each worker before the final merge.
type positionsFn struct{}

func (positionsFn) CreateAccumulator() prior.Positions { return prior.Positions{} }

func (positionsFn) AddInput(a, p prior.Positions) prior.Positions {
	a.Merge(p)
	return a
}

func (positionsFn) MergeAccumulators(a, b prior.Positions) prior.Positions {
	a.Merge(b)
	return a
}

func (positionsFn) ExtractOutput(a prior.Positions) prior.Positions { return a }

// fitFn fits one window (prior.FitWindow): the expensive step, one
// likelihood optimisation per coordinate, spread over the workers.
type fitFn struct {
	Cfg FitOptions
	opt prior.Options
}

func (f *fitFn) Setup() { f.opt = f.Cfg.Options() }

func (f *fitFn) ProcessElement(t windowTask, emit func(windowOutcome)) error {
	tr := &trace.Trace{UID: t.UID, Name: t.Name, Points: t.Points}
	res, err := prior.FitWindow(t.Window, tr, f.opt)
	if err != nil {
		return stageError("%v", err)
	}
	// Back to indices into the whole trace.
	res.Fit.First += t.Offset
	res.Fit.Last += t.Offset
	emit(windowOutcome{File: t.File, Trace: t.Trace, Result: res})
	return nil
}

// chooseFn puts the fits in corpus order (files sorted, traces in file
// order, windows in time order), numbers the traces as prior.Fit numbers
// them, chooses the prior (prior.Combine) and writes it. It runs once,
// over per-window summaries.
type chooseFn struct {
	Cfg FitOptions
}

func (f *chooseFn) ProcessElement(_ []byte, outcomes func(*windowOutcome) bool, summaries func(*fileSummary) bool, positions func(*prior.Positions) bool) error {
	var sums []fileSummary
	var s fileSummary
	for summaries(&s) {
		sums = append(sums, s)
		s = fileSummary{}
	}
	slices.SortFunc(sums, func(a, b fileSummary) int { return strings.Compare(a.File, b.File) })
	offset := map[string]int{}
	rep := &prior.Report{Skipped: map[string]int{}}
	for _, s := range sums {
		offset[s.File] = rep.Traces
		if s.Err == "" {
			rep.Merge(&s.Report)
		}
	}
	var outs []windowOutcome
	var o windowOutcome
	for outcomes(&o) {
		outs = append(outs, o)
		o = windowOutcome{}
	}
	slices.SortFunc(outs, func(a, b windowOutcome) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Trace != b.Trace {
			return a.Trace - b.Trace
		}
		return a.Result.Fit.First - b.Result.Fit.First
	})
	results := make([]prior.WindowResult, len(outs))
	for i, o := range outs {
		results[i] = o.Result
		results[i].Fit.Trace = offset[o.File] + o.Trace
	}
	var pos prior.Positions
	var p prior.Positions
	for positions(&p) {
		pos.Merge(p)
		p = prior.Positions{}
	}
	opt := f.Cfg.Options()
	pr, rep, err := prior.CombineCorpus(results, rep, pos, opt)
	if err != nil {
		return stageError("%v", err)
	}
	files := []atomicfile.File{{Path: f.Cfg.Output, Perm: 0o644, Fill: pr.Write}}
	if f.Cfg.Report != "" {
		summary := *rep
		summary.Fits = nil
		files = append(files, atomicfile.File{Path: f.Cfg.Report, Perm: 0o644, Fill: func(w io.Writer) error { return jsondoc.Write(w, summary) }})
	}
	// The prior and its report land together or not at all.
	if err := atomicfile.WriteGroup(files); err != nil {
		return stageError("%v", err)
	}
	return nil
}

// buildFit adds a prior fit to the pipeline rooted at s: match files, read
// and window them (many workers), fit each window (many), and choose and
// write the prior (one worker, over the fits).
func buildFit(s beam.Scope, o FitOptions) {
	s = s.Scope("tracepriv.fit")
	files, _ := beam.ParDo2(s, &matchFn{}, beam.Create(s, o.Input))
	tasks, sums, pos := beam.ParDo3(s, &windowFn{Cfg: o}, beam.Reshuffle(s, files))
	centre := beam.Combine(s, &positionsFn{}, pos)
	// Windows are many and alike: spread them over the workers.
	outs := beam.ParDo(s, &fitFn{Cfg: o}, beam.Reshuffle(s, tasks))
	beam.ParDo0(s, &chooseFn{Cfg: o}, beam.Impulse(s),
		beam.SideInput{Input: outs}, beam.SideInput{Input: sums}, beam.SideInput{Input: centre})
}

// FitResult is what a prior fit did.
type FitResult struct {
	// Prior is the prior the pipeline wrote, and Report the fit's report
	// when FitOptions.Report was set.
	Prior  *gp.Prior
	Report *prior.Report
	// Unreadable counts the files skipped because they could not be read.
	Unreadable int64
}

// Fit fits a prior family over a corpus with a Beam pipeline and writes
// it: the prior prior.Fit gives over the matched files' traces (files
// sorted, unreadable ones skipped), with the corpus named by the pattern.
func Fit(ctx context.Context, o FitOptions) (*FitResult, error) {
	initBeam()
	if err := o.Options().Check(); err != nil {
		return nil, err
	}
	if _, err := o.Reading.options(); err != nil {
		return nil, err
	}
	if o.Output == "" {
		return nil, fmt.Errorf("no output file")
	}
	out, err := filepath.Abs(o.Output)
	if err != nil {
		return nil, err
	}
	o.Output = out
	if o.Report != "" {
		if o.Report, err = filepath.Abs(o.Report); err != nil {
			return nil, err
		}
		if o.Report == out {
			return nil, fmt.Errorf("the report and the prior are both %s", out)
		}
	}
	for _, f := range []string{out, o.Report} {
		if st, err := os.Stat(f); f != "" && err == nil && (st.IsDir() || !o.Force) {
			return nil, fmt.Errorf("output %s exists; give another file, or force replacing it", f)
		}
	}
	res, b, err := runAndRead(ctx, func(s beam.Scope) { buildFit(s, o) }, out)
	if err != nil {
		return nil, err
	}
	pr, err := gp.ReadPrior(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	r := &FitResult{Prior: pr, Unreadable: counter(res, "unreadable_files")}
	if o.Report != "" {
		b, err := os.ReadFile(o.Report)
		if err != nil {
			return nil, fmt.Errorf("the pipeline finished but its report cannot be read here: %w", err)
		}
		r.Report = &prior.Report{}
		if err := json.Unmarshal(b, r.Report); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	return r, nil
}
