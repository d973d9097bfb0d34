package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/filelock"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/internal/matfile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/sdp"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
	"github.com/tracepriv/tracepriv/viz"
)

// The codes of a command's error under --json: a small stable set a
// script branches on. budget_exhausted and internal are the service's
// (server/api), with the same meaning.
const (
	// CodeInvalidFlag: a flag or argument is unknown, missing or has a
	// bad value (the message names it).
	CodeInvalidFlag api.Code = "invalid_flag"
	// CodeInvalidInput: an input file cannot be read as what it should
	// be (the message names file and line).
	CodeInvalidInput api.Code = "invalid_input"
	// CodeRefused: the input is readable but tracepriv refuses to release
	// it as asked (who a person is cannot be told, for instance); nothing
	// was released or charged.
	CodeRefused api.Code = "refused"
	// CodeBudgetExhausted: a person's budget cannot pay; nothing was
	// released.
	CodeBudgetExhausted = api.CodeBudgetExhausted
	// CodeIO: a file is missing, unreadable, unwritable or locked.
	CodeIO api.Code = "io"
	// CodeInternal: none of the above; the message says what failed.
	CodeInternal = api.CodeInternal
)

// Codes lists every code ErrorCode returns.
var Codes = []api.Code{CodeInvalidFlag, CodeInvalidInput, CodeRefused, CodeBudgetExhausted, CodeIO, CodeInternal}

// FlagError marks an error of the command line itself (an unknown
// command or flag, a missing required flag, a bad number of arguments),
// which the library's types cannot say.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// RefusedError marks a run refused as a whole before anything was
// released or charged, for a reason the library says in Err.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// InputError marks a file whose content is not what it should be, where
// the library's error has no type that says so (a TLS key pair without
// PEM data, for instance): --json gives it the code invalid_input.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ErrorCode classifies err by its type, never by its text: the first
// match of budget refusals, command-line errors, refusals, parameter
// errors, bad input and file-system errors, else CodeInternal.
func ErrorCode(err error) api.Code {
	var (
		refusedBudget *budget.RefusedError
		flagErr       *FlagError
		refused       *RefusedError
		parseErr      *trace.ParseError
		validation    *trace.ValidationError
		seqErr        *trajdb.SeqError
		matErr        *matfile.Error
		ledgerErr     *accountant.EventLogError
		pathErr       *fs.PathError
		nothing       *sanitize.NothingReleasedError
		priorFile     *prior.FileError
		syntaxErr     *json.SyntaxError
		typeErr       *json.UnmarshalTypeError
		sdpaErr       *sdp.FormatError
		inputErr      *InputError
	)
	switch {
	case errors.As(err, &refusedBudget), errors.Is(err, geoind.ErrExhausted):
		return CodeBudgetExhausted
	case errors.As(err, &flagErr):
		return CodeInvalidFlag
	case errors.As(err, &refused), errors.Is(err, trace.ErrNoPerson), errors.Is(err, budget.ErrNotCovered):
		return CodeRefused
	case errors.As(err, &priorFile):
		// A bad field of a prior file is a *param.Error too, but of the
		// file's content: bad input, not a bad flag.
		return CodeInvalidInput
	case errors.Is(err, param.ErrInvalid), errors.Is(err, trace.ErrUnknownFormat), errors.Is(err, viz.ErrFormat):
		// A format is named by a flag (--from, --to) or by the extension
		// of an output file the command line names.
		return CodeInvalidFlag
	case errors.As(err, &parseErr), errors.As(err, &validation), errors.As(err, &seqErr), errors.As(err, &matErr),
		errors.As(err, &ledgerErr), errors.Is(err, trace.ErrNoFix), errors.Is(err, trace.ErrEmpty), errors.Is(err, trace.ErrNoTraceFiles),
		errors.Is(err, sanitize.ErrNoCertificate), errors.As(err, &syntaxErr), errors.As(err, &typeErr), errors.As(err, &sdpaErr), errors.As(err, &inputErr),
		errors.Is(err, budget.ErrDamaged), errors.Is(err, jsondoc.ErrVersion), errors.Is(err, gp.ErrNotPositiveDefinite),
		errors.Is(err, geoind.ErrStateModified), errors.Is(err, geoind.ErrStateRolledBack),
		errors.Is(err, geoind.ErrStateMissing), errors.Is(err, geoind.ErrStateUnknown):
		return CodeInvalidInput
	case errors.As(err, &pathErr), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission),
		errors.Is(err, filelock.ErrBusy):
		return CodeIO
	case errors.As(err, &nothing):
		// Every unit failed, for reasons of no single kind above.
		return CodeRefused
	}
	return CodeInternal
}

// ErrorBody is what a command prints on stdout for an error under --json:
// {"error": {"code": ..., "message": ...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the code and message of an error.
type ErrorDetail struct {
	Code    api.Code `json:"code"`
	Message string   `json:"message"`
}

// EmitError prints err as an ErrorBody on stdout with --json, and as
// "tracepriv: message" on stderr otherwise. After a result was printed
// (Emit: a corpus release that stands, though some people failed) the
// error goes to stderr, so that stdout stays one JSON document.
func (e *Env) EmitError(err error) {
	if e.JSON && !e.emitted {
		if jsondoc.Write(e.Stdout, ErrorBody{ErrorDetail{ErrorCode(err), err.Error()}}) == nil {
			return
		}
	}
	fmt.Fprintln(e.Stderr, "tracepriv:", err)
}
