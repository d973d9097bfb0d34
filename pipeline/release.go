package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

// The files of a released trajectory database, as `tracepriv synthesize`
// writes them.
const (
	SynthesisSeqFile  = trajdb.SeqFile
	SynthesisCSVFile  = trajdb.CSVFile
	SynthesisCertFile = trajdb.CertificateFile
)

// SynthesizeOptions configures the release of a trajectory database. Every
// field is public configuration: the grid, the bounds, the mapping rule and
// the mechanism must not be chosen from the data.
type SynthesizeOptions struct {
	// Input is the trace file pattern (see Match) and Output the directory
	// that receives SynthesisSeqFile, SynthesisCSVFile and SynthesisCertFile.
	// Force replaces an earlier release there.
	Input, Output string
	Force         bool
	// Mechanism is trajdb.MechanismPrefix or trajdb.MechanismNGram; NMax
	// is the n-gram tree's height (0 means trajdb.DefaultNMax).
	Mechanism trajdb.MechanismName
	NMax      int
	// Epsilon is each person's budget, spent once.
	Epsilon float64
	// CellM and BBox, a public box (never taken from the data; see
	// trace.ParseBBox for the flag's form), define the grid.
	CellM float64
	BBox  trace.BBox
	// MaxLen and MaxSeqs bound each person's contribution (0 means those
	// of trajdb.DefaultBounds, the single-machine command's defaults).
	MaxLen, MaxSeqs int
	// MaxGap and MinLen are trajdb.MapOptions' (0 means its defaults).
	MaxGap time.Duration
	MinLen int
	// Seeded makes the noise reproducible (and not private): it is drawn
	// once, on one worker, from noise.Seeded(Seed). Otherwise from
	// crypto/rand.
	Seeded bool
	Seed   uint64
	// Reading says how files are read.
	Reading
	// Logger, if set, is told what the launcher does; nil means nothing
	// is logged. It stays in this process.
	Logger *slog.Logger `json:"-"`
}

// releaseConfig is SynthesizeOptions resolved by the launcher; it travels in
// the DoFns, so it holds only serialisable values.
type releaseConfig struct {
	SynthesizeOptions
	Root, Out string
}

func (o *SynthesizeOptions) withDefaults() {
	def := trajdb.DefaultBounds()
	if o.MaxLen == 0 {
		o.MaxLen = def.MaxLen
	}
	if o.MaxSeqs == 0 {
		o.MaxSeqs = def.MaxSeqs
	}
	if o.MaxGap == 0 {
		o.MaxGap = trajdb.DefaultMaxGap
	}
	if o.MinLen == 0 {
		o.MinLen = 1
	}
}

func (c *releaseConfig) grid() (*trajdb.Grid, error) {
	return trajdb.NewGrid(c.BBox, c.CellM)
}

func (c *releaseConfig) bounds() trajdb.Bounds {
	return trajdb.Bounds{MaxLen: c.MaxLen, MaxSeqs: c.MaxSeqs}
}

func (c *releaseConfig) mechanism() (trajdb.Mechanism, error) {
	return trajdb.NewMechanism(c.Mechanism, c.bounds(), c.NMax)
}

// nmax is the n-gram tree's height as trajdb.NGram computes it.
func (c *releaseConfig) nmax() int {
	n := c.NMax
	if n == 0 {
		n = trajdb.DefaultNMax
	}
	return min(n, c.MaxLen)
}

// personPart is one person's trajectories mapped from one file, in the
// file's order.
type personPart struct {
	File string
	Seqs [][]int
}

func encPart(v personPart) ([]byte, error) { return gobEncode(v) }
func decPart(b []byte) (personPart, error) { return gobDecode[personPart](b) }

func init() {
	beam.RegisterCoder(reflect.TypeFor[personPart](), encPart, decPart)
	register.DoFn5x1[context.Context, string, func(string, personPart), func(int), func(trace.FilePersons), error](&mapFn{})
	register.DoFn4x0[string, personPart, personJoin, func(string, personPart)](&rekeyPartFn{})
	register.Emitter2[string, personPart]()
	register.DoFn4x1[context.Context, string, func(*personPart) bool, func(string, int64), error](&boundFn{})
	register.Iter1[personPart]()
	register.Emitter2[string, int64]()
	register.DoFn3x1[[]byte, func(*string, *int64) bool, func(*int) bool, error](&noiseFn{})
	register.Iter2[string, int64]()
}

// mapFn reads one file and maps its traces onto the grid
// (trajdb.FromTraces), emitting each person's trajectories keyed by uid,
// the number of traces read, and the file's persons for the join
// (joinPersons). A file that cannot be read is skipped
// and counted, as trajdb.FromFiles skips it, unless reading is strict.
type mapFn struct {
	Cfg releaseConfig
	g   *trajdb.Grid
	ro  trace.ReadOptions
	mo  trajdb.MapOptions

	unreadable, traces, fixes, trajectories, symbols, repeats, outside, gaps, short, shortSymbols, skippedRows beam.Counter
}

func (f *mapFn) Setup() error {
	var err error
	if f.g, err = f.Cfg.grid(); err != nil {
		return stageError("%v", err)
	}
	if f.ro, err = f.Cfg.Reading.options(); err != nil {
		return stageError("%v", err)
	}
	f.mo = trajdb.MapOptions{MaxGap: f.Cfg.MaxGap, MinLen: f.Cfg.MinLen}
	c := func(name string) beam.Counter { return beam.NewCounter(metricsNamespace, name) }
	f.unreadable, f.traces, f.fixes = c("unreadable_files"), c("traces"), c("fixes")
	f.trajectories, f.symbols, f.repeats = c("trajectories"), c("symbols"), c("fixes_repeated")
	f.outside, f.gaps, f.short, f.shortSymbols = c("fixes_outside"), c("gap_splits"), c("trajectories_short"), c("short_symbols")
	f.skippedRows = c("skipped_rows")
	return nil
}

func (f *mapFn) ProcessElement(ctx context.Context, path string, emit func(string, personPart), traces func(int), persons func(trace.FilePersons)) error {
	ts, merged, ok, err := readFile(ctx, path, f.ro, f.unreadable, f.skippedRows)
	if !ok {
		return err
	}
	persons(trace.NewFilePersons(path, ts, merged))
	for _, t := range ts {
		if t.UID == "" {
			return stageError("%s: trace %q has no uid and its directory names no person (put each person's files in a directory named after them)", path, t.Name)
		}
	}
	db, mr, err := trajdb.FromTraces(f.g, ts, f.mo)
	if err != nil {
		return stageError("%s: %v", path, err)
	}
	for _, u := range db.Users {
		emit(u.ID, personPart{File: path, Seqs: u.Seqs})
	}
	traces(mr.Traces)
	for _, c := range []struct {
		c beam.Counter
		n int
	}{{f.traces, mr.Traces}, {f.fixes, mr.Fixes}, {f.trajectories, mr.Trajectories}, {f.symbols, mr.Symbols},
		{f.repeats, mr.Repeats}, {f.outside, mr.Outside}, {f.gaps, mr.GapSplits}, {f.short, mr.Short}, {f.shortSymbols, mr.ShortSymbols}} {
		c.c.Inc(ctx, int64(c.n))
	}
	return nil
}

// rekeyPartFn keys a person's part by the person the join releases them
// as, so that a person split over two folders is bounded once.
type rekeyPartFn struct{}

func (rekeyPartFn) ProcessElement(uid string, p personPart, j personJoin, emit func(string, personPart)) {
	emit(j.of(uid), p)
}

// boundFn bounds one person's contribution (trajdb.Bound: their first
// MaxSeqs trajectories, in the order trajdb.FromFiles reads them, each cut
// to MaxLen cells) before anything is counted, and emits the person's
// counts of the mechanism's tree nodes (nodeCounts), summed over persons
// by the next step.
type boundFn struct {
	Cfg  releaseConfig
	size int
	mech trajdb.CountingMechanism

	persons, kept, dropped, cut beam.Counter
}

func (f *boundFn) Setup() error {
	g, err := f.Cfg.grid()
	if err != nil {
		return stageError("%v", err)
	}
	f.size = g.Size()
	m, err := f.Cfg.mechanism()
	if err != nil {
		return stageError("%v", err)
	}
	cm, ok := m.(trajdb.CountingMechanism)
	if !ok {
		return stageError("mechanism %q cannot release from counts", m.Name())
	}
	f.mech = cm
	f.persons = beam.NewCounter(metricsNamespace, "persons")
	f.kept = beam.NewCounter(metricsNamespace, "trajectories_bounded")
	f.dropped = beam.NewCounter(metricsNamespace, "trajectories_over_max_seqs")
	f.cut = beam.NewCounter(metricsNamespace, "symbols_over_max_len")
	return nil
}

func (f *boundFn) ProcessElement(ctx context.Context, uid string, parts func(*personPart) bool, emit func(string, int64)) error {
	var all []personPart
	var p personPart
	for parts(&p) {
		all = append(all, p)
		p = personPart{}
	}
	// Files in the order trace.Files lists them; a person's trajectories
	// within a file are already in its order.
	slices.SortFunc(all, func(a, b personPart) int { return strings.Compare(a.File, b.File) })
	u := trajdb.User{ID: uid}
	symbols := 0
	for _, p := range all {
		u.Seqs = append(u.Seqs, p.Seqs...)
		for _, s := range p.Seqs {
			symbols += len(s)
		}
	}
	b, err := trajdb.Bound(&trajdb.DB{Size: f.size, Users: []trajdb.User{u}}, f.Cfg.bounds())
	if err != nil {
		return stageError("%v", err)
	}
	seqs := b.Users[0].Seqs
	f.persons.Inc(ctx, 1)
	f.kept.Inc(ctx, int64(len(seqs)))
	f.dropped.Inc(ctx, int64(len(u.Seqs)-len(seqs)))
	for _, s := range seqs {
		symbols -= len(s)
	}
	f.cut.Inc(ctx, int64(symbols))
	for k, n := range nodeCounts(f.mech, f.size, seqs) {
		emit(k, n)
	}
	return nil
}

// Node kinds: the first byte of a node key, followed by trajdb.Key of the
// node's symbols.
const (
	// kindPrefix is a node of the prefix tree: the sequences that begin
	// with its symbols.
	kindPrefix = 'P'
	// kindGram and kindEnd are the bins of the n-gram tree: occurrences
	// of a gram (of length up to n_max), and those that end their
	// sequence (length below n_max), the bin gram·&.
	kindGram = 'G'
	kindEnd  = 'E'
)

// nodeCounts returns the counts that bounded sequences seqs add to the
// nodes of m's tree over size symbols (trajdb's own Counts), keyed by kind
// and symbols, so that sums over persons are the database's counts.
func nodeCounts(m trajdb.CountingMechanism, size int, seqs [][]int) map[string]int64 {
	c := m.Counts(size, seqs)
	kind := byte(kindPrefix)
	if m.Name() == "ngram" {
		kind = kindGram
	}
	out := make(map[string]int64, len(c.Count)+len(c.End))
	for k, n := range c.Count {
		out[string(kind)+k] = n
	}
	for k, n := range c.End {
		out[string(kindEnd)+k] = n
	}
	return out
}

// noiseFn releases the database from the aggregated counts, once, on one
// worker (releaseCounts), and writes the three files together.
type noiseFn struct {
	Cfg releaseConfig
}

func (f *noiseFn) ProcessElement(_ []byte, counts func(*string, *int64) bool, traces func(*int) bool) error {
	n := 0
	var k int
	for traces(&k) {
		n += k
	}
	if n == 0 {
		return stageError("no traces could be read from the files matched")
	}
	c := map[string]int64{}
	var key string
	var v int64
	for counts(&key, &v) {
		c[key] = v
	}
	g, err := f.Cfg.grid()
	if err != nil {
		return stageError("%v", err)
	}
	m, err := f.Cfg.mechanism()
	if err != nil {
		return stageError("%v", err)
	}
	src := noise.Secure()
	if f.Cfg.Seeded {
		src = noise.Seeded(f.Cfg.Seed)
	}
	rel, err := releaseCounts(m, g.Size(), c, f.Cfg.Epsilon, src)
	if err != nil {
		return stageError("%v", err)
	}
	if _, err := trajdb.WriteSynthesis(f.Cfg.Out, newReleaseCert(&f.Cfg, g, m, rel, src), 0); err != nil {
		return stageError("%v", err)
	}
	return nil
}

// releaseCounts releases a database of size symbols with m from the
// counts of its tree's nodes (nodeCounts summed over bounded persons),
// with trajdb's SynthesizeCounts: the noise is drawn once per node, over the
// whole universe, on this one worker.
func releaseCounts(m trajdb.Mechanism, size int, counts map[string]int64, epsilon float64, src noise.Source) (*trajdb.Synthetic, error) {
	cm, ok := m.(trajdb.CountingMechanism)
	if !ok {
		return nil, fmt.Errorf("mechanism %q cannot release from counts", m.Name())
	}
	c := trajdb.NewTreeCounts(size)
	for k, n := range counts {
		switch k[0] {
		case kindPrefix, kindGram:
			c.Count[k[1:]] += n
		case kindEnd:
			c.End[k[1:]] += n
		default:
			return nil, fmt.Errorf("a count of unknown kind %q", k[0])
		}
	}
	return cm.SynthesizeCounts(c, epsilon, src)
}

// SynthesisCert is release.json, the certificate `tracepriv synthesize` writes.
type SynthesisCert = trajdb.Certificate

func newReleaseCert(c *releaseConfig, g *trajdb.Grid, m trajdb.Mechanism, rel *trajdb.Synthetic, src noise.Source) *SynthesisCert {
	return trajdb.NewCertificate(m, rel, c.Epsilon, g, g.Size(), trajdb.MapOptions{MaxGap: c.MaxGap, MinLen: c.MinLen}, src)
}

// aggregate adds the counting part of a release to the pipeline: match
// files, map them (many workers), join the persons found to be one (one
// worker, over uids only), bound each person (many), and sum the
// node counts per node (Beam's combiner, partial sums on every worker).
// It returns the counts, KV<string, int64> keyed as nodeCounts, and the
// traces read per file.
func aggregate(s beam.Scope, c releaseConfig) (counts, traces beam.PCollection) {
	files, _ := beam.ParDo2(s, &matchFn{}, beam.Create(s, c.Input))
	parts, traces, filePersons := beam.ParDo3(s, &mapFn{Cfg: c}, beam.Reshuffle(s, files))
	// One uid found in two folders is one person (trace.JoinPersons, over
	// every file's persons), before anyone's contribution is bounded. A
	// database is always a corpus (trajdb.FromFiles joins whatever the
	// read options say).
	parts = beam.ParDo(s, &rekeyPartFn{}, parts, beam.SideInput{Input: joinPersons(s, filePersons, true)})
	persons := beam.GroupByKey(s, parts)
	nodes := beam.ParDo(s, &boundFn{Cfg: c}, persons)
	return stats.SumPerKey(s, nodes), traces
}

// buildRelease adds a release to the pipeline rooted at s: the counts
// (aggregate), then the noise and the files (one worker).
func buildRelease(s beam.Scope, c releaseConfig) {
	s = s.Scope("tracepriv.release")
	counts, traces := aggregate(s, c)
	beam.ParDo0(s, &noiseFn{Cfg: c}, beam.Impulse(s), beam.SideInput{Input: counts}, beam.SideInput{Input: traces})
}

// SynthesizeResult is what a release did.
type SynthesizeResult struct {
	// Cert is the release.json the pipeline wrote.
	Cert *SynthesisCert
	// Input accounts for what was read and mapped, and Bounded for what
	// the contribution bounds kept, as the runner's counters report them
	// (zeros if it reports none). Neither is private: they are for the
	// operator and are not written beside the release.
	Input   trajdb.MapReport
	Bounded BoundReport
	// Unreadable counts the files skipped because they could not be read.
	Unreadable int64
	// Output is the directory written (SynthesizeOptions.Output).
	Output string
}

// BoundReport says what the contribution bounds kept.
type BoundReport struct {
	// Trajectories kept; OverMaxSeqs dropped beyond a person's first
	// MaxSeqs; SymbolsCut cut beyond MaxLen (in kept and dropped ones).
	Trajectories int64 `json:"trajectories"`
	OverMaxSeqs  int64 `json:"trajectories_over_max_seqs"`
	SymbolsCut   int64 `json:"symbols_over_max_len"`
}

// Release releases a trajectory database with a Beam pipeline, as
// `tracepriv synthesize --in DIR --out DIR` does on one machine: the same
// mapping, bounds and mechanism, and with a seed the same files.
func Synthesize(ctx context.Context, o SynthesizeOptions) (*SynthesizeResult, error) {
	initBeam()
	log := logger(o.Logger)
	start := time.Now()
	o.withDefaults()
	c := releaseConfig{SynthesizeOptions: o}
	if !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0) {
		return nil, fmt.Errorf("epsilon must be positive and finite, got %v", o.Epsilon)
	}
	if _, err := c.grid(); err != nil {
		return nil, err
	}
	if err := c.bounds().Validate(); err != nil {
		return nil, err
	}
	if o.NMax < 0 {
		return nil, fmt.Errorf("n-max must be positive (0 for the default %d), got %d", trajdb.DefaultNMax, o.NMax)
	}
	if o.MinLen < 1 {
		return nil, fmt.Errorf("min-len must be at least 1, got %d", o.MinLen)
	}
	if _, err := c.mechanism(); err != nil {
		return nil, err
	}
	if _, err := c.Reading.options(); err != nil {
		return nil, err
	}
	root, err := GlobRoot(o.Input)
	if err != nil {
		return nil, err
	}
	if c.Root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	// A database is a corpus of persons (trajdb.FromFiles), named by the
	// person rule from the pattern's root.
	if c.UID != "" {
		return nil, fmt.Errorf("uid %q: a database is a corpus of persons, named by their folders or a uid field; a uid names one person", c.UID)
	}
	c.InputRoot, c.AsCorpus = c.Root, true
	if c.Out, err = filepath.Abs(o.Output); err != nil {
		return nil, err
	}
	if c.Out == c.Root || strings.HasPrefix(c.Out, c.Root+string(filepath.Separator)) {
		return nil, fmt.Errorf("output %s is inside the input's directory %s: the release would be read as input next time; write elsewhere", o.Output, root)
	}
	for _, name := range []string{SynthesisSeqFile, SynthesisCSVFile, SynthesisCertFile} {
		if fileExists(filepath.Join(c.Out, name)) && !o.Force {
			return nil, fmt.Errorf("output %s holds a release already (%s); write to another directory, or force replacing it", o.Output, name)
		}
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	log.Info("tracepriv pipeline: release: starting", "input", o.Input, "output", c.Out, "mechanism", o.Mechanism, "epsilon", o.Epsilon)
	res, b, err := runAndRead(ctx, func(s beam.Scope) { buildRelease(s, c) }, filepath.Join(c.Out, SynthesisCertFile))
	if err != nil {
		log.Error("tracepriv pipeline: release: failed", "error", err)
		return nil, err
	}
	var cert SynthesisCert
	if err := json.Unmarshal(b, &cert); err != nil {
		return nil, fmt.Errorf("%s: %w", SynthesisCertFile, err)
	}
	n := func(name string) int { return int(counter(res, name)) }
	r := &SynthesizeResult{
		Cert: &cert,
		Input: trajdb.MapReport{Traces: n("traces"), Persons: n("persons"), Fixes: n("fixes"),
			Trajectories: n("trajectories"), Symbols: n("symbols"), Repeats: n("fixes_repeated"),
			Outside: n("fixes_outside"), GapSplits: n("gap_splits"), Short: n("trajectories_short"), ShortSymbols: n("short_symbols")},
		Bounded: BoundReport{Trajectories: counter(res, "trajectories_bounded"),
			OverMaxSeqs: counter(res, "trajectories_over_max_seqs"), SymbolsCut: counter(res, "symbols_over_max_len")},
		Unreadable: counter(res, "unreadable_files"),
		Output:     o.Output,
	}
	log.Info("tracepriv pipeline: release: done", "trajectories", cert.Trajectories, "persons", r.Input.Persons,
		"unreadable_files", r.Unreadable, "seconds", time.Since(start).Seconds())
	if r.Unreadable > 0 {
		log.Warn("tracepriv pipeline: release: unreadable files skipped", "files", r.Unreadable)
	}
	return r, nil
}
