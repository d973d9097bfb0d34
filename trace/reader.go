package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// Reader reads traces one at a time, in the shape of encoding/csv: Next
// returns the next trace, and io.EOF once the input is exhausted. One file
// may hold several traces.
//
// By default a reader repairs what it can and skips what it cannot, by the
// rules of Reason, and accounts for every row in Report: exact repeats of
// a fix are merged, rows with a repeated or backward time, bad coordinates
// or malformed fields are skipped, and so is a last row cut off by a
// truncated file. With ReadOptions.Strict the first such row (anything but
// an exact repeat) ends reading with a *ParseError instead.
type Reader interface {
	Next() (*Trace, error)
	// Report accounts for what has been read so far.
	Report() *Report
}

// ReadOptions configures a Reader. The zero value reads leniently: dirty
// rows are repaired or skipped and reported (see Reason).
type ReadOptions struct {
	// Name is the file name used in errors.
	Name string
	// UID is the user id of traces whose data does not carry one (PLT,
	// GPX without a tracepriv uid, CSV without a uid column); ReadFile
	// otherwise takes the person of the file's folder (UserDir).
	UID string
	// Strict makes the first row that would be skipped an error (a
	// *ParseError naming file, line and field). Exact repeats of a fix are
	// merged in both modes.
	Strict bool
	// Location is the time zone of times written without one (PLT's local
	// date and time columns, zone-less CSV times). Nil means UTC.
	Location *time.Location
	// Format overrides the format ReadFile infers from the extension.
	Format Format
	// Chunk, if positive, caps the points of a trace returned by a CSV
	// reader's Next: a longer run of rows of one uid comes back as
	// consecutive traces of that uid, of Chunk points each but the last, so
	// that a caller can stream a file of any size. The policy's checks
	// (repeated or backwards times) still apply across the split. Other
	// formats ignore it.
	Chunk int
	// Root, if set, is the input the file was found under (a directory,
	// or the file itself): ReadFile then gives every trace its person by
	// the one person rule, PersonRule{Corpus, UID}.Of(Root), so that a
	// person's subfolders stay that person's and a directory is one person
	// unless declared a corpus. ReadPaths sets it to each path it reads.
	// NewReader ignores it.
	Root string
	// Corpus declares Root a corpus (PersonRule.Corpus): each immediate
	// child folder, or each value of a file's uid field, is one person.
	// Without Root it has no effect.
	Corpus bool
}

func (o ReadOptions) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

// NewReader returns a Reader of format f over r. PLT and CSV are read line
// by line and GPX token by token; GeoJSON is decoded as one document.
//
// An input whose rows were all skipped (lenient mode) ends with a
// *ParseError wrapping ErrNoFix rather than with io.EOF: it holds no
// trace, and is most likely not a file of format f at all.
func NewReader(r io.Reader, f Format, opt ReadOptions) (Reader, error) {
	b := &builder{opt: opt, rep: &Report{}}
	var rd Reader
	switch f {
	case PLT:
		rd = newPLTReader(r, b)
	case CSV:
		rd = newCSVReader(r, b)
	case GeoJSON:
		rd = newGeoJSONReader(r, b)
	case GPX:
		rd = newGPXReader(r, b)
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownFormat, f)
	}
	return &someFix{Reader: rd, b: b}, nil
}

// someFix refuses, at the end of the input, an input whose rows were all
// skipped: reading it gave nothing but problems.
type someFix struct {
	Reader
	b    *builder
	done bool
}

func (s *someFix) Next() (*Trace, error) {
	t, err := s.Reader.Next()
	if err == io.EOF && !s.done {
		s.done = true
		if rep := s.b.rep; rep.Read == 0 && rep.Skipped > 0 && len(rep.Problems) > 0 {
			first := rep.Problems[0]
			return nil, s.b.fail(first.Line, "", "", fmt.Errorf("%w: all %d of its rows were skipped, so it holds no trace; the first: %v",
				ErrNoFix, rep.Skipped, first))
		}
	}
	return t, err
}

// ReadAll reads every trace from r.
func ReadAll(r Reader) ([]*Trace, error) {
	var out []*Trace
	for {
		t, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
}

// ReadFile reads every trace in the file at path, in the format given by
// opt.Format or else by the extension. Traces are named after the file
// (its name without extension; Trace.Name). With opt.Root set (the input
// the file was found under, a directory or the file itself), every trace
// gets its person by the one person rule, PersonRule{opt.Corpus,
// opt.UID}.Of(opt.Root), and the uids it merged are in Report.Merged; a
// file the rule gives no person is an error wrapping ErrNoPerson.
// Without Root, ReadFile reads the file's data as it is: traces whose
// data carries no user id take opt.UID or else the file's GeoLife user
// folder (".../000/Trajectory/x.plt") or the folder holding it
// (".../000/x.csv" gives "000"), UserDir. A trace that still has no user
// id (a file in the current directory, named without a folder) is the
// person named after the file, FileUID(path), and the report lists the
// file in UIDFromFile so that the caller can say so. On error the report
// still describes what was read.
func ReadFile(path string, opt ReadOptions) ([]*Trace, *Report, error) {
	rep := &Report{Files: 1}
	if st, err := os.Stat(path); err != nil {
		return nil, rep, fileError(path, err)
	} else if st.IsDir() {
		return nil, rep, fmt.Errorf("%s is a directory, not a trace file (give a .plt, .csv, .geojson or .gpx file)", path)
	}
	f := opt.Format
	if f == "" {
		var err error
		if f, err = FormatFromPath(path); err != nil {
			return nil, rep, err
		}
	}
	if opt.Name == "" {
		opt.Name = path
	}
	var persons *Persons
	if opt.Root != "" {
		var err error
		if persons, err = (PersonRule{Corpus: opt.Corpus, UID: opt.UID}).Of(opt.Root); err != nil {
			return nil, rep, err
		}
		// The rule sees the data's own uids.
		opt.UID = ""
	} else if opt.UID == "" {
		opt.UID = UserDir(path)
	}
	fh, err := infile.Open(path)
	if err != nil {
		return nil, rep, fileError(path, err)
	}
	defer fh.Close()
	r, err := NewReader(fh, f, opt)
	if err != nil {
		return nil, rep, err
	}
	traces, err := ReadAll(r)
	rep = r.Report()
	rep.Files = 1
	if err != nil {
		return nil, rep, err
	}
	base := TrimGz(path)
	name := strings.TrimSuffix(filepath.Base(base), filepath.Ext(base))
	uid := FileUID(path)
	if persons != nil {
		noUID := !slices.ContainsFunc(traces, func(t *Trace) bool { return t.UID != "" })
		merged, err := persons.Assign(path, traces)
		if err != nil {
			return nil, rep, err
		}
		rep.Merged = merged
		if noUID && len(traces) > 0 && !persons.dir && persons.rule.UID == "" && UserDir(path) == "" {
			rep.UIDFromFile = []FilePerson{{File: path, UID: traces[0].UID}}
		}
	}
	for _, t := range traces {
		t.Name = name
		if t.UID == "" {
			t.UID = uid
			if len(rep.UIDFromFile) == 0 {
				rep.UIDFromFile = []FilePerson{{File: path, UID: uid}}
			}
		}
	}
	return traces, rep, nil
}

// FileUID is the user id ReadFile gives the traces of the file at path
// when neither their data nor the file's directory names a person: the
// file's name without its extension (the whole name if that is empty).
func FileUID(path string) string {
	base := filepath.Base(TrimGz(path))
	if s := strings.TrimSuffix(base, filepath.Ext(base)); s != "" {
		return s
	}
	return base
}

// fileError words an error opening path, keeping it for errors.Is.
func fileError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return infile.Worded(err, "%s: no such file (check the path)", path)
	case errors.Is(err, fs.ErrPermission):
		return infile.Worded(err, "%s: permission denied (the file must be readable)", path)
	}
	return err
}

// Extensions are the file extensions of trace files, as FormatFromPath
// reads them.
var Extensions = []string{".plt", ".csv", ".geojson", ".json", ".gpx"}

// Files expands paths into trace files: a file is kept whatever its name
// (its format is checked when it is read); a directory is searched
// recursively for files with a trace extension (any case, and also with
// ".gz" after it: files are decompressed by content), its other
// files being returned as ignored. A .json file found in a directory is
// taken only if it looks like GeoJSON (a "Feature" in its first 64 KiB),
// so that certificates, priors and other JSON beside the traces are
// ignored rather than reported as broken traces. Files come in the order
// of paths, each directory's sorted. A path that does not exist, or a
// directory without trace files, is an error.
//
// Symbolic links are followed, to directories as to files, and a link is
// read as if what it points to were where the link is: its files keep the
// link's path, so that UserDir names a person the same way through a
// link as through a copy (a directory of links to people's folders is a
// corpus of those people). A link to a directory that contains it (a
// cycle) is an error, and so is one file reached twice through links (its
// fixes would be read twice, perhaps as two people).
func Files(paths ...string) (files, ignored []string, err error) {
	for _, in := range paths {
		st, err := os.Stat(in)
		if err != nil {
			return nil, nil, fileError(in, err)
		}
		if !st.IsDir() {
			files = append(files, in)
			continue
		}
		w, err := newWalker(in)
		if err != nil {
			return nil, nil, err
		}
		if err := w.dir(in, w.realRoot); err != nil {
			return nil, nil, err
		}
		if len(w.found) == 0 {
			return nil, nil, infile.Worded(ErrNoTraceFiles, "%s: no trace files (%s) in this directory", in, strings.Join(Extensions, ", "))
		}
		slices.Sort(w.found)
		files = append(files, w.found...)
		ignored = append(ignored, w.ignored...)
	}
	return files, ignored, nil
}

// walker searches one directory for trace files, following symbolic
// links. Paths it returns are logical (under the directory as given);
// real paths (symbolic links resolved) find cycles and files seen twice.
type walker struct {
	realRoot       string
	stack          []string          // real paths of the directories being walked
	seen           map[string]string // real path of each file found -> its logical path
	found, ignored []string
}

func newWalker(root string) (*walker, error) {
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fileError(root, err)
	}
	return &walker{realRoot: abs, seen: map[string]string{}}, nil
}

// dir walks the directory at the logical path dir, whose real path is
// real.
func (w *walker) dir(dir, real string) error {
	for _, anc := range w.stack {
		if anc == real || strings.HasPrefix(anc, real+string(filepath.Separator)) || real == string(filepath.Separator) {
			return fmt.Errorf("%s: a symbolic link cycle: it leads to %s, which contains it (remove the link, or give the directory it points to instead)", dir, real)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fileError(dir, err)
	}
	w.stack = append(w.stack, real)
	defer func() { w.stack = w.stack[:len(w.stack)-1] }()
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		realPath := filepath.Join(real, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			// A broken link is kept as a file, so that reading it says so.
			if st, err := os.Stat(path); err == nil {
				isDir = st.IsDir()
				if realPath, err = filepath.EvalSymlinks(path); err != nil {
					return fileError(path, err)
				}
				if realPath, err = filepath.Abs(realPath); err != nil {
					return fileError(path, err)
				}
			}
		}
		if isDir {
			if err := w.dir(path, realPath); err != nil {
				return err
			}
			continue
		}
		ext := strings.ToLower(filepath.Ext(TrimGz(path)))
		if !slices.Contains(Extensions, ext) || (ext == ".json" && !looksGeoJSON(path)) {
			w.ignored = append(w.ignored, path)
			continue
		}
		if first, ok := w.seen[realPath]; ok {
			return fmt.Errorf("%s and %s are the same file (through a symbolic link), so its fixes would be read twice: remove one of the links", first, path)
		}
		w.seen[realPath] = path
		w.found = append(w.found, path)
	}
	return nil
}

// looksGeoJSON reports whether the file at path mentions a GeoJSON Feature
// near its start.
func looksGeoJSON(path string) bool {
	f, err := infile.Open(path)
	if err != nil {
		return true // let reading report the error
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(`"Feature`))
}

// ReadPaths reads the trace files of paths (files, or directories searched
// by Files) with ReadFiles and opt, each path's files with opt.Root set to
// that path, so that every path is an input of the one person rule
// (PersonRule): one person unless opt.Corpus declares it a corpus. It
// returns the number of files found and the sum of the reports.
//
// A corpus's persons are known only when every file is read (one uid
// found in two folders is one person, JoinPersons), so with opt.Corpus,
// when its files may join persons (mayJoin: a file that can carry uids,
// or a GeoLife <uid>/Trajectory folder inside another person's), ReadPaths
// holds every file's traces and hands them to fn, persons joined and the
// joins in Report.Merged, once all are read; otherwise it streams.
func ReadPaths(paths []string, opt ReadOptions, fn func(path string, traces []*Trace)) (int, *Report, error) {
	if !opt.Corpus || !mayJoin(paths, opt) {
		return readPaths(paths, opt, fn)
	}
	var read []fileTraces
	n, rep, err := readPaths(paths, opt, func(path string, traces []*Trace) {
		read = append(read, fileTraces{path, traces})
	})
	if err != nil {
		return n, rep, err
	}
	rep.Merged = append(rep.Merged, joinRead(read, rep.Merged)...)
	if fn != nil {
		for _, r := range read {
			fn(r.path, r.traces)
		}
	}
	return n, rep, nil
}

// mayJoin reports whether JoinPersons could join persons of the corpora
// paths, from the files' names alone: a file whose format can carry uids
// (CSV, GeoJSON), or a file in a GeoLife <uid>/Trajectory folder whose
// uid is not the corpus's child folder holding it. A GeoLife Data folder
// of PLT files streams.
func mayJoin(paths []string, opt ReadOptions) bool {
	if opt.Format == CSV || opt.Format == GeoJSON {
		return true
	}
	for _, p := range paths {
		files, _, err := Files(p)
		if err != nil {
			return true // let reading report it
		}
		for _, f := range files {
			if opt.Format == "" {
				if ff, err := FormatFromPath(f); err != nil || ff == CSV || ff == GeoJSON {
					return true
				}
			}
			dir := filepath.Dir(f)
			if filepath.Base(dir) != GeoLifeTrajectoryDir {
				continue
			}
			rel, err := filepath.Rel(p, f)
			if err != nil {
				return true
			}
			if child, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); child != filepath.Base(filepath.Dir(dir)) {
				return true
			}
		}
	}
	return false
}

func readPaths(paths []string, opt ReadOptions, fn func(path string, traces []*Trace)) (int, *Report, error) {
	total := &Report{}
	n := 0
	for _, p := range paths {
		files, _, err := Files(p)
		if err != nil {
			return n, total, err
		}
		n += len(files)
		o := opt
		if o.Root == "" {
			o.Root = p
		}
		rep, err := ReadFiles(files, o, fn)
		total.Add(rep)
		if err != nil {
			return n, total, err
		}
	}
	return n, total, nil
}

// ReadFiles reads each of files with ReadFile and hands its traces to fn
// (which may be nil), returning the sum of the reports. A run over a
// corpus does not stop on one bad file: in lenient mode (the default) a
// file that cannot be read at all is listed in Report.SkippedFiles and
// the others are read; with opt.Strict the first error is returned. A nil
// error with no traces at all is possible (every file skipped): check
// Report.Traces.
func ReadFiles(files []string, opt ReadOptions, fn func(path string, traces []*Trace)) (*Report, error) {
	total := &Report{}
	for _, f := range files {
		o := opt
		o.Name = ""
		ts, rep, err := ReadFile(f, o)
		if err != nil {
			if opt.Strict {
				total.Add(rep)
				return total, err
			}
			total.Files++
			total.SkippedFiles = append(total.SkippedFiles, FileError{File: f, Err: err})
			continue
		}
		total.Add(rep)
		if fn != nil {
			fn(f, ts)
		}
	}
	return total, nil
}

// GeoLifeTrajectoryDir is the directory GeoLife keeps a user's files in:
// "<user>/Trajectory/<file>".
const GeoLifeTrajectoryDir = "Trajectory"

// UserDir returns the user named by the directory holding a trace file,
// without a corpus root (the name PersonRule gives a lone file without a
// uid in its data): GeoLife's layout,
// "<user>/Trajectory/<file>" (at any depth below Trajectory) or
// "<user>/<file>" ("" for a file in the current or root directory).
// Paths are taken as given, symbolic links unresolved, as Files lists
// them: a link to a person's folder names the person by the link's name.
func UserDir(path string) string {
	valid := func(s string) string {
		if s == "." || s == string(filepath.Separator) || s == "" || s == ".." {
			return ""
		}
		return s
	}
	dirs := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")
	for j := len(dirs) - 1; j >= 1; j-- {
		if dirs[j] == GeoLifeTrajectoryDir {
			return valid(dirs[j-1])
		}
	}
	return valid(filepath.Base(filepath.Dir(path)))
}

// builder is the bookkeeping every reader shares: the dirty-input policy
// (strict or lenient), merging exact repeats, and the report.
type builder struct {
	opt      ReadOptions
	rep      *Report
	prevLine int // line of the last point added to the current trace
	// carry is the last point of a trace split by ReadOptions.Chunk: the
	// next point of the same run is checked against it.
	carry *Point
}

// fail builds a ParseError for the current file.
func (b *builder) fail(line int, field, value string, err error) *ParseError {
	return &ParseError{File: b.opt.Name, Line: line, Field: field, Value: value, Err: err}
}

// failCoord builds the ParseError of a latitude or longitude that did not
// parse: a bad coordinate when it is a number out of range or not finite,
// a malformed row otherwise.
func (b *builder) failCoord(line int, field, value string, err error) *ParseError {
	e := b.fail(line, field, value, err)
	if errors.Is(err, ErrOutOfRange) || errors.Is(err, ErrNotFinite) {
		e.reason = ReasonBadCoordinate
	}
	return e
}

// bad handles a bad record covering n rows: it returns e in strict mode,
// or records it and returns nil in lenient mode.
func (b *builder) bad(e *ParseError, n int) error {
	if b.opt.Strict {
		e.row = true
		return e
	}
	b.rep.record(e, n)
	return nil
}

// cut marks e as the last row of a file cut mid-row: the row is lost
// whether or not it parsed.
func (b *builder) cut(line int, e *ParseError) *ParseError {
	const why = "the last row has no line end, so the file may have been cut in the middle of it"
	if e == nil {
		e = b.fail(line, "", "", fmt.Errorf("%w: %s (if the row is complete, end the file with a line break)", ErrTruncated, why))
	} else {
		e.Err = fmt.Errorf("%w; %w: %s", e.Err, ErrTruncated, why)
	}
	e.reason = ReasonTruncated
	return e
}

// add appends p (read at line; rawTime is its time as written) to t. An
// exact repeat of the previous point is merged into it; a point at the
// previous point's time elsewhere, or before it, is a bad record.
func (b *builder) add(t *Trace, p Point, line int, rawTime string) error {
	last := b.carry
	if n := len(t.Points); n > 0 {
		last = &t.Points[n-1]
	}
	if last != nil {
		switch c := p.Time.Compare(last.Time); {
		case c == 0 && samePoint(*last, p):
			b.rep.record(b.fail(line, "", "", fmt.Errorf("%w (line %d)", ErrDuplicate, b.prevLine)), 1)
			return nil
		case c == 0:
			return b.bad(b.fail(line, "time", rawTime,
				fmt.Errorf("%w (line %d)", ErrTimeConflict, b.prevLine)), 1)
		case c < 0:
			return b.bad(b.fail(line, "time", rawTime,
				fmt.Errorf("%w (line %d, %s)", ErrTimeBackward, b.prevLine, last.Time.Format(time.RFC3339Nano))), 1)
		}
	}
	t.Points = append(t.Points, p)
	b.carry = nil
	b.prevLine = line
	b.rep.Read++
	return nil
}

// emit counts a finished trace.
func (b *builder) emit(t *Trace) *Trace {
	b.rep.Traces++
	return t
}

// samePoint reports whether a and b are identical (NaN altitudes match).
func samePoint(a, b Point) bool {
	return a.Time.Equal(b.Time) && a.Lat == b.Lat && a.Lon == b.Lon &&
		(a.Alt == b.Alt || math.IsNaN(a.Alt) && math.IsNaN(b.Alt)) &&
		maps.Equal(a.Attrs, b.Attrs)
}

// parseNumber parses a finite decimal number.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, ErrNotNumber
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, ErrNotFinite
	}
	return v, nil
}

// parseCoord parses a latitude (limit 90) or longitude (limit 180).
func parseCoord(s string, limit float64) (float64, error) {
	if s == "" {
		return 0, ErrMissing
	}
	v, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	if v < -limit || v > limit {
		return 0, fmt.Errorf("%w [%g, %g]", ErrOutOfRange, -limit, limit)
	}
	return v, nil
}

// parseAlt parses an altitude in metres; empty means unknown (NaN).
func parseAlt(s string) (float64, error) {
	if s == "" {
		return math.NaN(), nil
	}
	return parseNumber(s)
}

// zonelessLayouts are accepted after RFC 3339, in loc.
var zonelessLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
}

// parseTime parses an RFC 3339 time (a space may replace the T; a time
// without a zone is in loc) or Unix seconds, integer or fractional, to the
// nanosecond.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, ErrMissing
	}
	t, err := parseAnyTime(s, loc)
	if err != nil {
		return t, err
	}
	return t, checkYear(t)
}

func parseAnyTime(s string, loc *time.Location) (time.Time, error) {
	if t, ok := parseUnix(s); ok {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if len(s) > 10 && s[10] == ' ' {
		if t, err := time.Parse(time.RFC3339Nano, s[:10]+"T"+s[11:]); err == nil {
			return t, nil
		}
	}
	for _, l := range zonelessLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, ErrBadTime
}

// checkYear keeps times within the four-digit years every format (and
// RFC 3339) can write.
func checkYear(t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%w (years 0001 to 9999 in UTC)", ErrOutOfRange)
	}
	return nil
}

// parseUnix parses [-]digits[.digits] as Unix seconds exactly (no float
// rounding), truncating beyond nanoseconds.
func parseUnix(s string) (time.Time, bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	ip, fp, hasDot := strings.Cut(body, ".")
	if ip == "" || len(ip) > 12 || !allDigits(ip) || (hasDot && (fp == "" || !allDigits(fp))) {
		return time.Time{}, false
	}
	sec, _ := strconv.ParseInt(ip, 10, 64)
	var ns int64
	if fp != "" {
		fp = (fp + "000000000")[:9]
		ns, _ = strconv.ParseInt(fp, 10, 64)
	}
	if neg {
		sec, ns = -sec, -ns
	}
	return time.Unix(sec, ns).UTC(), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lineScanner reads lines, stripping "\r\n", with a bound on line length.
// It notes whether the last line it returned had a line end.
type lineScanner struct {
	sc   *bufio.Scanner
	line int
	// unterminated is set when the line just returned ended the input
	// without a line end.
	unterminated bool
}

const maxLine = 1 << 20

func newLineScanner(r io.Reader) *lineScanner {
	s := &lineScanner{sc: bufio.NewScanner(r)}
	s.sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	s.sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		s.unterminated = atEOF && tok != nil && adv == len(data) && data[len(data)-1] != '\n'
		return adv, tok, err
	})
	return s
}

// next returns the next line, or ok=false at the end; err is set if the
// input could not be read.
func (s *lineScanner) next() (text string, ok bool, err error) {
	if !s.sc.Scan() {
		err := s.sc.Err()
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("%w: line longer than %d bytes", ErrMalformed, maxLine)
		}
		return "", false, err
	}
	s.line++
	return strings.TrimSuffix(s.sc.Text(), "\r"), true, nil
}
