package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// DefaultBatchUnits is the most units of people a release element of
// Sanitize holds.
const DefaultBatchUnits = 64

// SanitizeParams configures a release (SanitizeTraces, Sanitize). It is
// public configuration only, carried in the pipeline's steps to the
// workers.
type SanitizeParams struct {
	// Prior is the prior family file's content (prior.Read).
	Prior []byte
	// Epsilon, Lambda, Radius and Delta are sanitize.Options'; Delta 0
	// means sanitize.DefaultDelta.
	Epsilon, Lambda, Radius, Delta float64
	// Design and Path are sanitize.Options'; "" means auto.
	Design cip.Method
	Path   sanitize.Path
	// Origin is a public reference point recorded in the certificates for
	// maps and attacks; nil means the prior's. The release does not use it
	// (sanitize adds the noise in Earth-centred coordinates).
	Origin *geo.Point
	// Seeded makes the release reproducible: every person's noise comes
	// from a stream derived from Seed and their uid (noise.Derive), as in
	// the single-machine command. Otherwise each worker draws from
	// crypto/rand.
	Seeded bool
	Seed   uint64
	// PointsOnly and AllowPriorOverlap are sanitize.Options'.
	PointsOnly, AllowPriorOverlap bool
	// PriorCorpus is the content of the prior's private corpus index
	// (trace.CorpusIndex, which tracepriv fit writes beside the prior:
	// prior.CorpusIndexPath), for sanitize.Options.PriorCorpus; nil checks
	// nothing (the certificates then say so). Unlike the rest it is not
	// public: it travels to the workers with the job's configuration.
	PriorCorpus []byte
	// Ledger is what the certificates and the manifest say of the budget
	// ledger (sanitize.Options.Ledger): set by Sanitize from
	// SanitizeOptions.Admission, or budget.Off, budget.Seeded.
	Ledger string
}

// Check reports the first parameter that cannot give a release, as
// sanitize.Options.Check does, naming it.
func (p SanitizeParams) Check() error {
	opt, err := p.options()
	if err != nil {
		return err
	}
	return opt.Check()
}

// options builds the release options; on a worker, for the prior is
// parsed there.
func (p SanitizeParams) options() (sanitize.Options, error) {
	pr, err := prior.Read(bytes.NewReader(p.Prior))
	if err != nil {
		return sanitize.Options{}, fmt.Errorf("prior: %w", err)
	}
	var idx *trace.CorpusIndex
	if len(p.PriorCorpus) > 0 {
		if idx, err = trace.ReadCorpusIndex(bytes.NewReader(p.PriorCorpus)); err != nil {
			return sanitize.Options{}, fmt.Errorf("prior corpus index: %w", err)
		}
	}
	src := noise.Secure()
	if p.Seeded {
		src = noise.Seeded(p.Seed)
	}
	// One goroutine per person, as the single-machine corpus release: the
	// runner runs people (and units) in parallel.
	return sanitize.Options{Prior: pr, Epsilon: p.Epsilon, Lambda: p.Lambda, Radius: p.Radius, Delta: p.Delta,
		Design: p.Design, Path: p.Path, Origin: p.Origin, Source: src, Workers: corpus.PersonWorkers,
		PointsOnly: p.PointsOnly, AllowPriorOverlap: p.AllowPriorOverlap, PriorCorpus: idx, Ledger: p.Ledger}, nil
}

// PersonRelease is one person's release by SanitizeTraces: their traces,
// sanitised, in the order of their first points (timestamps kept; altitude
// and attributes dropped), and the certificate covering them.
type PersonRelease struct {
	UID         string
	Traces      []*trace.Trace
	Certificate *sanitize.Certificate
}

func init() {
	register.Function1x2(keyByUID)
	register.Emitter2[string, trace.Trace]()
	register.DoFn5x0[context.Context, string, func(*trace.Trace) bool, func(PersonRelease), func(string, string)](&personFn{})
	register.Iter1[trace.Trace]()
	register.Emitter1[PersonRelease]()
	register.Emitter2[string, string]()
}

// SanitizeTraces releases each person's traces with conditional
// inferential privacy against the prior family of p, as sanitize.Release
// releases them: the privacy unit is the person (uid), whose traces are
// designed for, certified and perturbed jointly. It transforms a
// PCollection<trace.Trace> into a PCollection<PersonRelease>, one element
// per person, and a PCollection<KV<string, string>> of the people who
// could not be released (uid, and why: two traces of theirs at the same
// time, more points than the dense path takes, ...), so that one person's
// bad data does not stop the others.
//
// A seeded release gives each person the noise a single-machine release
// with the same seed gives them (noise.Derive of the seed and their uid),
// however the runner spreads the people. The traces travel through the
// runner's shuffle to be grouped by person: the runner sees them, as the
// machine that reads them does (the Sanitize job, which reads each group
// of people's files where it releases them, does not shuffle locations). Traces without a uid are one
// person, the uid "", as in sanitize.Release; ReadTraces attributes them
// by their folder first. SanitizeTraces panics if p is invalid, as Beam's
// own transforms panic on a bad argument: check p first (p.Check).
func SanitizeTraces(s beam.Scope, traces beam.PCollection, p SanitizeParams) (released, failed beam.PCollection) {
	s = s.Scope("tracepriv.SanitizeTraces")
	if err := p.Check(); err != nil {
		panic(fmt.Sprintf("pipeline.SanitizeTraces: %v", err))
	}
	persons := beam.GroupByKey(s, beam.ParDo(s, keyByUID, traces))
	return beam.ParDo2(s, &personFn{P: p}, persons)
}

// keyByUID keys a trace by its person.
func keyByUID(t trace.Trace) (string, trace.Trace) { return t.UID, t }

// personFn releases the traces of one person (sanitize.Release) and emits
// the release, or the person's uid and why they could not be released.
type personFn struct {
	P   SanitizeParams
	opt sanitize.Options

	persons, points, failures beam.Counter
}

func (f *personFn) Setup() error {
	var err error
	if f.opt, err = f.P.options(); err != nil {
		return stageError("%v", err)
	}
	f.persons = beam.NewCounter(metricsNamespace, "persons_released")
	f.points = beam.NewCounter(metricsNamespace, "points_released")
	f.failures = beam.NewCounter(metricsNamespace, "persons_failed")
	return nil
}

func (f *personFn) ProcessElement(ctx context.Context, uid string, traces func(*trace.Trace) bool, released func(PersonRelease), failed func(string, string)) {
	var ts []*trace.Trace
	for {
		var t trace.Trace
		if !traces(&t) {
			break
		}
		ts = append(ts, &t)
	}
	// The runner hands the traces over in any order: put them in one of
	// their own, so that the certificate does not depend on it. Two
	// traces of a person cannot start at the same time (Release refuses a
	// person at two places at once), and an empty trace is refused too.
	slices.SortStableFunc(ts, func(a, b *trace.Trace) int {
		if a.Len() == 0 || b.Len() == 0 {
			return a.Len() - b.Len()
		}
		return a.Points[0].Time.Compare(b.Points[0].Time)
	})
	outs, cert, err := sanitize.Release(ts, f.opt)
	if err != nil {
		f.failures.Inc(ctx, 1)
		failed(uid, err.Error())
		return
	}
	f.persons.Inc(ctx, 1)
	f.points.Inc(ctx, int64(cert.Persons[0].Points))
	released(PersonRelease{UID: uid, Traces: outs, Certificate: cert})
}

// SanitizeOptions configures Sanitize, a corpus release from files. Only
// its parameters travel to the workers.
type SanitizeOptions struct {
	// Input is the file pattern (see Match) and Output the directory the
	// release is written to, mirroring the matched files' paths relative
	// to the pattern's root (GlobRoot).
	Input, Output string
	// SanitizeParams are the release's parameters.
	SanitizeParams
	// Reading says how files are read.
	Reading
	// BatchUnits is the most units per release element (default
	// DefaultBatchUnits); each element is split further by the runner.
	BatchUnits int
	// Logger, if set, is told what the launcher does (the job, its
	// result); nil means nothing is logged. It stays in this process: the
	// workers log through Beam's log package, to the runner.
	Logger *slog.Logger `json:"-"`
	// Admission, if set, charges the release's people in a budget ledger
	// by the one admission policy (budget.Admission): every person found is
	// checked against the target epsilon before the job starts (a refusal
	// runs nothing and charges nothing), charged it as pending, and
	// settled to their certified epsilon_max when the job has written
	// the manifest; people whose units failed are not charged. A job that
	// fails or is killed leaves the charges pending at the target (an
	// upper bound), which the next run of the same release settles before
	// it charges (Settlement): its release key must be ReleaseKey's. It
	// stays in this process. Nil charges nothing.
	Admission *budget.Admission `json:"-"`
	// Notes, if set, is told in a line each what the ledger's admission
	// did besides this release's own charges (what it settled of a killed
	// run, other releases holding the same people pending); nil tells
	// nothing.
	Notes io.Writer `json:"-"`
}

// ReleaseMarker is the file Sanitize writes into the output directory
// before it charges anyone and removes once the release has been settled:
// the release's key (ReleaseKey), so that the next run to the same output
// knows whose partial release the files there are.
const ReleaseMarker = corpus.PipelineMarkerName

// ReleaseKey is the budget ledger's key of the release o describes
// (sanitize.Options.ReleaseKey of kind "pipeline sanitize"): a hash of the
// absolute Output, the prior's bytes and everything the noise depends on,
// never a path in clear. An Admission under this key lets the next run of
// the same release settle what a killed run left pending.
func (o SanitizeOptions) ReleaseKey() (string, error) {
	opt, err := o.SanitizeParams.options()
	if err != nil {
		return "", err
	}
	return opt.ReleaseKey("pipeline sanitize", o.Output, o.Prior)
}

// sanitizeConfig is SanitizeOptions resolved by the launcher: what every
// step of a corpus release needs, serialisable into the DoFns.
type sanitizeConfig struct {
	SanitizeParams
	Reading
	BatchUnits int
	// Root and Out are absolute.
	Root, Out string
	// Start is when the launcher started, for the manifest's seconds.
	Start time.Time
	// Resumed are the units a killed run of this release left whole
	// under Out (landedUnits), by corpus.UnitKey, sorted: they are not
	// released again, their records are rebuilt from what is there.
	Resumed []string
}

// options builds the release and read options on a worker.
func (c *sanitizeConfig) options() (sanitize.Options, trace.ReadOptions, error) {
	opt, err := c.SanitizeParams.options()
	if err != nil {
		return sanitize.Options{}, trace.ReadOptions{}, err
	}
	ro, err := c.Reading.options()
	return opt, ro, err
}

// sanitizer binds the corpus runner to sanitize with opt, as
// sanitize.Corpus does.
func sanitizer(opt sanitize.Options) corpus.Sanitizer[*sanitize.Certificate] {
	return corpus.Sanitizer[*sanitize.Certificate]{
		Release: func(ts []*trace.Trace, read *trace.Report) ([]*trace.Trace, *sanitize.Certificate, error) {
			out, c, err := sanitize.Release(ts, opt)
			if err != nil {
				return nil, nil, err
			}
			c.RecordInput(read)
			return out, c, nil
		},
		WriteCertificate: sanitize.WriteCertificate, CertificateSuffix: sanitize.CertificateSuffix,
	}
}

// groupRecord is what the release step tells the manifest step of a unit
// of people released: its people as the manifest lists them and the input
// rows reading their files skipped (sanitize.Manifest.Add).
type groupRecord struct {
	Persons     []sanitize.Released
	SkippedRows int
	SkippedBy   map[string]int
	// Resumed says the unit was kept from a killed run of the release
	// (sanitizeConfig.Resumed), not released by this one.
	Resumed bool
}

// unitBatch is a release element: units of people released by one
// restriction of releaseFn.
type unitBatch struct {
	Units []corpus.Unit
}

func init() {
	register.DoFn3x1[string, func(string), func(string), error](&matchFn{})
	register.Emitter1[string]()
	register.DoFn2x0[string, func(corpus.FileScan)](&scanFn{})
	register.Emitter1[corpus.FileScan]()
	register.DoFn5x1[[]byte, func(*corpus.FileScan) bool, func(unitBatch), func(sanitize.Failure), func(int), error](&groupFn{})
	register.Iter1[corpus.FileScan]()
	register.Emitter1[unitBatch]()
	register.Emitter1[sanitize.Failure]()
	register.Emitter1[int]()
	register.DoFn5x1[context.Context, *sdf.LockRTracker, unitBatch, func(groupRecord), func(sanitize.Failure), error](&releaseFn{})
	register.Emitter1[groupRecord]()
	register.DoFn5x1[[]byte, func(*int) bool, func(*string) bool, func(*groupRecord) bool, func(*sanitize.Failure) bool, error](&manifestFn{})
	register.Iter1[int]()
	register.Iter1[string]()
	register.Iter1[groupRecord]()
	register.Iter1[sanitize.Failure]()
}

// matchFn expands the pattern into trace files (main output) and the other
// files it matched (second output). It runs once, on one worker; listing
// a directory tree is cheap next to reading it, and happening inside the
// pipeline keeps a large corpus's file list out of the job's definition.
type matchFn struct{}

func (f *matchFn) ProcessElement(pattern string, files, ignored func(string)) error {
	fs, ig, err := Match(pattern)
	if err != nil {
		return stageError("%v", err)
	}
	for _, p := range fs {
		files(p)
	}
	for _, p := range ig {
		ignored(p)
	}
	return nil
}

// scanFn learns who is in a file (corpus.ScanFile).
type scanFn struct {
	Cfg sanitizeConfig
	ro  trace.ReadOptions
}

func (f *scanFn) Setup() error {
	var err error
	if _, f.ro, err = f.Cfg.options(); err != nil {
		return stageError("%v", err)
	}
	return nil
}

func (f *scanFn) ProcessElement(path string, emit func(corpus.FileScan)) {
	emit(corpus.ScanFile(path, f.ro))
}

// groupFn joins the files that share a person into units
// (corpus.GroupUnits) and batches them; it also passes on the files that
// could not be read and the number of files. Grouping is connected
// components over files linked by uids, which no fixed number of
// key-grouping steps computes (label propagation needs as many rounds as
// the longest chain of shared people); union-find does it in one pass, and
// its input, each file's uids and counts, is tiny next to the traces, so
// it runs on one worker over the scans as a side input.
type groupFn struct {
	Cfg sanitizeConfig
}

func (f *groupFn) ProcessElement(_ []byte, scans func(*corpus.FileScan) bool, emit func(unitBatch), failed func(sanitize.Failure), files func(int)) error {
	var all []corpus.FileScan
	var s corpus.FileScan
	for scans(&s) {
		all = append(all, s)
		s = corpus.FileScan{}
	}
	// A file the person rule gives no person refuses the job before
	// anything is drawn.
	if err := corpus.Refused(f.Cfg.Root, all); err != nil {
		return stageError("%v", err)
	}
	units, unreadable := corpus.GroupUnits(all)
	for _, s := range unreadable {
		failed(sanitize.NewFailure(f.Cfg.Root, []string{s.Path}, nil, s.Err))
	}
	files(len(all))
	per := f.Cfg.BatchUnits
	if per <= 0 {
		per = DefaultBatchUnits
	}
	// Round robin over units sorted largest first, so that batches are
	// alike in size.
	n := (len(units) + per - 1) / per
	batches := make([]unitBatch, n)
	for i, u := range units {
		batches[i%n].Units = append(batches[i%n].Units, u)
	}
	for _, b := range batches {
		emit(b)
	}
	return nil
}

// releaseFn releases units of people (corpus.ReleaseUnit: read, design,
// sample, certify, and write the unit's files and certificate together).
// It is a splittable DoFn over the indices of a batch's units, so that a
// runner can split a batch that is taking long and hand the rest to
// another worker (Dataflow's dynamic work rebalancing; Prism splits a
// bundle whose progress stalls). A unit is never split: its people are
// designed for and certified jointly.
type releaseFn struct {
	Cfg sanitizeConfig
	san corpus.Sanitizer[*sanitize.Certificate]
	ro  trace.ReadOptions

	units, points, bundles, resumed beam.Counter
}

func (f *releaseFn) Setup() error {
	f.units = beam.NewCounter(metricsNamespace, "units_released")
	f.resumed = beam.NewCounter(metricsNamespace, "units_resumed")
	f.points = beam.NewCounter(metricsNamespace, "points_released")
	f.bundles = beam.NewCounter(metricsNamespace, "release_bundles")
	opt, ro, err := f.Cfg.options()
	if err != nil {
		return stageError("%v", err)
	}
	f.san, f.ro = sanitizer(opt), ro
	return nil
}

func (f *releaseFn) CreateInitialRestriction(b unitBatch) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: int64(len(b.Units))}
}

func (f *releaseFn) SplitRestriction(_ unitBatch, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

func (f *releaseFn) RestrictionSize(_ unitBatch, r offsetrange.Restriction) float64 {
	return r.Size()
}

func (f *releaseFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

func (f *releaseFn) StartBundle(ctx context.Context, _ func(groupRecord), _ func(sanitize.Failure)) {
	f.bundles.Inc(ctx, 1)
}

func (f *releaseFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, b unitBatch, released func(groupRecord), failed func(sanitize.Failure)) error {
	// Results are emitted when the claimed units are done rather than one
	// by one: a runner that sees no output for a while then splits the
	// batch, which is what spreads a few long units over the cores.
	var rels []groupRecord
	var fails []sanitize.Failure
	r := rt.GetRestriction().(offsetrange.Restriction)
	for i := r.Start; rt.TryClaim(i); i++ {
		u := b.Units[i]
		if _, ok := slices.BinarySearch(f.Cfg.Resumed, corpus.UnitKey(corpus.Rel(f.Cfg.Root, u.Files))); ok {
			// Its people were not charged again: never draw it again.
			// Checked once more, for the files may have changed since
			// the launcher looked.
			rec, err := landedRecord(u, f.Cfg, f.ro)
			if err != nil {
				fails = append(fails, sanitize.NewFailure(f.Cfg.Root, u.Files, u.UIDs, fmt.Sprintf(
					"kept from a killed run of this release, but its files under the output changed while this run ran (%v): not released again, for its people were not charged again", err)))
				continue
			}
			rels = append(rels, rec)
			f.resumed.Inc(ctx, 1)
			continue
		}
		e, err := corpus.ReleaseUnit(u, f.san, f.ro, f.Cfg.Root, f.Cfg.Out)
		if err != nil {
			fails = append(fails, sanitize.NewFailure(f.Cfg.Root, u.Files, u.UIDs, err.Error()))
			continue
		}
		c := e.Certificate
		rels = append(rels, groupRecord{Persons: c.ManifestPersons(e.CertificateFile, e.Files), SkippedRows: c.SkippedRows, SkippedBy: c.SkippedByReason})
		f.units.Inc(ctx, 1)
		f.points.Inc(ctx, int64(u.Points))
	}
	if err := rt.GetError(); err != nil {
		return stageError("release: %v", err)
	}
	for _, e := range rels {
		released(e)
	}
	for _, fl := range fails {
		failed(fl)
	}
	return nil
}

// manifestFn writes manifest.json, last: its side inputs are complete only
// when every unit has been released or has failed.
type manifestFn struct {
	Cfg sanitizeConfig
}

func (f *manifestFn) ProcessElement(_ []byte, files func(*int) bool, ignored func(*string) bool, rels func(*groupRecord) bool, fails func(*sanitize.Failure) bool) error {
	opt, ro, err := f.Cfg.options()
	if err != nil {
		return stageError("%v", err)
	}
	n := 0
	var k int
	for files(&k) {
		n += k
	}
	var ig []string
	var p string
	for ignored(&p) {
		ig = append(ig, p)
	}
	sortWalkOrder(ig)
	m := sanitize.NewManifest(opt, ro, f.Cfg.Root, n, ig)
	var r groupRecord
	for rels(&r) {
		m.Add(r.Persons, r.SkippedRows, r.SkippedBy)
		if r.Resumed {
			m.Resumed++
		}
		r = groupRecord{}
	}
	var fl sanitize.Failure
	for fails(&fl) {
		m.Failed = append(m.Failed, fl)
		fl = sanitize.Failure{}
	}
	m.Finish(time.Since(f.Cfg.Start))
	if err := sanitize.WriteManifest(f.Cfg.Out, m); err != nil {
		return stageError("manifest: %v", err)
	}
	return nil
}

// sanitizeFiles adds a corpus release of files, the trace files to
// release, to the pipeline: scan them (who is in each), group them into
// units of people (one worker), release the units (many), and write the
// manifest (one worker, last), which also lists the other files found,
// ignored. The configuration must be resolved by the launcher (Sanitize).
func sanitizeFiles(s beam.Scope, files, ignored beam.PCollection, c sanitizeConfig) {
	s = s.Scope("tracepriv.sanitizeFiles")
	// Spread the files over workers: matching ran on one.
	scans := beam.ParDo(s, &scanFn{Cfg: c}, beam.Reshuffle(s, files))
	batches, scanFails, count := beam.ParDo3(s, &groupFn{Cfg: c}, beam.Impulse(s), beam.SideInput{Input: scans})
	rels, relFails := beam.ParDo2(s, &releaseFn{Cfg: c}, beam.Reshuffle(s, batches))
	fails := beam.Flatten(s, scanFails, relFails)
	beam.ParDo0(s, &manifestFn{Cfg: c}, beam.Impulse(s),
		beam.SideInput{Input: count}, beam.SideInput{Input: ignored}, beam.SideInput{Input: rels}, beam.SideInput{Input: fails})
}

// SanitizeResult is what a corpus release did.
type SanitizeResult struct {
	// Manifest is the manifest the pipeline wrote: every person released,
	// those of the units kept from a killed run of the same release
	// included (Manifest.Resumed counts those units).
	Manifest *sanitize.Manifest
	// Bundles is the number of bundles the release step ran in, as the
	// runner reported it (0 if it reports no metrics).
	Bundles int64
	// Output is the directory written (SanitizeOptions.Output).
	Output string
	// Settlement is what the run settled of a killed earlier run of the
	// same release before it charged, and whom it kept of that run's
	// release (nil without an Admission).
	Settlement *Settlement
}

// Settlement is what Sanitize did, before charging, with the charges a
// killed earlier run of the same release (the same ReleaseKey) left
// pending, judged by what that run left under the output (the tests of the
// single-machine corpus release, corpus.Leftovers): settled to the
// certified epsilon of a certificate that names exactly the person's
// group of people; undone where nothing of the group is there; kept at the
// target, an upper bound, where something is there but no such
// certificate, or the person is in no group of the input as it is now.
// A settled person whose group's files are all there and match the
// certificate is resumed: their release is kept, neither drawn nor
// charged again, so that they end with that one charge.
type Settlement struct {
	// Settled are the certified epsilons charged, by uid.
	Settled map[string]float64
	// Resumed are the people (uids, with the names joined into them)
	// whose group's release the killed run left whole: kept, not
	// released or charged again. The other settled people's groups are
	// in doubt (a file missing or changed) and released again.
	Resumed []string
	// Undone and Kept are the uids undone and kept at the target.
	Undone, Kept []string
	// Elsewhere are the other releases (a key each) with pending charges
	// of this release's people, with those people: a run of other
	// options or another output that was killed. They stay pending until
	// a run of that release settles them.
	Elsewhere map[string][]string
}

// Sanitize releases a corpus of trace files with a Beam pipeline and
// returns its manifest: the same release, files, certificates and
// manifest (but for timings) as the single-machine sanitize.Corpus over
// the pattern's root, and with a seed the same bytes. Its people are
// released in units, the people sharing a file together, as
// sanitize.Corpus releases them (SanitizeTraces releases each person
// alone). The options are checked first, as sanitize.Corpus checks them.
// The output directory must not hold a release already (a manifest or a
// resumable single-machine journal): releasing the same people twice with
// fresh noise would weaken their protection. Nor part of a release with
// other options, which a killed run left (ReleaseMarker): its files settle
// that release's charges. Part of a release with the same options, which
// a killed run left, is resumed, with or without a ledger: a group of
// people whose certificate names exactly them and whose files are all
// there and match it (points, start and end of every trace it certifies)
// is kept, neither released nor charged again (its people's pending
// charges settled to the certificate, Settlement), and listed in the
// manifest from what is there (Manifest.Resumed counts these groups);
// every other group is released, and charged, as in a first run, its old
// files replaced (what the killed run left of it settled first: a charge
// kept at the target where something is there). With a seed, the resumed
// release's files, certificates and manifest are those of an
// uninterrupted run but for timings and resumed_units.
func Sanitize(ctx context.Context, o SanitizeOptions) (*SanitizeResult, error) {
	initBeam()
	log := logger(o.Logger)
	start := time.Now()
	c := sanitizeConfig{SanitizeParams: o.SanitizeParams, Reading: o.Reading, BatchUnits: o.BatchUnits, Start: start}
	opt, _, err := c.options()
	if err != nil {
		return nil, err
	}
	// The checks sanitize.Corpus makes (a corpus release has no listed
	// secrets), before anything runs.
	if err := opt.Check(); err != nil {
		return nil, err
	}
	root, err := GlobRoot(o.Input)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("input %s: %w", o.Input, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("input %s: %s is not a directory", o.Input, root)
	}
	if c.Root, c.Out, err = corpus.CheckDirs(root, o.Output); err != nil {
		return nil, err
	}
	// The person rule names persons from the pattern's root.
	c.InputRoot = c.Root
	key, err := o.ReleaseKey()
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(c.Out, ReleaseMarker)
	b, err := os.ReadFile(marker)
	if err == nil && strings.TrimSpace(string(b)) != key {
		return nil, &param.Error{Name: "out", Value: o.Output, Why: "holds part of a release with other options (or another prior) that did not finish; " +
			"run it again with its own options to finish it and settle its ledger charges, or write this release to a new directory"}
	}
	// A killed run of this very release: resume it.
	resume := err == nil
	pending, err := o.Admission.PendingPeople("")
	if err != nil {
		return nil, err
	}
	held := ""
	for _, name := range []string{sanitize.ManifestName, corpus.JournalName} {
		if fileExists(filepath.Join(c.Out, name)) {
			held = name
		}
	}
	if held != "" && len(pending) == 0 {
		return nil, outputHeld(o.Output, held)
	}
	var (
		target  map[string]float64
		settled *Settlement
		scans   []corpus.FileScan
	)
	if o.Admission != nil && c.Ledger == "" {
		c.Ledger = filepath.Base(o.Admission.Store().Path())
	}
	if o.Admission != nil || resume && held == "" {
		if scans, err = scanInput(o.Input, c); err != nil {
			return nil, err
		}
	}
	if o.Admission != nil {
		if target, err = ledgerTarget(scans, c.Epsilon); err != nil {
			return nil, err
		}
		if settled, err = settleLeftover(o.Admission, pending, scans, c); err != nil {
			return nil, err
		}
		if settled.Elsewhere, err = o.Admission.PendingElsewhere(slices.Sorted(maps.Keys(target))); err != nil {
			return nil, err
		}
		settled.write(o.Notes, o.Admission.Store().Path())
	}
	if held != "" {
		return nil, outputHeld(o.Output, held)
	}
	if resume {
		var people []string
		if c.Resumed, people, err = landedUnits(scans, c, settled); err != nil {
			return nil, err
		}
		// Their people are settled already: not charged again.
		for _, uid := range people {
			delete(target, uid)
		}
		if settled != nil {
			settled.Resumed = slices.Sorted(slices.Values(people))
		}
		if o.Notes != nil && len(c.Resumed) > 0 {
			fmt.Fprintf(o.Notes, "resuming the killed run of this release (same options and --output): %d groups of people (%d people) it left whole under --output are kept, not released or charged again\n",
				len(c.Resumed), len(people))
		}
	}
	if err := o.Admission.Check(target); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(c.Out, corpus.CertificatesDir), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteDurable(marker, 0o644, func(w io.Writer) error { _, err := fmt.Fprintln(w, key); return err }); err != nil {
		return nil, err
	}
	if err := o.Admission.Charge("", target); err != nil {
		return nil, err
	}
	log.Info("tracepriv pipeline: sanitize: starting", "input", o.Input, "root", c.Root, "output", c.Out, "randomness", noise.Describe(opt.Source))
	res, b, err := runAndRead(ctx, func(s beam.Scope) {
		files, ignored := beam.ParDo2(s, &matchFn{}, beam.Create(s, o.Input))
		sanitizeFiles(s, files, ignored, c)
	}, filepath.Join(c.Out, sanitize.ManifestName))
	if err != nil {
		log.Error("tracepriv pipeline: sanitize: failed", "error", err)
		if o.Admission != nil {
			err = fmt.Errorf("%w (the people of this release stay charged in %s at the target epsilon, pending: some of their files may have been written; the next run with the same options and --output settles them from what landed)", err, o.Admission.Store().Path())
		}
		return nil, err
	}
	var m sanitize.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if o.Admission != nil {
		// Settle the people whose units landed; a failed unit wrote
		// nothing (its files and certificate land together or not at
		// all), so its people's charges are undone. The resumed units'
		// people were settled before the job and not charged again.
		certified := map[string]float64{}
		for _, p := range m.Persons {
			if _, charged := target[p.UID]; charged {
				certified[p.UID] = p.EpsilonMax
			}
		}
		var unreleased []string
		for uid := range target {
			if _, ok := certified[uid]; !ok {
				unreleased = append(unreleased, uid)
			}
		}
		if err := o.Admission.UndoPeople("", unreleased); err != nil {
			return nil, fmt.Errorf("the release was written, but the ledger could not be updated (its charges stay pending at the target): %w", err)
		}
		if err := o.Admission.Settle("", certified); err != nil {
			return nil, fmt.Errorf("the release was written, but the ledger could not be updated (its charges stay pending at the target): %w", err)
		}
	}
	// Settled: the next run has nothing of this one to settle.
	os.Remove(marker)
	r := &SanitizeResult{Manifest: &m, Bundles: counter(res, "release_bundles"), Output: o.Output, Settlement: settled}
	log.Info("tracepriv pipeline: sanitize: done", "persons", len(m.Persons), "points", m.Points, "files", m.Files,
		"failed", len(m.Failed), "epsilon_max", m.EpsilonMax, "bundles", r.Bundles, "seconds", time.Since(start).Seconds())
	for _, f := range m.Failed {
		log.Warn("tracepriv pipeline: sanitize: not released", "files", f.Files, "uids", f.UIDs, "error", f.Error)
	}
	return r, nil
}

// outputHeld is the refusal of an output that holds a finished release.
func outputHeld(out, name string) error {
	return &param.Error{Name: "out", Value: out, Why: "holds a release already (" + name + "); write a new release to a new directory"}
}

// scanInput finds the people of the files matching pattern, on this
// machine, as the job's first pass will (corpus.ScanFile).
func scanInput(pattern string, c sanitizeConfig) ([]corpus.FileScan, error) {
	files, _, err := Match(pattern)
	if err != nil {
		return nil, err
	}
	_, ro, err := c.options()
	if err != nil {
		return nil, err
	}
	return corpus.ScanFiles(files, ro, 0), nil
}

// ledgerTarget gives each person of the files scanned the target epsilon:
// the most their release can be certified. It does not join the persons
// found to be one (the job does, corpus.GroupUnits): a name the join
// releases as another is checked too, so that what a person spent under
// either name bounds the release, and charged pending until the job has
// run, when it is undone, being in no unit (a merge costs accuracy, never
// privacy).
func ledgerTarget(scans []corpus.FileScan, eps float64) (map[string]float64, error) {
	target := map[string]float64{}
	for _, s := range scans {
		for _, p := range s.People {
			if p.UID == "" {
				return nil, fmt.Errorf("%s has traces without a uid, and the ledger is kept per person", s.Path)
			}
			target[p.UID] = eps
		}
	}
	return target, nil
}

// settleLeftover settles the charges pending under a's release, left by
// an earlier run of it that was killed before it settled them, by what
// that run left under the output (corpus.Leftovers), before this run
// charges again: a certificate naming the person's group settles them to
// its epsilon, nothing of theirs undoes the charge, anything else keeps it
// at the target (an upper bound).
func settleLeftover(a *budget.Admission, pending []string, scans []corpus.FileScan, c sanitizeConfig) (*Settlement, error) {
	if len(pending) == 0 {
		return &Settlement{}, nil
	}
	units, _ := corpus.GroupUnits(scans)
	l := corpus.Leftovers(pending, units, sanitize.CertificateSuffix, c.Root, c.Out, sanitize.CertificateEpsilons)
	st := &Settlement{Settled: l.Settled, Undone: l.Undone, Kept: l.Kept}
	if err := a.UndoPeople("", l.Undone); err != nil {
		return nil, err
	}
	if len(l.Settled)+len(l.Kept) == 0 {
		return st, nil
	}
	if err := a.Settle("", l.Settled); err != nil {
		// A certificate above the charge is not this release's: every
		// charge stays at its upper bound.
		if err := a.Settle("", nil); err != nil {
			return nil, err
		}
		st.Kept = slices.Sorted(slices.Values(slices.Concat(l.Kept, slices.Collect(maps.Keys(l.Settled)))))
		st.Settled = nil
	}
	return st, nil
}

// write tells w what was settled, and which other releases hold this
// release's people pending, a line each (nothing for nil w or nothing
// done). ledger names the store.
func (st *Settlement) write(w io.Writer, ledger string) {
	if w == nil {
		return
	}
	if n := len(st.Settled) + len(st.Undone) + len(st.Kept); n > 0 {
		fmt.Fprintf(w, "ledger %s: an earlier run of this release (same options and --output) stopped before it settled its %d people's charges: "+
			"%d settled to the certificates it wrote, %d undone (nothing of theirs under --output)", ledger, n, len(st.Settled), len(st.Undone))
		if len(st.Kept) > 0 {
			fmt.Fprintf(w, ", %d kept at the target epsilon, an upper bound (files of theirs under --output without a certificate naming their group: %s)", len(st.Kept), strings.Join(first(st.Kept, 5), ", "))
		}
		fmt.Fprintln(w)
	}
	if len(st.Elsewhere) > 0 {
		var people []string
		for _, ps := range st.Elsewhere {
			people = append(people, ps...)
		}
		slices.Sort(people)
		people = slices.Compact(people)
		fmt.Fprintf(w, "ledger %s: %d people of this release (%s) also have charges pending at their upper bound under %d other releases "+
			"(runs with other options or another output that stopped before they settled): they stay pending, counted in spent, until each of those runs is repeated "+
			"with its own options and output, which settles them (the ledger's pending charges name the command and output)\n",
			ledger, len(people), strings.Join(first(people, 5), ", "), len(st.Elsewhere))
	}
}

// first is s, at most n of it, with a count of the rest.
func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
}
