// Command tracepriv-pipeline runs tracepriv's corpus jobs on Apache Beam:
// on the Prism runner in this process by default, on Flink or Spark through
// a portable job server, or on Dataflow.
//
//	tracepriv-pipeline sanitize --input 'GLOB' --output DIR --prior P --epsilon E --lambda L --radius M [--seed N] [--runner prism] [--json]
//	tracepriv-pipeline fit --input 'GLOB' --output PRIOR.json [--family 0.25,0.75] [--runner prism] [--json]
//	tracepriv-pipeline release --input 'GLOB' --output DIR --mechanism prefix|ngram --epsilon E --cell-m M --bbox MINLAT,MINLON,MAXLAT,MAXLON [--max-len L] [--max-seqs K] [--seed N]
//
// sanitize writes the release the single-machine `tracepriv sanitize --in
// DIR --out DIR` writes (mirrored files, certificates/, manifest.json);
// fit writes the prior `tracepriv fit` writes; release writes the
// trajectory database `tracepriv synthesize` writes (trajectories.seq,
// trajectories.csv, release.json). Beam's own flags (--runner,
// --endpoint, --environment_type, --environment_config, --job_name, and
// Dataflow's --project, --region, --temp_location, ...) are accepted after
// the subcommand. See pipeline/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/pipeline"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/server"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-") {
		// Started by a runner as a worker (--worker --id=... ...):
		// beam.Init runs the SDK harness and exits.
		flag.Parse()
		beam.Init()
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: tracepriv-pipeline COMMAND [flags]

commands:
  sanitize    release a corpus with per-person certified privacy (as tracepriv sanitize --in DIR --out DIR)
  fit         fit a prior family over a corpus (as tracepriv fit)
  synthesize  synthesize a trajectory database under user-level DP (as tracepriv synthesize;
              "release", its old name, is accepted with a warning until the next release)

Run "tracepriv-pipeline COMMAND -h" for its flags. Beam's runner flags
(--runner prism|universal|dataflow, --endpoint, --environment_type, ...) are
accepted after the command; see pipeline/README.md.
`

// run is the command: it parses args (a subcommand and its flags), runs the
// pipeline and prints the result, and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "sanitize":
		err = sanitizeCmd(ctx, args[1:], stdout, stderr)
	case "fit":
		err = fitCmd(ctx, args[1:], stdout, stderr)
	case "synthesize", "release":
		if args[0] == "release" {
			fmt.Fprintln(stderr, `tracepriv-pipeline: warning: "release" is now "synthesize" (a synthetic trajectory database); the old name will be removed in the next release`)
		}
		err = synthesizeCmd(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "tracepriv-pipeline: unknown command %q\n%s", args[0], usage)
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "tracepriv-pipeline %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// errUsage is a command-line error already reported by the flag set.
var errUsage = errors.New("usage")

// common are the flags of every command.
type common struct {
	json, verbose bool
	// logger is where the library tells what the launcher does: stderr
	// with --verbose, nowhere otherwise.
	logger *slog.Logger
}

// newFlags returns a flag set for a command with the common flags and
// Beam's: the SDK registers --runner, --endpoint, --environment_type and
// the rest on the global flag set at init time, and they are shared here so
// that setting them on the command line sets Beam's options.
func newFlags(name string, stderr io.Writer, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.json, "json", false, "print the result as JSON")
	fs.BoolVar(&c.verbose, "verbose", false, "show the runner's log on stderr")
	return fs
}

// parse adds Beam's flags to fs and parses args, allowing no arguments.
func parse(fs *flag.FlagSet, args []string, c *common, stderr io.Writer) error {
	ours := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { ours[f.Name] = true })
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !ours[f.Name] && !strings.HasPrefix(f.Name, "test.") {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage of tracepriv-pipeline %s:\n", fs.Name())
		fs.VisitAll(func(f *flag.Flag) {
			if ours[f.Name] {
				fmt.Fprintf(fs.Output(), "  --%s\t%s", f.Name, f.Usage)
				if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
					fmt.Fprintf(fs.Output(), " (default %s)", f.DefValue)
				}
				fmt.Fprintln(fs.Output())
			}
		})
		fmt.Fprintln(fs.Output(), "  and Beam's flags: --runner (prism, universal, dataflow; default prism), --endpoint, --environment_type, --environment_config, --job_name, Dataflow's --project, --region, --temp_location, --staging_location, ...")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracepriv-pipeline %s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return errUsage
	}
	// The command owns its process, and so its logging: Beam and the
	// Prism runner log through slog's default logger, which Beam's
	// log.SetupLogging points at stderr, with their information under
	// --verbose and only their errors otherwise, so that the command's
	// own output stays readable. The library changes no logging.
	level := "error"
	c.logger = nil
	if c.verbose {
		level = "info"
		c.logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	beamlog.SetupLogging(level, "text")
	return nil
}

func sanitizeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		c                   common
		o                   pipeline.SanitizeOptions
		priorFile, origin   string
		eps, lambda, radius float64
		seed                uint64
		batch               int
		design, path        string
		delta               float64
	)
	fs := newFlags("sanitize", stderr, &c)
	fs.StringVar(&o.Input, "input", "", "trace files: a glob ('data/**/*.plt'; ** spans directories), a directory (every trace file under it) or a file")
	fs.StringVar(&o.Output, "output", "", "output directory: the files mirrored under it, certificates/ and manifest.json (the next run with the same options resumes a killed run there: the groups it left whole are kept, the rest released)")
	fs.StringVar(&priorFile, "prior", "", "prior family file (tracepriv fit writes one)")
	fs.Float64Var(&eps, "epsilon", 0, "target epsilon for every secret, per person")
	fs.Float64Var(&lambda, "lambda", 0, "Rényi order lambda > 1")
	fs.Float64Var(&radius, "radius", 0, "radius r in metres within which secret locations are indistinguishable")
	fs.Uint64Var(&seed, "seed", 0, "seeded randomness, derived per person from the seed and uid: reproducible and NOT private (default crypto/rand)")
	fs.StringVar(&origin, "origin", "", "public origin LAT,LON of the tangent plane (default: the prior file's)")
	fs.StringVar(&design, "design", string(sanitize.DesignAuto), "noise designer: auto, envelope, proportional or e3")
	fs.StringVar(&path, "path", string(sanitize.PathAuto), "computation path: auto, dense or linear")
	var method string
	fs.StringVar(&method, "method", "", "the computation path under its name before --path (accepted, with a warning, until the next release)")
	fs.Float64Var(&delta, "delta", sanitize.DefaultDelta, "delta of the prior-posterior gap stated in the certificates")
	fs.BoolVar(&o.PointsOnly, "points-only", false, "protect the points alone, not places and the route (the certificates say they are not covered)")
	fs.BoolVar(&o.AllowPriorOverlap, "allow-prior-overlap", false, "release even when the prior was fitted on data of the input (a fix shared with the prior's corpus index beside it; the certificates then say those persons are not covered)")
	format := readFlags(fs, &o.Reading, "a file with a bad row fails (listed in the manifest) instead of skipping the row")
	fs.IntVar(&batch, "batch-units", pipeline.DefaultBatchUnits, "most groups of people per release element (the runner splits elements further)")
	var (
		ledgerPath, budgetStr string
		noLedger, raise       bool
	)
	fs.StringVar(&ledgerPath, "ledger", "", "per-person budget ledger: a JSON file (default: the user configuration directory's tracepriv/ledger.json), or the database of tracepriv serve, sqlite:PATH (its --data directory or PATH/tracepriv.db) or postgres://..., whose accounts the release then charges (a person the service does not know is refused): each person is charged there before the job runs and refused past their budget (docs/ledger.md)")
	fs.BoolVar(&noLedger, "no-ledger", false, "release without recording the cost in any ledger (the certificates say ledger: off)")
	fs.StringVar(&budgetStr, "budget", "", "set each person's total budget B (Rényi epsilon at the account's order within its radius, CIP and geoind together); once set it is enforced in every later run (a database ledger keeps the budget the service set: a smaller B applies to this run)")
	fs.BoolVar(&raise, "raise-budget", false, "allow --budget above the budget the ledger recorded for a person (the raise is recorded; not with a database ledger)")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	if err := oldPathFlag(fs, &path, method, stderr); err != nil {
		return err
	}
	if err := required(fs, "input", "output", "prior", "epsilon", "lambda", "radius"); err != nil {
		return err
	}
	var err error
	if o.Prior, err = os.ReadFile(priorFile); err != nil {
		return fmt.Errorf("--prior: %w", err)
	}
	// The prior's private corpus index, when it is beside it.
	if o.PriorCorpus, err = os.ReadFile(prior.CorpusIndexPath(priorFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--prior: %w", err)
	}
	o.Epsilon, o.Lambda, o.Radius, o.Delta = eps, lambda, radius, delta
	o.Design, o.Path, o.BatchUnits, o.Logger = cip.Method(design), sanitize.Path(path), batch, c.logger
	if o.Format, err = format(); err != nil {
		return err
	}
	if origin != "" {
		p, err := geo.ParseLatLon(origin)
		if err != nil {
			return fmt.Errorf("--origin: %w", err)
		}
		o.Origin = &p
	}
	o.Seeded, o.Seed = seeded(fs, seed, stderr), seed
	// The budget ledger (budget.Admission), as tracepriv sanitize keeps it.
	switch {
	case noLedger && (ledgerPath != "" || budgetStr != "" || raise):
		return errors.New("--no-ledger contradicts --ledger, --budget and --raise-budget: give one")
	case noLedger:
		o.SanitizeParams.Ledger = budget.Off
	case o.Seeded:
		fmt.Fprintln(stderr, "tracepriv-pipeline: seeded run: NOT private, so not charged to any ledger")
		o.SanitizeParams.Ledger = budget.Seeded
	default:
		// Keyed by the release, so that the next run of it settles what a
		// killed one left pending.
		key, err := o.ReleaseKey()
		if err != nil {
			return flagError(err)
		}
		req := budget.Request{Mechanism: budget.CIP, Lambda: lambda, RadiusM: radius, RaiseBudget: raise,
			Command: "tracepriv-pipeline sanitize", Output: o.Output, Release: key}
		if budgetStr != "" {
			if req.Budget, err = strconv.ParseFloat(budgetStr, 64); err != nil || !(req.Budget > 0) || math.IsInf(req.Budget, 0) {
				return fmt.Errorf("--budget %q: want a positive number", budgetStr)
			}
		}
		// The same store by the same rule as tracepriv sanitize: a ledger
		// file, or the service's database (server.LedgerDB).
		s, name, err := budget.OpenStore(ledgerPath, raise, server.OpenLedgerStore, budget.DefaultLockWait)
		if err != nil {
			return fmt.Errorf("--ledger: %w", err)
		}
		defer s.Close()
		o.SanitizeParams.Ledger = name
		o.Admission, o.Notes = budget.NewAdmission(s, req), stderr
	}
	res, err := pipeline.Sanitize(ctx, o)
	if err != nil {
		return flagError(err)
	}
	m := res.Manifest
	if c.json {
		if err := jsondoc.Write(stdout, m); err != nil {
			return err
		}
	} else if err := res.WriteText(stdout); err != nil {
		return err
	}
	if len(m.Failed) > 0 {
		return fmt.Errorf("%d files or groups of people could not be released (listed in %s/%s); the rest was", len(m.Failed), o.Output, sanitize.ManifestName)
	}
	return nil
}

func fitCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		c      common
		o      pipeline.FitOptions
		family string
	)
	fs := newFlags("fit", stderr, &c)
	fs.StringVar(&o.Input, "input", "", "corpus: a glob ('data/**/*.plt'; ** spans directories), a directory or a file; use other people's traces than those the prior will protect")
	fs.StringVar(&o.Output, "output", "", "prior file to write (JSON)")
	fs.StringVar(&o.Report, "report", "", "also write the fit's report (JSON: windows, skips by reason, quartiles, fits on the bounds), with the prior")
	fs.BoolVar(&o.Force, "force", false, "replace --output and --report if they exist")
	fs.StringVar(&family, "family", fmt.Sprintf("%g,%g", prior.DefaultFamilyLow, prior.DefaultFamilyHigh), "quantiles LO,HI of the per-window lengthscales that bound the prior family (1 - HI for the variance)")
	fs.StringVar(&o.Kernel, "kernel", prior.DefaultKernel, "kernel: rbf, matern32 or matern52")
	fs.DurationVar(&o.MinDuration, "min-duration", prior.DefaultMinDuration, "shortest window")
	fs.DurationVar(&o.MaxDuration, "max-duration", prior.DefaultMaxDuration, "longest window")
	fs.IntVar(&o.MaxPoints, "max-points", prior.DefaultMaxPoints, "most points fitted per window (denser windows are thinned)")
	fs.IntVar(&o.MinPoints, "min-points", prior.DefaultMinPoints, "fewest points fitted per window")
	fs.BoolVar(&o.PaperWindows, "paper-windows", false, "cut as the authors' code: only the first window of each trace")
	format := readFlags(fs, &o.Reading, "stop at the first bad row or unreadable file instead of skipping it")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	if o.Input == "" || o.Output == "" {
		return errors.New("--input and --output are required")
	}
	var err error
	if o.Format, err = format(); err != nil {
		return err
	}
	lo, hi, ok := strings.Cut(family, ",")
	var err1, err2 error
	o.Family[0], err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
	o.Family[1], err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if !ok || err1 != nil || err2 != nil || !(o.Family[0] > 0 && o.Family[0] <= o.Family[1] && o.Family[1] < 1) {
		return fmt.Errorf("--family %s: give two quantiles LO,HI with 0 < LO <= HI < 1, e.g. 0.25,0.75", family)
	}
	if o.MinDuration == 0 {
		o.MinDuration = 1 // no minimum, as tracepriv fit
	}
	o.Logger = c.logger
	res, err := pipeline.Fit(ctx, o)
	if err != nil {
		return err
	}
	if c.json {
		return jsondoc.Write(stdout, res)
	}
	return res.WriteText(stdout)
}

func synthesizeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		c    common
		o    pipeline.SynthesizeOptions
		seed uint64
	)
	fs := newFlags("synthesize", stderr, &c)
	fs.StringVar(&o.Input, "input", "", "trace files: a glob ('data/**/*.plt'; ** spans directories), a directory or a file; a database, so a corpus: one person per child folder of its root (GeoLife's Data folder: per <uid>) or per uid")
	fs.StringVar(&o.Output, "output", "", "output directory for trajectories.seq, trajectories.csv and release.json")
	var mechanism, bbox string
	fs.StringVar(&mechanism, "mechanism", "", "prefix or ngram")
	fs.Float64Var(&o.Epsilon, "epsilon", 0, "privacy budget of each person, spent once")
	fs.Float64Var(&o.CellM, "cell-m", 0, "grid cell size in metres (public)")
	fs.StringVar(&bbox, "bbox", "", "public bounding box MINLAT,MINLON,MAXLAT,MAXLON of the grid (never taken from the data)")
	def := trajdb.DefaultBounds()
	fs.IntVar(&o.MaxLen, "max-len", def.MaxLen, "contribution bound: keep the first L cells of each trajectory")
	fs.IntVar(&o.MaxSeqs, "max-seqs", def.MaxSeqs, "contribution bound: keep each person's first K trajectories")
	fs.IntVar(&o.NMax, "n-max", 0, fmt.Sprintf("n-gram tree height, the longest gram counted (ngram only; default %d)", trajdb.DefaultNMax))
	fs.DurationVar(&o.MaxGap, "max-gap", trajdb.DefaultMaxGap, "split a trace where two fixes are further apart in time (negative: never)")
	fs.IntVar(&o.MinLen, "min-len", 1, "drop trajectories of fewer cells (after collapsing repeats)")
	fs.BoolVar(&o.Force, "force", false, "replace an earlier release in --output")
	fs.Uint64Var(&seed, "seed", 0, "seeded noise: reproducible and NOT private (default crypto/rand)")
	format := readFlags(fs, &o.Reading, "stop at the first bad row or unreadable file instead of skipping it")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	if err := required(fs, "input", "output", "mechanism", "epsilon", "cell-m", "bbox"); err != nil {
		return err
	}
	switch {
	case o.MaxLen < 1:
		return fmt.Errorf("--max-len must be at least 1, got %d", o.MaxLen)
	case o.MaxSeqs < 1:
		return fmt.Errorf("--max-seqs must be at least 1, got %d", o.MaxSeqs)
	case o.MinLen < 1:
		return fmt.Errorf("--min-len must be at least 1, got %d", o.MinLen)
	case o.MaxGap == 0:
		return errors.New("--max-gap 0 would split at every fix; give a duration such as 10m, or -1s to never split")
	}
	o.Mechanism = trajdb.MechanismName(mechanism)
	box, err := trace.ParseBBox(bbox)
	if pe := (*param.Error)(nil); errors.As(err, &pe) {
		return fmt.Errorf("--bbox %q: %s", bbox, pe.Why)
	} else if err != nil {
		return fmt.Errorf("--bbox %q: %w", bbox, err)
	}
	o.BBox = box
	if o.Format, err = format(); err != nil {
		return err
	}
	o.Seeded, o.Seed = seeded(fs, seed, stderr), seed
	o.Logger = c.logger
	res, err := pipeline.Synthesize(ctx, o)
	if err != nil {
		return err
	}
	if c.json {
		return jsondoc.Write(stdout, res)
	}
	return res.WriteText(stdout)
}

// readFlags adds the read flags to fs, setting r, with strict's help
// text; the function it returns parses --from once fs is parsed.
func readFlags(fs *flag.FlagSet, r *pipeline.Reading, strict string) func() (trace.Format, error) {
	var format string
	fs.BoolVar(&r.Strict, "strict", false, strict)
	fs.StringVar(&r.UID, "uid", "", "the one person's uid when the input is not a corpus (default: the input's name, GeoLife's <uid> for Data/<uid>/Trajectory)")
	fs.BoolVar(&r.AsCorpus, "corpus", false, "the input is a corpus: each immediate child folder of the pattern's root is one person (everything below it theirs), or each uid of a file's uid field; without it the whole input is one person (release always reads a corpus)")
	fs.StringVar(&r.TZ, "tz", "", "IANA time zone of PLT local times and zone-less CSV times (default UTC)")
	fs.StringVar(&format, "from", "", "input format: plt, csv, geojson or gpx (default: from each file's extension)")
	return func() (trace.Format, error) {
		if format == "" {
			return "", nil
		}
		f, err := trace.ParseFormat(format)
		if err != nil {
			return "", fmt.Errorf("--from: %w", err)
		}
		return f, nil
	}
}

// oldPathFlag takes --method, the computation path's flag before it was
// --path, into *path with a warning on stderr; giving both is an error
// unless they agree.
func oldPathFlag(fs *flag.FlagSet, path *string, method string, stderr io.Writer) error {
	if !isSet(fs, "method") {
		return nil
	}
	if isSet(fs, "path") && *path != method {
		return fmt.Errorf("--method %s and --path %s: --method is the old name of --path; give --path alone", method, *path)
	}
	*path = method
	fmt.Fprintf(stderr, "tracepriv-pipeline: warning: --method is now --path (the computation path: auto, dense or linear); --method will be removed in the next release\n")
	return nil
}

// seeded reports whether --seed was given, warning on stderr that the
// output is then not private.
func seeded(fs *flag.FlagSet, seed uint64, stderr io.Writer) bool {
	if !isSet(fs, "seed") {
		return false
	}
	fmt.Fprintf(stderr, "tracepriv-pipeline: warning: using seeded randomness (--seed %d); output is reproducible and NOT private\n", seed)
	return true
}

// required reports the first of the flags names that was not given.
func required(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if !isSet(fs, name) {
			return fmt.Errorf("--%s is required", name)
		}
	}
	return nil
}

// isSet reports whether the flag name was given.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// flagError rewrites a param.Error to name the command-line flag.
func flagError(err error) error {
	fe, _ := param.AsFlag(err, map[string]string{"out": "output", "in": "input"})
	return fe
}
