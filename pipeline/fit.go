package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// FitParams configures a prior fit (FitPrior, Fit). Kernel or
// PaperWindows set select the paper's single-kernel fit
// (prior.PaperOptions, as tracepriv fit --kernel); otherwise kernels are
// compared (prior.Options). Zero fields take the mode's defaults.
type FitParams struct {
	// Family, MinDuration, MaxDuration, MaxPoints and MinPoints are both
	// modes'; Kernel and PaperWindows are prior.PaperOptions'.
	Family                   [2]float64
	Kernel                   string
	MinDuration, MaxDuration time.Duration
	MaxPoints, MinPoints     int
	PaperWindows             bool
	// Corpus names the fitting corpus in the prior (prior.FitRecord.Corpus;
	// a path of the machine in it is published relative to the working
	// directory or by its base name, never absolute); Fit names it by its
	// input pattern from the root's folder (CorpusName) when it is "".
	Corpus string
}

// Mode returns the fit's mode with its options: prior.PaperOptions when
// Kernel or PaperWindows is set, prior.Options otherwise.
func (p FitParams) Mode() prior.Mode {
	// A corpus on Beam fits every window (MaxWindows -1): the single
	// machine's evenly spread subsample of 240 would need a global step
	// before fitting ("tracepriv fit --max-windows -1" is the same fit).
	o := prior.Options{MinDuration: p.MinDuration, MaxDuration: p.MaxDuration,
		MaxPoints: p.MaxPoints, MinPoints: p.MinPoints, Family: p.Family, Corpus: p.Corpus, MaxWindows: -1}
	if p.Kernel != "" || p.PaperWindows {
		return o.Paper(p.Kernel, p.PaperWindows)
	}
	return o
}

// FitOptions configures Fit, a prior fit over a corpus of files.
type FitOptions struct {
	// Input is the corpus's file pattern (see Match) and Output the prior
	// file to write (JSON, as prior.Prior.Write); Force replaces an existing
	// Output.
	Input, Output string
	Force         bool
	// Report, if set, is a file to write the fit's report to (JSON,
	// prior.Report without the per-window fits), with the prior.
	Report string
	// FitParams are the fit's parameters.
	FitParams
	// Reading says how files are read; with Strict a file that cannot be
	// read stops the fit instead of being skipped.
	Reading
	// Logger, if set, is told what the launcher does; nil means nothing
	// is logged. It stays in this process.
	Logger *slog.Logger `json:"-"`
}

// Params returns the fit's parameters with the corpus named: by the input
// pattern (CorpusName) unless FitParams.Corpus names it.
func (o FitOptions) Params() FitParams {
	p := o.FitParams
	if p.Corpus == "" {
		p.Corpus = CorpusName(o.Input)
	}
	return p
}

// CorpusName is the name a published prior gives the corpus of the input
// pattern: the pattern from its root's folder (GlobRoot), as
// "Data/*/Trajectory/*.plt" for "/home/me/geolife/Data/*/Trajectory/*.plt",
// so that it says what was fitted but not where on the machine it lay.
func CorpusName(pattern string) string {
	root, err := GlobRoot(pattern)
	if err != nil {
		return filepath.Base(pattern)
	}
	abs, err := filepath.Abs(pattern)
	if err != nil {
		return filepath.Base(pattern)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return filepath.Base(pattern)
	}
	if base := filepath.Base(root); base != string(filepath.Separator) && base != "." {
		rel = filepath.Join(base, rel)
	}
	return filepath.ToSlash(rel)
}

// fitConfig is what the steps of a fit carry to the workers.
type fitConfig struct {
	// FitParams has its Corpus resolved.
	FitParams
	Reading
	// Output and Report are the files the last step writes; none for
	// FitPrior.
	Output, Report string
}

// windowTask is one window to fit, with the span of its trace it covers:
// enough to fit it anywhere.
type windowTask struct {
	// Key and Trace (index under the key) say where the window comes
	// from, and order the fits: the file and the trace's index in it, or
	// for FitPrior the trace's own key (traceKey) and 0. Offset is the
	// index in the trace of Points[0].
	Key    string
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
	Key    string
	Trace  int
	Result prior.WindowResult
}

// fileSummary is what cutting the traces under one key into windows
// counted.
type fileSummary struct {
	Key    string
	Report prior.Report
}

// Fitted is the prior family FitPrior fitted, and the fit's report (with
// its per-window fits).
type Fitted struct {
	Prior  *prior.Prior
	Report *prior.Report
}

func init() {
	register.DoFn6x1[context.Context, string, func(windowTask), func(fileSummary), func(prior.Positions), func(trace.FilePersons), error](&windowFn{})
	register.DoFn4x1[trace.Trace, func(windowTask), func(fileSummary), func(prior.Positions), error](&traceWindowFn{})
	register.Emitter1[windowTask]()
	register.Emitter1[fileSummary]()
	register.Emitter1[prior.Positions]()
	register.Combiner1[prior.Positions](&positionsFn{})
	register.DoFn2x1[windowTask, func(windowOutcome), error](&fitFn{})
	register.Emitter1[windowOutcome]()
	register.DoFn6x1[[]byte, func(*windowOutcome) bool, func(*fileSummary) bool, func(*prior.Positions) bool, personJoin, func(Fitted), error](&chooseFn{})
	register.Iter1[windowOutcome]()
	register.Iter1[fileSummary]()
	register.Iter1[prior.Positions]()
	register.Emitter1[Fitted]()
}

// cutWindows cuts each trace of traces, under key, into windows
// (prior.Windows) and emits them, the count, and the traces' positions for
// the corpus's centre.
func cutWindows(key string, traces []*trace.Trace, opt prior.Mode, emit func(windowTask), summary func(fileSummary), positions func(prior.Positions)) error {
	s := fileSummary{Key: key, Report: prior.Report{Skipped: map[string]int{}}}
	var pos prior.Positions
	for k, t := range traces {
		ws, rep, err := prior.Windows([]*trace.Trace{t}, opt)
		if err != nil {
			return err
		}
		s.Report.Merge(rep)
		pos.Add(t)
		for _, w := range ws {
			first, last := w.Index[0], w.Index[len(w.Index)-1]
			w.Index = slices.Clone(w.Index)
			for i := range w.Index {
				w.Index[i] -= first
			}
			emit(windowTask{Key: key, Trace: k, UID: t.UID, Name: t.Name, Offset: first,
				Points: t.Points[first : last+1], Window: w})
		}
	}
	summary(s)
	positions(pos)
	return nil
}

// windowFn reads a file and cuts its traces into windows, keyed by the
// file (cutWindows), and emits the file's persons for the join
// (joinPersons). A file that cannot be read is skipped and counted, as
// the single-machine command skips it, unless reading is strict.
type windowFn struct {
	Cfg fitConfig
	opt prior.Mode
	ro  trace.ReadOptions

	unreadable, skippedRows beam.Counter
}

func (f *windowFn) Setup() error {
	f.opt = f.Cfg.FitParams.Mode()
	f.unreadable = beam.NewCounter(metricsNamespace, "unreadable_files")
	f.skippedRows = beam.NewCounter(metricsNamespace, "skipped_rows")
	var err error
	if f.ro, err = f.Cfg.Reading.options(); err != nil {
		return stageError("%v", err)
	}
	return nil
}

func (f *windowFn) ProcessElement(ctx context.Context, path string, emit func(windowTask), summary func(fileSummary), positions func(prior.Positions), persons func(trace.FilePersons)) error {
	// The step's context carries its counters; another drops them.
	traces, merged, ok, err := readFile(ctx, path, f.ro, f.unreadable, f.skippedRows)
	if !ok {
		return err
	}
	persons(trace.NewFilePersons(path, traces, merged))
	if err := cutWindows(path, traces, f.opt, emit, summary, positions); err != nil {
		return stageError("%s: %v", path, err)
	}
	return nil
}

// traceWindowFn cuts a trace into windows under its own key (traceKey).
type traceWindowFn struct {
	Cfg fitConfig
	opt prior.Mode
}

func (f *traceWindowFn) Setup() { f.opt = f.Cfg.FitParams.Mode() }

func (f *traceWindowFn) ProcessElement(t trace.Trace, emit func(windowTask), summary func(fileSummary), positions func(prior.Positions)) error {
	if err := cutWindows(traceKey(&t), []*trace.Trace{&t}, f.opt, emit, summary, positions); err != nil {
		return stageError("trace %q of %q: %v", t.Name, t.UID, err)
	}
	return nil
}

// traceKey orders the traces FitPrior fits, as a file and its traces order
// Fit's: by uid, first time, name and length, then a hash of the points,
// so that the order does not depend on the runner's. Identical traces
// share a key (and a number in the report).
func traceKey(t *trace.Trace) string {
	h := sha256.New()
	var first int64
	for i, p := range t.Points {
		if i == 0 {
			first = p.Time.UnixNano()
		}
		fmt.Fprintf(h, "%d %x %x\n", p.Time.UnixNano(), math.Float64bits(p.Lat), math.Float64bits(p.Lon))
	}
	return fmt.Sprintf("%s\x00%020d\x00%s\x00%010d\x00%x", t.UID, first, t.Name, t.Len(), h.Sum(nil))
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
	Cfg fitConfig
	opt prior.Mode
}

func (f *fitFn) Setup() { f.opt = f.Cfg.FitParams.Mode() }

func (f *fitFn) ProcessElement(t windowTask, emit func(windowOutcome)) error {
	tr := &trace.Trace{UID: t.UID, Name: t.Name, Points: t.Points}
	res, err := prior.FitWindow(t.Window, tr, f.opt)
	if err != nil {
		return stageError("%v", err)
	}
	// Back to indices into the whole trace.
	res.Fit.First += t.Offset
	res.Fit.Last += t.Offset
	emit(windowOutcome{Key: t.Key, Trace: t.Trace, Result: res})
	return nil
}

// chooseFn puts the fits in corpus order (keys sorted, traces in their
// order under a key, windows in time order), numbers the traces as
// prior.Fit numbers them, gives each window and the corpus index the
// person the join releases them as (the leave-one-person-out coverage and
// the index are per person), chooses the prior (prior.CombineCorpus) and
// emits it; with an output file, it writes it, and the report. It runs
// once, over per-window summaries.
type chooseFn struct {
	Cfg fitConfig
}

func (f *chooseFn) ProcessElement(_ []byte, outcomes func(*windowOutcome) bool, summaries func(*fileSummary) bool, positions func(*prior.Positions) bool, join personJoin, emit func(Fitted)) error {
	var sums []fileSummary
	var s fileSummary
	for summaries(&s) {
		sums = append(sums, s)
		s = fileSummary{}
	}
	slices.SortFunc(sums, func(a, b fileSummary) int { return strings.Compare(a.Key, b.Key) })
	offset := map[string]int{}
	rep := &prior.Report{Skipped: map[string]int{}}
	for _, s := range sums {
		offset[s.Key] = rep.Traces
		rep.Merge(&s.Report)
	}
	var outs []windowOutcome
	var o windowOutcome
	for outcomes(&o) {
		outs = append(outs, o)
		o = windowOutcome{}
	}
	slices.SortFunc(outs, func(a, b windowOutcome) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
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
		results[i].Fit.Trace = offset[o.Key] + o.Trace
		results[i].Fit.UID = join.of(o.Result.Fit.UID)
	}
	var pos prior.Positions
	var p prior.Positions
	for positions(&p) {
		pos.Merge(p)
		p = prior.Positions{}
	}
	for from, to := range join.Alias {
		if pos.UIDs[from] {
			delete(pos.UIDs, from)
			pos.UIDs[to] = true
		}
	}
	pr, rep, err := prior.CombineCorpus(results, rep, pos, f.Cfg.FitParams.Mode())
	if err != nil {
		return stageError("%v", err)
	}
	if f.Cfg.Output != "" {
		files := []atomicfile.File{{Path: f.Cfg.Output, Perm: 0o644, Fill: pr.Write}}
		if x := rep.CorpusIndex; x != nil {
			// The private corpus index beside the prior, as tracepriv fit.
			files = append(files, atomicfile.File{Path: prior.CorpusIndexPath(f.Cfg.Output), Perm: 0o600, Fill: x.Write})
		}
		if f.Cfg.Report != "" {
			summary := *rep
			summary.Fits = nil
			files = append(files, atomicfile.File{Path: f.Cfg.Report, Perm: 0o644, Fill: func(w io.Writer) error { return jsondoc.Write(w, summary) }})
		}
		// The prior, its index and its report land together or not at all.
		if err := atomicfile.WriteGroup(files); err != nil {
			return stageError("%v", err)
		}
	}
	emit(Fitted{Prior: pr, Report: rep})
	return nil
}

// fitWindows fits a prior over windows already cut (cutWindows): fit each
// window (many workers, after a reshuffle: the expensive step), add up
// the positions for the centre (a combiner), and choose the prior (one
// worker, over the fits, with the persons renamed by join, a
// PCollection<personJoin> of one element). It returns a
// PCollection<Fitted> of one element.
func fitWindows(s beam.Scope, tasks, sums, pos, join beam.PCollection, c fitConfig) beam.PCollection {
	centre := beam.Combine(s, &positionsFn{}, pos)
	// Windows are many and alike: spread them over the workers.
	outs := beam.ParDo(s, &fitFn{Cfg: c}, beam.Reshuffle(s, tasks))
	return beam.ParDo(s, &chooseFn{Cfg: c}, beam.Impulse(s),
		beam.SideInput{Input: outs}, beam.SideInput{Input: sums}, beam.SideInput{Input: centre}, beam.SideInput{Input: join})
}

// FitPrior fits a prior family over traces, a PCollection<trace.Trace> of
// other people's traces than those the prior will protect, as prior.Fit
// fits it over the same traces (every window: MaxWindows -1), and returns
// a PCollection<Fitted> of one element. Its persons are the traces' uids
// as they come (ReadTraces joins a corpus's persons). The traces are cut into windows
// and fitted on many workers, in an order of their own (by uid, first
// time and name), so that the prior and its report do not depend on the
// runner's. FitPrior panics if p is invalid, as Beam's own transforms
// panic on a bad argument: check p.Mode().Check() first.
func FitPrior(s beam.Scope, traces beam.PCollection, p FitParams) beam.PCollection {
	s = s.Scope("tracepriv.FitPrior")
	if err := p.Mode().Check(); err != nil {
		panic(fmt.Sprintf("pipeline.FitPrior: %v", err))
	}
	c := fitConfig{FitParams: p}
	tasks, sums, pos := beam.ParDo3(s, &traceWindowFn{Cfg: c}, beam.Reshuffle(s, traces))
	return fitWindows(s, tasks, sums, pos, beam.Create(s, personJoin{}), c)
}

// FitResult is what a prior fit did.
type FitResult struct {
	// Prior is the prior the pipeline wrote, and Report the fit's report
	// when FitOptions.Report was set.
	Prior  *prior.Prior
	Report *prior.Report
	// Unreadable counts the files skipped because they could not be read.
	Unreadable int64
	// Output and ReportFile are where the prior and the report were
	// written (FitOptions.Output and Report).
	Output, ReportFile string
}

// Fit fits a prior family over a corpus of files with a Beam pipeline and
// writes it: the prior prior.Fit gives over the matched files' traces
// (files sorted, traces in their order, unreadable files skipped), with
// the corpus named by the pattern. Its persons are the person rule's
// over the pattern's root, a corpus's persons holding the same uid joined
// (trace.JoinPersons, a global step) as tracepriv fit --corpus joins
// them. It runs FitPrior's steps with the windows keyed by file, so that
// the traces are numbered as prior.Fit numbers them.
func Fit(ctx context.Context, o FitOptions) (*FitResult, error) {
	initBeam()
	log := logger(o.Logger)
	start := time.Now()
	if err := o.Params().Mode().Check(); err != nil {
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
	c := fitConfig{FitParams: o.FitParams, Reading: o.Reading, Output: out}
	// The person rule names persons from the pattern's root.
	root, err := GlobRoot(o.Input)
	if err != nil {
		return nil, err
	}
	if c.InputRoot, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	c.Corpus = o.Params().Corpus
	if o.Report != "" {
		if c.Report, err = filepath.Abs(o.Report); err != nil {
			return nil, err
		}
		if c.Report == out {
			return nil, fmt.Errorf("the report and the prior are both %s", out)
		}
	}
	for _, f := range []string{out, c.Report} {
		if st, err := os.Stat(f); f != "" && err == nil && (st.IsDir() || !o.Force) {
			return nil, fmt.Errorf("output %s exists; give another file, or force replacing it", f)
		}
	}
	log.Info("tracepriv pipeline: fit: starting", "input", o.Input, "output", out, "report", c.Report)
	res, b, err := runAndRead(ctx, func(s beam.Scope) {
		s = s.Scope("tracepriv.fit")
		files, _ := beam.ParDo2(s, &matchFn{}, beam.Create(s, o.Input))
		tasks, sums, pos, persons := beam.ParDo4(s, &windowFn{Cfg: c}, beam.Reshuffle(s, files))
		fitWindows(s, tasks, sums, pos, joinPersons(s, persons, c.AsCorpus), c)
	}, out)
	if err != nil {
		log.Error("tracepriv pipeline: fit: failed", "error", err)
		return nil, err
	}
	pr, err := prior.Read(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	r := &FitResult{Prior: pr, Unreadable: counter(res, "unreadable_files"), Output: o.Output, ReportFile: o.Report}
	if c.Report != "" {
		b, err := os.ReadFile(c.Report)
		if err != nil {
			return nil, fmt.Errorf("the pipeline finished but its report cannot be read here: %w", err)
		}
		r.Report = &prior.Report{}
		if err := json.Unmarshal(b, r.Report); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	log.Info("tracepriv pipeline: fit: done", "windows", pr.Fit.Windows, "kernel", pr.Kernel, "unreadable_files", r.Unreadable, "seconds", time.Since(start).Seconds())
	if r.Unreadable > 0 {
		log.Warn("tracepriv pipeline: fit: unreadable files skipped", "files", r.Unreadable)
	}
	return r, nil
}
