package trace

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Reason says why an input row was skipped or merged. Readers apply one
// policy to every format (the package documentation and docs/input.md
// state it in full):
//
//   - ReasonDuplicate: the row repeats the fix before it exactly (same
//     time, position, altitude and attributes). It is merged into that fix
//     in both modes: nothing is lost.
//   - ReasonRepeatedTime: the row has the time of the fix before it but
//     another position. The first fix is kept and the row skipped;
//     nothing is averaged.
//   - ReasonTimeBackward: the row's time is earlier than the fix before it
//     (the last fix kept). The row is skipped.
//   - ReasonBadCoordinate: a latitude or longitude outside [-90, 90] or
//     [-180, 180], or not finite. The row is skipped.
//   - ReasonMalformed: any other field that does not parse (a number, a
//     time, an altitude), a missing or extra field, a record the format's
//     syntax rejects, a GeoJSON feature of an unsupported kind. The row is
//     skipped.
//   - ReasonTruncated: the file was cut mid-row: a CSV or PLT file whose
//     last row has no line end, or a GPX fix the document ends inside.
//     The row is skipped, even when it parses, because a cut number still
//     parses (116.31 of 116.3185). Fixes before the cut are kept.
//
// In strict mode (ReadOptions.Strict) every reason but ReasonDuplicate is
// an error instead.
type Reason string

// The reasons, in the order reports list them.
const (
	ReasonDuplicate     Reason = "duplicate_fix"
	ReasonRepeatedTime  Reason = "repeated_time"
	ReasonTimeBackward  Reason = "time_backwards"
	ReasonBadCoordinate Reason = "bad_coordinate"
	ReasonMalformed     Reason = "malformed_row"
	ReasonTruncated     Reason = "truncated_row"
)

// Reasons lists every Reason in report order.
var Reasons = []Reason{ReasonDuplicate, ReasonRepeatedTime, ReasonTimeBackward, ReasonBadCoordinate, ReasonMalformed, ReasonTruncated}

// Describe says in a few words what the reason means and what was done.
func (r Reason) Describe() string {
	switch r {
	case ReasonDuplicate:
		return "exact repeats of the fix before, merged"
	case ReasonRepeatedTime:
		return "the previous fix's time at another position, skipped (first kept)"
	case ReasonTimeBackward:
		return "times earlier than the fix before, skipped"
	case ReasonBadCoordinate:
		return "coordinates out of range or not finite, skipped"
	case ReasonMalformed:
		return "malformed rows, skipped"
	case ReasonTruncated:
		return "rows cut off at the end of the file, skipped"
	}
	return string(r)
}

// MaxProblems bounds Report.Problems per reason; the counts still cover
// every row.
const MaxProblems = 1000

// Report accounts for every row a reader saw: what it kept, what it merged
// or skipped and why. Reports of several files add up with Add.
//
// It serialises with two derived fields beside its own: "skipped_rows"
// (SkippedRows) and "skipped_by_reason" (ByReason).
type Report struct {
	Traces int `json:"traces"` // traces returned
	Read   int `json:"read"`   // points returned
	// Skipped counts the rows skipped, for every reason but
	// ReasonDuplicate.
	Skipped int `json:"skipped"`
	// Deduplicated counts the rows merged into the fix before them because
	// they repeat it exactly (ReasonDuplicate).
	Deduplicated int `json:"deduplicated"`
	// Problems describes the rows skipped or merged: the first MaxProblems
	// of each reason, in input order within a file.
	Problems []*ParseError `json:"problems,omitempty"`
	// Truncated is set when an input ended early: a CSV or PLT file whose
	// last row has no line end, a GPX document without its closing tags.
	// What came before the cut was kept.
	Truncated bool `json:"truncated,omitempty"`

	// Files counts the files read or attempted (ReadFiles; 1 for ReadFile).
	Files int `json:"files,omitempty"`
	// SkippedFiles lists the files that could not be read at all (ReadFiles
	// in lenient mode): missing, of an unknown format, or not readable as
	// their format (no PLT header, broken GeoJSON, no GPX root).
	SkippedFiles []FileError `json:"skipped_files,omitempty"`
	// UIDFromFile lists the files whose traces had no user id, in their
	// data or by their directory, and were given the file's name as one
	// (ReadFile, FileUID): each such file is one person, which the user
	// should be told (ReadOptions.UID sets the person instead).
	UIDFromFile []FilePerson `json:"uid_from_file,omitempty"`
	// Merged lists the uids a file's data carries that the person rule
	// released as part of another person (PersonRule): a directory or
	// file that is one person, or a person's folder in a corpus.
	Merged []Merge `json:"merged_uids,omitempty"`

	byReason map[Reason]int
}

// FilePerson is a file and the user id its traces were given.
type FilePerson struct {
	File string `json:"file"`
	UID  string `json:"uid"`
}

// FileError is a file that could not be read.
type FileError struct {
	File string `json:"file"`
	Err  error  `json:"-"`
}

func (e FileError) Error() string { return e.Err.Error() }

// MarshalJSON writes the file and the error message.
func (e FileError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		File    string `json:"file"`
		Message string `json:"message"`
	}{e.File, e.Err.Error()})
}

// SkippedRows is the number of input rows skipped or merged: Skipped plus
// Deduplicated, the sum of ByReason.
func (r *Report) SkippedRows() int { return r.Skipped + r.Deduplicated }

// ByReason counts the rows skipped or merged by reason; reasons that did
// not occur are absent. The map is a copy.
func (r *Report) ByReason() map[Reason]int {
	m := maps.Clone(r.byReason)
	if m == nil {
		m = map[Reason]int{}
	}
	// A Report built by hand may carry counts without reasons.
	if n := r.Deduplicated - m[ReasonDuplicate]; n > 0 {
		m[ReasonDuplicate] += n
	}
	other := 0
	for k, v := range m {
		if k != ReasonDuplicate {
			other += v
		}
	}
	if n := r.Skipped - other; n > 0 {
		m[ReasonMalformed] += n
	}
	return m
}

// InputSummary is the part of a Report a program's machine-readable output
// carries about its input: rows skipped or merged, by reason, and the files
// skipped. Its JSON form is what every tracepriv command prints with --json.
type InputSummary struct {
	SkippedRows     int            `json:"skipped_rows"`
	SkippedByReason map[Reason]int `json:"skipped_by_reason"`
	SkippedFiles    []FileError    `json:"skipped_files,omitempty"`
	// UIDFromFile lists the files taken as one person named after the
	// file, for want of a user id (Report.UIDFromFile).
	UIDFromFile []FilePerson `json:"uid_from_file,omitempty"`
	// Merged lists the uids of the data released as part of another
	// person by the person rule (Report.Merged).
	Merged []Merge `json:"merged_uids,omitempty"`
}

// Summary returns the InputSummary of r. A nil Report (nothing was read)
// gives zero counts and an empty, non-nil reason map, so the JSON always has
// the same keys.
func (r *Report) Summary() InputSummary {
	if r == nil {
		return InputSummary{SkippedByReason: map[Reason]int{}}
	}
	return InputSummary{SkippedRows: r.SkippedRows(), SkippedByReason: r.ByReason(), SkippedFiles: r.SkippedFiles, UIDFromFile: r.UIDFromFile, Merged: r.Merged}
}

// Examples returns the first n problems recorded for reason.
func (r *Report) Examples(reason Reason, n int) []*ParseError {
	var out []*ParseError
	for _, p := range r.Problems {
		if len(out) == n {
			break
		}
		if p.Reason() == reason {
			out = append(out, p)
		}
	}
	return out
}

// Add adds the counts and problems of o to r.
func (r *Report) Add(o *Report) {
	if o == nil {
		return
	}
	r.Traces += o.Traces
	r.Read += o.Read
	r.Files += o.Files
	r.Truncated = r.Truncated || o.Truncated
	r.SkippedFiles = append(r.SkippedFiles, o.SkippedFiles...)
	r.UIDFromFile = append(r.UIDFromFile, o.UIDFromFile...)
	r.Merged = append(r.Merged, o.Merged...)
	for k, v := range o.ByReason() {
		r.count(k, v)
	}
	kept := map[Reason]int{}
	for _, p := range r.Problems {
		kept[p.Reason()]++
	}
	for _, p := range o.Problems {
		if k := p.Reason(); kept[k] < MaxProblems {
			kept[k]++
			r.Problems = append(r.Problems, p)
		}
	}
}

// count adds n rows of reason k.
func (r *Report) count(k Reason, n int) {
	if n <= 0 {
		return
	}
	if r.byReason == nil {
		r.byReason = map[Reason]int{}
	}
	r.byReason[k] += n
	if k == ReasonDuplicate {
		r.Deduplicated += n
	} else {
		r.Skipped += n
	}
}

// record notes n rows skipped or merged for the reason of e.
func (r *Report) record(e *ParseError, n int) {
	k := e.Reason()
	if k == ReasonTruncated {
		r.Truncated = true
	}
	if r.byReason[k] < MaxProblems || n == 0 {
		r.Problems = append(r.Problems, e)
	}
	r.count(k, n)
}

// MarshalJSON adds skipped_rows and skipped_by_reason to the fields.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	p := plain(r)
	return json.Marshal(struct {
		*plain
		SkippedRows     int            `json:"skipped_rows"`
		SkippedByReason map[Reason]int `json:"skipped_by_reason"`
	}{&p, r.SkippedRows(), r.ByReason()})
}

// UnmarshalJSON reads what MarshalJSON writes, by-reason counts included.
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	var v struct {
		*plain
		SkippedByReason map[Reason]int `json:"skipped_by_reason"`
	}
	v.plain = (*plain)(r)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.byReason = v.SkippedByReason
	return nil
}

// String summarises the report in one line, e.g. "1,095 points in 1 trace;
// 3 rows skipped or merged (2 duplicate_fix, 1 time_backwards)".
func (r *Report) String() string {
	s := fmt.Sprintf("%d points in %d traces; %d rows skipped or merged", r.Read, r.Traces, r.SkippedRows())
	by := r.ByReason()
	sep := " ("
	for _, k := range Reasons {
		if by[k] > 0 {
			s += fmt.Sprintf("%s%d %s", sep, by[k], k)
			sep = ", "
		}
	}
	if sep == ", " {
		s += ")"
	}
	if len(r.SkippedFiles) > 0 {
		s += fmt.Sprintf("; %d files unreadable", len(r.SkippedFiles))
	}
	return s
}
