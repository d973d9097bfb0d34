package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// DefaultBatchUnits is the most units of people a release element holds.
const DefaultBatchUnits = 64

// SanitizeOptions configures a corpus release. It is public configuration
// only, serialised into the pipeline's steps for the workers.
type SanitizeOptions struct {
	// Input is the file pattern (see Match) and Output the directory the
	// release is written to, mirroring the matched files' paths relative
	// to the pattern's root (GlobRoot).
	Input, Output string
	// Prior is the prior family file's content (gp.ReadPrior).
	Prior []byte
	// Epsilon, Lambda, Radius and Delta are as in sanitize.Options; Delta
	// 0 means 1e-5, the single-machine command's default.
	Epsilon, Lambda, Radius, Delta float64
	// Design and Method are sanitize's; "" means auto.
	Design, Method string
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
	// Reading says how files are read.
	Reading
	// BatchUnits is the most units per release element (default
	// DefaultBatchUnits); each element is split further by the runner.
	BatchUnits int
}

// sanitizeConfig is SanitizeOptions resolved by the launcher: what every
// step needs, serialisable into the DoFns.
type sanitizeConfig struct {
	SanitizeOptions
	// Root and Out are absolute.
	Root, Out string
	// Start is when the launcher started, for the manifest's seconds.
	Start time.Time
}

// options builds the release and read options on a worker.
func (c *sanitizeConfig) options() (sanitize.Options, trace.ReadOptions, error) {
	pr, err := gp.ReadPrior(bytes.NewReader(c.Prior))
	if err != nil {
		return sanitize.Options{}, trace.ReadOptions{}, fmt.Errorf("prior: %w", err)
	}
	src := noise.Secure()
	if c.Seeded {
		src = noise.Seeded(c.Seed)
	}
	delta := c.Delta
	if delta == 0 {
		delta = 1e-5
	}
	design, method := c.Design, c.Method
	if design == "" {
		design = sanitize.DesignAuto
	}
	if method == "" {
		method = sanitize.MethodAuto
	}
	// One goroutine per person, as the single-machine corpus command:
	// the runner runs units in parallel.
	opt := sanitize.Options{Prior: pr, Epsilon: c.Epsilon, Lambda: c.Lambda, Radius: c.Radius, Delta: delta,
		Design: design, Method: method, Origin: c.Origin, Source: src, Workers: 1,
		PointsOnly: c.PointsOnly, AllowPriorOverlap: c.AllowPriorOverlap}
	ro, err := c.Reading.options()
	return opt, ro, err
}

// unitBatch is a release element: units of people released by one
// restriction of releaseFn.
type unitBatch struct {
	Units []sanitize.Unit
}

func init() {

	register.DoFn3x1[string, func(string), func(string), error](&matchFn{})
	register.Emitter1[string]()
	register.DoFn2x0[string, func(sanitize.FileScan)](&scanFn{})
	register.Emitter1[sanitize.FileScan]()
	register.DoFn5x1[[]byte, func(*sanitize.FileScan) bool, func(unitBatch), func(sanitize.Failure), func(int), error](&groupFn{})
	register.Iter1[sanitize.FileScan]()
	register.Emitter1[unitBatch]()
	register.Emitter1[sanitize.Failure]()
	register.Emitter1[int]()
	register.DoFn5x1[context.Context, *sdf.LockRTracker, unitBatch, func(sanitize.UnitRelease), func(sanitize.Failure), error](&releaseFn{})
	register.Emitter1[sanitize.UnitRelease]()
	register.DoFn5x1[[]byte, func(*int) bool, func(*string) bool, func(*sanitize.UnitRelease) bool, func(*sanitize.Failure) bool, error](&manifestFn{})
	register.Iter1[int]()
	register.Iter1[string]()
	register.Iter1[sanitize.UnitRelease]()
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

// scanFn learns who is in a file (sanitize.ScanFile).
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

func (f *scanFn) ProcessElement(path string, emit func(sanitize.FileScan)) {
	emit(sanitize.ScanFile(path, f.ro))
}

// groupFn joins the files that share a person into units
// (sanitize.GroupUnits) and batches them; it also passes on the files that
// could not be read and the number of files. Grouping is connected
// components over files linked by uids, which no fixed number of
// key-grouping steps computes (label propagation needs as many rounds as
// the longest chain of shared people); union-find does it in one pass, and
// its input, each file's uids and counts, is tiny next to the traces, so
// it runs on one worker over the scans as a side input.
type groupFn struct {
	Cfg sanitizeConfig
}

func (f *groupFn) ProcessElement(_ []byte, scans func(*sanitize.FileScan) bool, emit func(unitBatch), failed func(sanitize.Failure), files func(int)) error {
	var all []sanitize.FileScan
	var s sanitize.FileScan
	for scans(&s) {
		all = append(all, s)
		s = sanitize.FileScan{}
	}
	units, fails := sanitize.GroupUnits(f.Cfg.Root, all)
	for _, fl := range fails {
		failed(fl)
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

// releaseFn releases units of people (sanitize.ReleaseUnit: read, design,
// sample, certify, and write the unit's files and certificate together).
// It is a splittable DoFn over the indices of a batch's units, so that a
// runner can split a batch that is taking long and hand the rest to
// another worker (Dataflow's dynamic work rebalancing; Prism splits a
// bundle whose progress stalls). A unit is never split: its people are
// designed for and certified jointly.
type releaseFn struct {
	Cfg sanitizeConfig
	opt sanitize.Options
	ro  trace.ReadOptions

	units, points, bundles beam.Counter
}

func (f *releaseFn) Setup() error {
	f.units = beam.NewCounter(metricsNamespace, "units_released")
	f.points = beam.NewCounter(metricsNamespace, "points_released")
	f.bundles = beam.NewCounter(metricsNamespace, "release_bundles")
	var err error
	if f.opt, f.ro, err = f.Cfg.options(); err != nil {
		return stageError("%v", err)
	}
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

func (f *releaseFn) StartBundle(ctx context.Context, _ func(sanitize.UnitRelease), _ func(sanitize.Failure)) {
	f.bundles.Inc(ctx, 1)
}

func (f *releaseFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, b unitBatch, released func(sanitize.UnitRelease), failed func(sanitize.Failure)) error {
	// Results are emitted when the claimed units are done rather than one
	// by one: a runner that sees no output for a while then splits the
	// batch, which is what spreads a few long units over the cores.
	var rels []*sanitize.UnitRelease
	var fails []sanitize.Failure
	r := rt.GetRestriction().(offsetrange.Restriction)
	for i := r.Start; rt.TryClaim(i); i++ {
		u := b.Units[i]
		e, err := sanitize.ReleaseUnit(u, f.opt, f.ro, f.Cfg.Root, f.Cfg.Out)
		if err != nil {
			fails = append(fails, u.Failure(f.Cfg.Root, err))
			continue
		}
		rels = append(rels, e)
		f.units.Inc(ctx, 1)
		f.points.Inc(ctx, int64(u.Points))
	}
	if err := rt.GetError(); err != nil {
		return stageError("release: %v", err)
	}
	for _, e := range rels {
		released(*e)
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

func (f *manifestFn) ProcessElement(_ []byte, files func(*int) bool, ignored func(*string) bool, rels func(*sanitize.UnitRelease) bool, fails func(*sanitize.Failure) bool) error {
	opt, _, err := f.Cfg.options()
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
	m := sanitize.NewManifest(opt, f.Cfg.Root, n, ig)
	var r sanitize.UnitRelease
	for rels(&r) {
		m.Add(&r)
		r = sanitize.UnitRelease{}
	}
	var fl sanitize.Failure
	for fails(&fl) {
		m.Fail(fl)
		fl = sanitize.Failure{}
	}
	m.Finish(time.Since(f.Cfg.Start))
	if err := sanitize.WriteManifest(f.Cfg.Out, m); err != nil {
		return stageError("manifest: %v", err)
	}
	return nil
}

// BuildSanitize adds a corpus release to the pipeline rooted at s: match
// files, scan them (who is in each), group them into units of people
// (one worker), release the units (many), and write the manifest (one
// worker, last). The options must be resolved by the launcher (Sanitize).
func buildSanitize(s beam.Scope, c sanitizeConfig) {
	s = s.Scope("tracepriv.sanitize")
	files, ignored := beam.ParDo2(s, &matchFn{}, beam.Create(s, c.Input))
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
	// Manifest is the manifest the pipeline wrote.
	Manifest *sanitize.Manifest
	// Bundles is the number of bundles the release step ran in, as the
	// runner reported it (0 if it reports no metrics).
	Bundles int64
}

// Sanitize releases a corpus with a Beam pipeline and returns its
// manifest: the same release, files, certificates and manifest (but for
// timings) as the single-machine sanitize.Corpus over the pattern's root,
// and with a seed the same bytes. The options are checked first, as
// sanitize.Corpus checks them. The output directory must not hold a
// release already (a manifest or a resumable single-machine journal):
// releasing the same people twice with fresh noise would weaken their
// protection.
func Sanitize(ctx context.Context, o SanitizeOptions) (*SanitizeResult, error) {
	initBeam()
	start := time.Now()
	c := sanitizeConfig{SanitizeOptions: o, Start: start}
	opt, _, err := c.options()
	if err != nil {
		return nil, err
	}
	if err := sanitize.CheckCorpus(opt); err != nil {
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
	if c.Root, c.Out, err = sanitize.CheckDirs(root, o.Output); err != nil {
		return nil, err
	}
	for _, name := range []string{sanitize.ManifestName, sanitize.JournalName} {
		if fileExists(filepath.Join(c.Out, name)) {
			return nil, &sanitize.ParamError{Name: "out", Value: o.Output, Why: "holds a release already (" + name + "); write a new release to a new directory"}
		}
	}
	if err := os.MkdirAll(filepath.Join(c.Out, sanitize.CertificatesDir), 0o755); err != nil {
		return nil, err
	}
	res, b, err := runAndRead(ctx, func(s beam.Scope) { buildSanitize(s, c) }, filepath.Join(c.Out, sanitize.ManifestName))
	if err != nil {
		return nil, err
	}
	var m sanitize.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return &SanitizeResult{Manifest: &m, Bundles: counter(res, "release_bundles")}, nil
}
