package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/trace"
)

// usagef is an error of the command line (a flag's value, a missing or
// contradictory flag): --json gives it the code invalid_flag.
func usagef(format string, a ...any) error {
	return &FlagError{Err: fmt.Errorf(format, a...)}
}

// ReadFlags are the input flags of every command that reads traces: the
// format, the user id, the time zone, and the dirty-input policy of
// package trace (lenient by default: rows are repaired or skipped and
// reported; --strict stops at the first bad row). A command adds them with
// Add, reads with Read or ReadEach, prints what was skipped with
// Env.ReportSkipped and puts rep.Summary() in its --json output.
type ReadFlags struct {
	From, UID, TZ   string
	Lenient, Strict bool
	// Corpus is --corpus, for the commands that register it (AddCorpus):
	// who the persons are (trace.PersonRule).
	Corpus bool
}

// AddCorpus registers --corpus on f: without it every --in is one person
// (trace.PersonRule), with it a corpus; more says what the command does
// with the persons.
func (r *ReadFlags) AddCorpus(f *pflag.FlagSet, more string) {
	help := "--in is a corpus: each immediate child folder is one person (everything below it theirs), or each uid of a file's uid field; without it --in is one person, whatever its folders or uids (docs/input.md)"
	if more != "" {
		help += "; " + more
	}
	f.BoolVar(&r.Corpus, "corpus", false, help)
}

// Add registers --from, --uid, --tz, --lenient and --strict on cmd.
func (r *ReadFlags) Add(cmd *cobra.Command) {
	r.AddTo(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("lenient", "strict")
}

// AddTo registers the flags on a flag set (Base checks that --lenient and
// --strict are not both given).
func (r *ReadFlags) AddTo(f *pflag.FlagSet) {
	f.StringVar(&r.From, "from", "", "input format: plt, csv, geojson or gpx (default: from each file's extension)")
	f.BoolVar(&r.Lenient, "lenient", false, "repair or skip dirty rows and report them (the default; kept for scripts)")
	f.BoolVar(&r.Strict, "strict", false, "stop at the first row that would be skipped (see docs/input.md)")
	f.StringVar(&r.UID, "uid", "", "the one person's uid: every trace of --in is this person (default: a directory's name, GeoLife's <uid> for Data/<uid>/Trajectory; a file's one data uid, else its GeoLife user or folder, else its name; see docs/input.md)")
	f.StringVar(&r.TZ, "tz", "", "IANA time zone of PLT local times and zone-less CSV times (default UTC)")
}

// Format parses --from: the empty format when it is not given.
func (r *ReadFlags) Format() (trace.Format, error) {
	if r.From == "" {
		return "", nil
	}
	f, err := trace.ParseFormat(r.From)
	if err != nil {
		return "", fmt.Errorf("--from: %w", err)
	}
	return f, nil
}

// Base returns the read options common to every file.
func (r *ReadFlags) Base() (trace.ReadOptions, error) {
	opt := trace.ReadOptions{UID: r.UID, Strict: r.Strict, Corpus: r.Corpus}
	if r.Corpus && r.UID != "" {
		return opt, usagef("--uid names the one person of an input that is not a corpus; with --corpus each child folder or uid is a person: give one of them")
	}
	if r.Lenient && r.Strict {
		return opt, usagef("--lenient and --strict: give one (lenient is the default)")
	}
	var err error
	if opt.Format, err = r.Format(); err != nil {
		return opt, err
	}
	if r.TZ != "" {
		loc, err := time.LoadLocation(r.TZ)
		if err != nil {
			return opt, usagef("--tz %q: not an IANA time zone (e.g. Asia/Shanghai, UTC)", r.TZ)
		}
		opt.Location = loc
	}
	return opt, nil
}

// Options resolves the flags for reading the file at path, with its format.
func (r *ReadFlags) Options(path string) (trace.ReadOptions, error) {
	opt, err := r.Base()
	if err != nil {
		return opt, err
	}
	if opt.Format == "" {
		if opt.Format, err = trace.FormatFromPath(path); err != nil {
			return opt, withFromHint(path, err)
		}
	}
	return opt, nil
}

// withFromHint adds how to name a format to an error about a file's
// extension (a directory has none to name).
func withFromHint(path string, err error) error {
	if st, serr := os.Stat(path); serr == nil && st.IsDir() {
		return err
	}
	return fmt.Errorf("%w; or name the format with --from", err)
}

// Read reads the traces of paths: trace files, or directories searched
// recursively for .plt, .csv, .geojson, .json and .gpx files. See
// ReadEach.
func (r *ReadFlags) Read(paths ...string) ([]*trace.Trace, *trace.Report, error) {
	var out []*trace.Trace
	rep, err := r.ReadEach(paths, func(_ string, ts []*trace.Trace) { out = append(out, ts...) })
	return out, rep, err
}

// ReadEach reads paths as Read does, handing each file's traces to fn. A
// file that cannot be read at all stops the command when it is the only
// one or with --strict; otherwise it is skipped and listed in the report,
// so that a run over a corpus never stops on one bad file. Reading nothing
// at all is an error. Errors name the file, line and field, and say how to
// go on.
func (r *ReadFlags) ReadEach(paths []string, fn func(path string, ts []*trace.Trace)) (*trace.Report, error) {
	opt, err := r.Base()
	if err != nil {
		return &trace.Report{}, err
	}
	if len(paths) == 0 {
		return &trace.Report{}, errors.New("no input given")
	}
	files, _, err := trace.Files(paths...)
	if err != nil {
		return &trace.Report{}, err
	}
	if opt.Format == "" {
		// A file named on the command line must tell its format; files
		// found in directories do by construction.
		for _, p := range paths {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				if _, err := trace.FormatFromPath(p); err != nil {
					return &trace.Report{}, withFromHint(p, err)
				}
			}
		}
	}
	// One person rule everywhere (trace.PersonRule): each path is one
	// person unless --corpus.
	_, rep, err := trace.ReadPaths(paths, opt, fn)
	nfiles := len(files)
	switch {
	case err != nil:
		return rep, trace.StrictHint(err, nfiles)
	case nfiles == 1 && len(rep.SkippedFiles) == 1:
		return rep, rep.SkippedFiles[0].Err
	case rep.Traces == 0 && len(rep.SkippedFiles) == nfiles:
		return rep, fmt.Errorf("no traces read: all %d files were unreadable, e.g. %v", nfiles, rep.SkippedFiles[0].Err)
	case rep.Traces == 0:
		return rep, trace.NothingRead(paths, rep)
	}
	return rep, nil
}

// maxShown is how many examples a note on stderr gives.
const maxShown = 3

// ReportSkipped prints on stderr what the readers skipped or merged
// (trace.Report.WriteText). It prints nothing when nothing was skipped,
// and nothing with --quiet (--json output carries the counts).
func (e *Env) ReportSkipped(rep *trace.Report) {
	if e.Quiet || rep == nil {
		return
	}
	rep.WriteText(Notes{e.Stderr})
}

// WriteMerged warns on stderr, unless --quiet, that uids of the data were
// released as part of another person by the person rule
// (trace.WriteMerges).
func (e *Env) WriteMerged(merged []trace.Merge) {
	if !e.Quiet {
		trace.WriteMerges(Notes{e.Stderr}, merged)
	}
}

// Notes writes the library's notes (trace.Report.WriteText,
// budget.File.WriteCharges) on stderr as the command's: a statement
// starts with "tracepriv: ", its indented details do not. Each Write is
// one statement or detail (one fmt.Fprintf).
type Notes struct{ W io.Writer }

func (n Notes) Write(b []byte) (int, error) {
	if len(b) > 0 && b[0] != ' ' {
		if _, err := io.WriteString(n.W, "tracepriv: "); err != nil {
			return 0, err
		}
	}
	return n.W.Write(b)
}

// HintCorpus warns, for each directory of ins read as one person, that
// holds several child folders of trace files, that --corpus would make
// each a person; with --corpus, for each person's folder holding several
// GeoLife users (GeoLife's Data given as a child folder), that the folder
// itself as the corpus makes each user a person (nothing with --quiet).
func (e *Env) HintCorpus(rf *ReadFlags, ins ...string) {
	if e.Quiet {
		return
	}
	for _, in := range ins {
		if st, err := os.Stat(in); err != nil || !st.IsDir() {
			continue
		}
		files, _, err := trace.Files(in)
		if err != nil {
			continue
		}
		if rf.Corpus {
			for _, child := range trace.ChildFolders(in, files) {
				dir := filepath.Join(in, child)
				if users := trace.GeoLifeUsers(dir, files); len(users) > 1 {
					arg := dir
					if strings.ContainsAny(arg, " \t'\"\\$`*?;&|<>()") {
						arg = strconv.Quote(arg)
					}
					fmt.Fprintf(e.Stderr, "tracepriv: input: %s holds GeoLife's layout of %d users (%s), read as one person, %q; to make each user a person, give --in %s --corpus (docs/input.md)\n",
						dir, len(users), shortList(users), child, arg)
				}
			}
			continue
		}
		if dirs := trace.ChildFolders(in, files); len(dirs) > 1 {
			fmt.Fprintf(e.Stderr, "tracepriv: input: %s is read as one person, %q, with its %d folders (%s); if they are different people, give --corpus to make each folder a person (docs/input.md)\n",
				in, trace.InputName(in), len(dirs), shortList(dirs))
		}
	}
}

// shortList is names joined, at most maxShown of them.
func shortList(names []string) string {
	s := strings.Join(names[:min(len(names), maxShown)], ", ")
	if len(names) > maxShown {
		s += ", ..."
	}
	return s
}

// ReportPersons prints on stderr who the persons of a release are, with
// their files and points, before anything is drawn (nothing with
// --quiet; --json output and manifests list them).
func (e *Env) ReportPersons(persons []trace.PersonCount) {
	if e.Quiet {
		return
	}
	word := "persons"
	if len(persons) == 1 {
		word = "person"
	}
	fmt.Fprintf(e.Stderr, "tracepriv: %d %s (each released and certified as one):\n", len(persons), word)
	for _, p := range persons {
		fmt.Fprintf(e.Stderr, "  %q: %d files, %d points\n", p.UID, p.Files, p.Points)
	}
}

// LimitFlags are the thresholds of the plausibility checks (inspect) and
// filters (convert), in the units people use: km/h and a duration.
type LimitFlags struct {
	MaxSpeedKmh float64
	MaxGap      time.Duration
}

// Add registers --max-speed and --max-gap on cmd.
func (l *LimitFlags) Add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&l.MaxSpeedKmh, "max-speed", 3.6*trace.DefaultMaxSpeed, "speed jump threshold in km/h: a step faster than this is implausible (raise it for flights)")
	f.DurationVar(&l.MaxGap, "max-gap", trace.DefaultMaxGap, "gap threshold: a longer interval between fixes is a gap")
}

// Limits returns the thresholds, naming the flag of a bad value.
func (l *LimitFlags) Limits() (trace.Limits, error) {
	if !(l.MaxSpeedKmh > 0) || math.IsInf(l.MaxSpeedKmh, 0) {
		return trace.Limits{}, usagef("--max-speed %v: want a speed in km/h above 0, e.g. --max-speed 300", l.MaxSpeedKmh)
	}
	if l.MaxGap <= 0 {
		return trace.Limits{}, usagef("--max-gap %v: want a positive duration, e.g. --max-gap 10m", l.MaxGap)
	}
	return trace.Limits{MaxSpeed: l.MaxSpeedKmh / 3.6, MaxGap: l.MaxGap}, nil
}
