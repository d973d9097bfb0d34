package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Errors wrapped by ParseError.Err, so callers can branch with errors.Is.
var (
	ErrNotNumber    = errors.New("is not a number")
	ErrOutOfRange   = errors.New("is out of range")
	ErrBadTime      = errors.New("is not a valid time")
	ErrMissing      = errors.New("is missing")
	ErrInconsistent = errors.New("disagrees with")
	ErrTimeConflict = errors.New("repeats an earlier timestamp at a different position")
	ErrTruncated    = errors.New("truncated file")
	ErrMalformed    = errors.New("malformed input")
	ErrUnsupported  = errors.New("unsupported")
)

// ParseError reports a bad record in a trace file: where it is (file and
// 1-based line), which field, the offending text and why it was rejected.
// Its message reads like
//
//	data/x.plt:12: field "lat": "39.9x" is not a number
type ParseError struct {
	File  string // file name, from ReadOptions.Name
	Line  int    // 1-based line, 0 if unknown
	Field string // field or column name, "" if the whole record is bad
	Value string // offending text, "" if absent
	Err   error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	switch {
	case e.Field != "" && e.Value != "":
		fmt.Fprintf(&b, "field %q: %q ", e.Field, e.Value)
	case e.Field != "":
		fmt.Fprintf(&b, "field %q ", e.Field)
	case e.Value != "":
		fmt.Fprintf(&b, "%q ", e.Value)
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// MarshalJSON writes the error with its message, so reports serialise.
func (e *ParseError) MarshalJSON() ([]byte, error) {
	msg := ""
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return json.Marshal(struct {
		File    string `json:"file,omitempty"`
		Line    int    `json:"line,omitempty"`
		Field   string `json:"field,omitempty"`
		Value   string `json:"value,omitempty"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}{e.File, e.Line, e.Field, e.Value, msg, e.Error()})
}

// MaxProblems bounds Report.Problems; Report.Skipped still counts every
// skipped record beyond it.
const MaxProblems = 1000

// Report accounts for every record a reader saw: what it kept, what it
// skipped in lenient mode and why, and what it de-duplicated.
type Report struct {
	Traces  int `json:"traces"`  // traces returned
	Read    int `json:"read"`    // points returned
	Skipped int `json:"skipped"` // bad records skipped (lenient mode only)
	// Problems describes the skipped records, the first MaxProblems of them.
	Problems []*ParseError `json:"problems,omitempty"`
	// Deduplicated counts exact repeats of the previous point (same time,
	// position, altitude and attributes) that were dropped.
	Deduplicated int `json:"deduplicated"`
}

// record notes n records skipped for the reason e.
func (r *Report) record(e *ParseError, n int) {
	r.Skipped += n
	if len(r.Problems) < MaxProblems {
		r.Problems = append(r.Problems, e)
	}
}
