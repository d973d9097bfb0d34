package trajdb

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// DefaultMaxGap is the time gap that splits a trace into two trajectories
// unless MapOptions says otherwise.
const DefaultMaxGap = 10 * time.Minute

// MapOptions sets the rule that turns traces into cell sequences.
type MapOptions struct {
	// MaxGap splits a trace where two consecutive fixes are more than
	// MaxGap apart in time. Zero means DefaultMaxGap; a negative value
	// never splits on time.
	MaxGap time.Duration
	// MinLen drops trajectories of fewer than MinLen symbols (after
	// collapsing repeats). Zero means 1: only empty ones are dropped.
	MinLen int
}

func (o MapOptions) withDefaults() (MapOptions, error) {
	if o.MaxGap == 0 {
		o.MaxGap = DefaultMaxGap
	}
	if o.MinLen < 0 {
		return o, fmt.Errorf("trajdb: MinLen %d: want a non-negative length", o.MinLen)
	}
	o.MinLen = max(o.MinLen, 1)
	return o, nil
}

// MapReport accounts for every fix read, by what became of it:
//
//	Fixes = Symbols + ShortSymbols + Repeats + Outside
type MapReport struct {
	// Read is the trace readers' report when reading files (rows repaired
	// or skipped there never reach the mapping).
	Read *trace.Report `json:"read,omitempty"`
	// Traces and Persons read; Fixes is their number of points.
	Traces  int `json:"traces"`
	Persons int `json:"persons"`
	Fixes   int `json:"fixes"`
	// Trajectories kept and their total number of symbols.
	Trajectories int `json:"trajectories"`
	Symbols      int `json:"symbols"`
	// Repeats are fixes in the same cell as the fix before, collapsed into
	// its symbol.
	Repeats int `json:"fixes_repeated"`
	// Outside are fixes outside the universe's box (or not valid
	// positions); each ends the trajectory it interrupts.
	Outside int `json:"fixes_outside"`
	// GapSplits counts the splits made by a time gap longer than MaxGap.
	GapSplits int `json:"gap_splits"`
	// Short trajectories (fewer than MinLen symbols) were dropped, with
	// their ShortSymbols symbols.
	Short        int `json:"trajectories_short"`
	ShortSymbols int `json:"short_symbols"`
}

// ByReason returns the fixes not kept as symbols, and the trajectories
// dropped or split, keyed by reason.
func (r *MapReport) ByReason() map[string]int {
	return map[string]int{
		"fixes_repeated":     r.Repeats,
		"fixes_outside":      r.Outside,
		"gap_splits":         r.GapSplits,
		"trajectories_short": r.Short,
	}
}

// String summarises the report in one line.
func (r *MapReport) String() string {
	return fmt.Sprintf("%d trajectories (%d symbols) of %d persons from %d traces, %d fixes: %d outside the box, %d repeats collapsed, %d gap splits, %d short trajectories dropped (%d symbols)",
		r.Trajectories, r.Symbols, r.Persons, r.Traces, r.Fixes, r.Outside, r.Repeats, r.GapSplits, r.Short, r.ShortSymbols)
}

// FromTraces maps traces to a database of cell sequences over u, grouping
// them into persons by Trace.UID (a trace without a uid is an error; see
// FromFiles for the rule that names persons after their directory).
//
// The rule, applied to each trace's fixes in order:
//   - a fix in the same cell as the previous fix adds nothing (consecutive
//     repeats collapse to one symbol; a later return to a cell is a new
//     symbol);
//   - a fix outside the universe ends the current trajectory; the next fix
//     inside starts a new one;
//   - a fix more than MaxGap after the previous fix starts a new
//     trajectory;
//   - a trajectory of fewer than MinLen symbols is dropped.
//
// Persons appear in the order of their first trace, and each person's
// trajectories in the order of the traces and of time; a person left with
// no trajectory is not in the database (MapReport.Persons counts those
// kept). Time is not kept.
func FromTraces(u Universe, traces []*trace.Trace, opt MapOptions) (*DB, *MapReport, error) {
	m, err := newMapper(u, opt)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range traces {
		if t.UID == "" {
			return nil, nil, fmt.Errorf("trajdb: trace %d (%q) has no person id (uid)", i+1, t.Name)
		}
		m.add(t)
	}
	return m.finish()
}

// FromFiles reads the trace files in paths (files, or directories searched
// by trace.Files) with trace.ReadPaths and opt, and maps them with
// FromTraces. A database is a corpus of persons, so each path is read as
// one (trace.PersonRule with Corpus set, whatever ropt says): each
// immediate child folder of a directory is one person, with everything
// below it (GeoLife's Data folder gives one person per <uid>), and a file
// directly in it, or a file given, is one person per value of its uid
// field. A file that names no person (no uid field, directly in a path)
// is an error, as is a uid in ropt (it would name one person). Reading is
// lenient unless ropt.Strict: skipped rows and unreadable files are in
// MapReport.Read.
func FromFiles(u Universe, paths []string, ropt trace.ReadOptions, opt MapOptions) (*DB, *MapReport, error) {
	if ropt.UID != "" {
		return nil, nil, fmt.Errorf("trajdb: uid %q: a database is a corpus of persons, named by their folders or a uid field; a uid names one person", ropt.UID)
	}
	m, err := newMapper(u, opt)
	if err != nil {
		return nil, nil, err
	}
	ropt.Corpus = true
	nfiles, rep, err := trace.ReadPaths(paths, ropt, func(path string, traces []*trace.Trace) {
		for _, t := range traces {
			m.add(t)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	for _, f := range rep.SkippedFiles {
		if errors.Is(f.Err, trace.ErrNoPerson) {
			return nil, nil, fmt.Errorf("trajdb: %w", f.Err)
		}
	}
	db, mrep, err := m.finish()
	if mrep != nil {
		mrep.Read = rep
	}
	if err == nil && mrep.Traces == 0 {
		err = fmt.Errorf("trajdb: no traces could be read from %d files (%d skipped)", nfiles, len(rep.SkippedFiles))
	}
	return db, mrep, err
}

// mapper applies the mapping rule trace by trace.
type mapper struct {
	u     Universe
	opt   MapOptions
	db    *DB
	index map[string]int // uid -> index in db.Users
	rep   MapReport
}

func newMapper(u Universe, opt MapOptions) (*mapper, error) {
	if u == nil {
		return nil, errors.New("trajdb: no universe")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return &mapper{u: u, opt: opt, db: &DB{Size: u.Size()}, index: map[string]int{}}, nil
}

func (m *mapper) add(t *trace.Trace) {
	m.rep.Traces++
	m.rep.Fixes += len(t.Points)
	i, ok := m.index[t.UID]
	if !ok {
		i = len(m.db.Users)
		m.index[t.UID] = i
		m.db.Users = append(m.db.Users, User{ID: t.UID})
	}
	var cur []int
	flush := func() {
		switch {
		case len(cur) == 0:
		case len(cur) < m.opt.MinLen:
			m.rep.Short++
			m.rep.ShortSymbols += len(cur)
		default:
			m.db.Users[i].Seqs = append(m.db.Users[i].Seqs, cur)
			m.rep.Trajectories++
			m.rep.Symbols += len(cur)
		}
		cur = nil
	}
	var prev time.Time
	for _, p := range t.Points {
		c, in := m.u.Cell(p.Geo())
		if !in || math.IsNaN(p.Lat) || math.IsNaN(p.Lon) {
			m.rep.Outside++
			flush()
			continue
		}
		if len(cur) > 0 && m.opt.MaxGap > 0 && p.Time.Sub(prev) > m.opt.MaxGap {
			m.rep.GapSplits++
			flush()
		}
		prev = p.Time
		if len(cur) > 0 && cur[len(cur)-1] == c {
			m.rep.Repeats++
			continue
		}
		cur = append(cur, c)
	}
	flush()
}

func (m *mapper) finish() (*DB, *MapReport, error) {
	// A person whose every trajectory was dropped contributes nothing and
	// is not a person of the database.
	users := m.db.Users[:0]
	for _, u := range m.db.Users {
		if len(u.Seqs) > 0 {
			users = append(users, u)
		}
	}
	m.db.Users = users
	m.rep.Persons = len(users)
	rep := m.rep
	return m.db, &rep, nil
}

// syntheticEpoch and syntheticStep are the time axis of the traces
// ToTraces makes.
var syntheticEpoch = time.Unix(0, 0).UTC()

const syntheticStep = time.Minute

// ToTraces turns sequences over u into traces of cell centres, for writing
// a released database as CSV, GeoJSON or GPX with trace.WriteFile. Trace i
// (from 0) has uid and name "seq<i+1>": released data has no persons, and
// distinct uids keep trajectories apart in formats that group rows by uid.
// Released data has no time, but every trace format tracepriv writes needs
// one: the i-th fix (from 0) of every trace is stamped 1970-01-01 00:00:00
// UTC plus i minutes, plainly not a real time, and closer than
// DefaultMaxGap so that reading the traces back never splits them.
// Altitudes are unknown.
// A sequence that repeats a cell consecutively keeps both fixes (reading
// the traces back with FromFiles collapses them, by the mapping rule).
func ToTraces(u Universe, seqs [][]int) ([]*trace.Trace, error) {
	n := u.Size()
	out := make([]*trace.Trace, len(seqs))
	for i, s := range seqs {
		if len(s) == 0 {
			return nil, fmt.Errorf("trajdb: sequence %d is empty", i+1)
		}
		name := fmt.Sprintf("seq%d", i+1)
		t := &trace.Trace{UID: name, Name: name, Points: make([]trace.Point, len(s))}
		for j, c := range s {
			if c < 0 || c >= n {
				return nil, fmt.Errorf("trajdb: sequence %d: symbol %d outside the universe's %d cells", i+1, c, n)
			}
			p := u.Centre(c)
			t.Points[j] = trace.Point{
				Time: syntheticEpoch.Add(time.Duration(j) * syntheticStep),
				Lat:  p.Lat, Lon: p.Lon, Alt: math.NaN(),
			}
		}
		out[i] = t
	}
	return out, nil
}
