package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// Errors wrapped by ParseError.Err, so callers can branch with errors.Is.
var (
	ErrNotNumber    = errors.New("is not a number")
	ErrOutOfRange   = errors.New("is out of range")
	ErrBadTime      = errors.New("is not a valid time")
	ErrMissing      = errors.New("is missing")
	ErrInconsistent = errors.New("disagrees with")
	ErrNotFinite    = errors.New("is not finite")
	ErrTimeConflict = errors.New("repeats an earlier timestamp at a different position")
	ErrTimeBackward = errors.New("is earlier than the fix before it")
	ErrDuplicate    = errors.New("repeats the fix before it exactly")
	ErrTruncated    = errors.New("truncated file")
	ErrMalformed    = errors.New("malformed input")
	ErrUnsupported  = errors.New("unsupported")
	// ErrNotPLT is wrapped when a file read as PLT does not start with
	// PLT's header.
	ErrNotPLT = errors.New("not a PLT file")
	// ErrNoFix is wrapped when a file has rows but none of them is a fix
	// that can be read (every one was skipped), or a PLT file has none.
	ErrNoFix = errors.New("no fix could be read")
	// ErrNoTraceFiles is wrapped when a directory given as input holds no
	// file with a trace extension (Extensions), at any depth.
	ErrNoTraceFiles = errors.New("no trace files")
	// ErrUnknownFormat is wrapped when a format name or a file's extension
	// is none of Formats.
	ErrUnknownFormat = errors.New("unknown trace format")
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

	reason Reason // set where the error site knows better than Err
	row    bool   // a row lenient reading skips, returned in strict mode
}

// Skippable reports whether lenient reading would have skipped the record
// and read on: true for a bad row returned in strict mode, false for a
// problem with the file as a whole (a missing header, a document that does
// not parse), which stops reading in both modes.
func (e *ParseError) Skippable() bool { return e.row }

// Reason classifies the error under the dirty-input policy (see Reason).
func (e *ParseError) Reason() Reason {
	switch {
	case e.reason != "":
		return e.reason
	case errors.Is(e.Err, ErrDuplicate):
		return ReasonDuplicate
	case errors.Is(e.Err, ErrTimeConflict):
		return ReasonRepeatedTime
	case errors.Is(e.Err, ErrTimeBackward):
		return ReasonTimeBackward
	case errors.Is(e.Err, ErrTruncated):
		return ReasonTruncated
	}
	return ReasonMalformed
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
		fmt.Fprintf(&b, "field %s: %s ", infile.Excerpt([]byte(e.Field)), infile.Excerpt([]byte(e.Value)))
	case e.Field != "":
		fmt.Fprintf(&b, "field %s ", infile.Excerpt([]byte(e.Field)))
	case e.Value != "":
		fmt.Fprintf(&b, "%s ", infile.Excerpt([]byte(e.Value)))
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
		Kind    Reason `json:"kind"`
		Message string `json:"message"`
	}{e.File, e.Line, e.Field, e.Value, msg, e.Reason(), e.Error()})
}
