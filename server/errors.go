package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tracepriv/tracepriv/server/internal/ledger"
)

// Error codes of the API's JSON errors ({"error": {"code", "message"}}).
const (
	CodeBadRequest       = "bad_request"
	CodeBadJSON          = "malformed_json"
	CodeInvalidField     = "invalid_field"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeNotFound         = "not_found"
	CodeMethod           = "method_not_allowed"
	CodeConflict         = "conflict"
	CodeTooLarge         = "request_too_large"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeIdempotencyKey   = "idempotency_key_reused"
	CodeUnprocessable    = "unprocessable"
	CodeBudgetExhausted  = "budget_exhausted"
	CodeRateLimited      = "rate_limited"
	CodeUnavailable      = "unavailable"
	CodeInternal         = "internal"
)

// The service's own domain errors (the ledger's are in package ledger).
var (
	// errOutOfOrder: a query's time is before the person's previous query
	// in the window (the mechanism needs its queries in time order).
	errOutOfOrder = errors.New("query before the previous query")
	// errClockWindow: a query's time is too far from the server's clock.
	errClockWindow = errors.New("query time outside the accepted window around the server's clock")
	// errFarFromOrigin: the location is beyond the tangent plane's range
	// around the person's public origin.
	errFarFromOrigin = errors.New("location too far from the public origin")
	// errMechanism: the mechanism refused the query's parameters.
	errMechanism = errors.New("the mechanism refused the query")
	// errUnreleasable: sanitize refused the trace.
	errUnreleasable = errors.New("the trace cannot be released")
)

// statusTable maps each domain error to its HTTP status and code: the one
// place where they meet. Handlers return domain errors; writeError looks
// them up here with errors.Is, never by their text.
var statusTable = []struct {
	err    error
	status int
	code   string
}{
	{ledger.ErrNoPerson, http.StatusNotFound, CodeNotFound},
	{ledger.ErrWrongToken, http.StatusForbidden, CodeForbidden},
	{ledger.ErrExists, http.StatusConflict, CodeConflict},
	{ledger.ErrReplayMismatch, http.StatusUnprocessableEntity, CodeIdempotencyKey},
	{ledger.ErrBudgetExhausted, http.StatusTooManyRequests, CodeBudgetExhausted},
	{errOutOfOrder, http.StatusUnprocessableEntity, CodeUnprocessable},
	{errClockWindow, http.StatusUnprocessableEntity, CodeUnprocessable},
	{errFarFromOrigin, http.StatusUnprocessableEntity, CodeUnprocessable},
	{errMechanism, http.StatusUnprocessableEntity, CodeUnprocessable},
	{errUnreleasable, http.StatusUnprocessableEntity, CodeUnprocessable},
	{ledger.ErrNotDurable, http.StatusServiceUnavailable, CodeUnavailable},
	{ledger.ErrUnhealthy, http.StatusServiceUnavailable, CodeUnavailable},
	{ledger.ErrUnavailable, http.StatusServiceUnavailable, CodeUnavailable},
	{ledger.ErrNotRun, http.StatusServiceUnavailable, CodeUnavailable},
}

// domainError is a domain error with the words and figures of one case:
// the message (written for people), the field it concerns, details, and
// when to retry. Unwrap gives the domain error the table maps.
type domainError struct {
	kind       error
	msg        string
	field      string
	details    map[string]any
	retryAfter time.Duration
}

func (e *domainError) Error() string { return e.msg }
func (e *domainError) Unwrap() error { return e.kind }

func domainErr(kind error, field, format string, args ...any) *domainError {
	return &domainError{kind: kind, field: field, msg: fmt.Sprintf(format, args...)}
}

// apiError is an HTTP-level error (a malformed request, a missing token)
// with its status and JSON body; writeError renders it.
type apiError struct {
	Status  int            `json:"-"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Field   string         `json:"field,omitempty"`
	Details map[string]any `json:"details,omitempty"`
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration `json:"-"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func fieldErr(field, format string, args ...any) *apiError {
	e := errf(http.StatusBadRequest, CodeInvalidField, format, args...)
	e.Field = field
	return e
}

// errorBody is the JSON of every error response.
type errorBody struct {
	Error     *apiError `json:"error"`
	RequestID string    `json:"request_id"`
}

// toAPIError renders err: an *apiError as it is; a domain error by the
// status table, with its message, field and details; anything else is an
// internal error whose text is logged, never sent.
func (s *Server) toAPIError(r *http.Request, err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	for _, row := range statusTable {
		if !errors.Is(err, row.err) {
			continue
		}
		ae = &apiError{Status: row.status, Code: row.code, Message: row.err.Error()}
		var de *domainError
		var ee *ledger.ExhaustedError
		switch {
		case errors.As(err, &de):
			ae.Message, ae.Field, ae.Details, ae.RetryAfter = de.msg, de.field, de.details, de.retryAfter
		case errors.As(err, &ee):
			ae.Message = ee.Error()
			ae.Details = map[string]any{"kind": ee.Kind, "budget": ee.Budget, "spent": ee.Spent, "remaining": max(0, ee.Budget-ee.Spent)}
			if ee.Kind == "cip" {
				ae.Details["needed"] = ee.Needed
			} else {
				ae.Details["window"] = ee.Window
			}
			if !ee.WindowEnd.IsZero() {
				ae.Details["window_end"] = ee.WindowEnd.UTC()
				ae.RetryAfter = max(time.Second, ee.WindowEnd.Sub(s.opt.Now()))
			}
		}
		if row.status == http.StatusServiceUnavailable {
			s.log.ErrorContext(r.Context(), "store failure", "request_id", requestID(r), "err", err)
			ae.RetryAfter = time.Second
		}
		return ae
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The client went away (or its deadline passed) before an answer
		// was ready: nothing was released.
		return errf(http.StatusServiceUnavailable, CodeUnavailable, "the request was cancelled before an answer was ready; nothing was released")
	}
	s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r), "err", err)
	return errf(http.StatusInternalServerError, CodeInternal,
		"internal error; nothing was released: retry with the same Idempotency-Key (request id %s)", requestID(r))
}

// writeError writes err as a JSON error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.toAPIError(r, err)
	if ae.RetryAfter > 0 {
		secs := int((ae.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	}
	writeJSON(w, ae.Status, errorBody{Error: ae, RequestID: requestID(r)})
}

// writeJSON writes v with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"could not encode the response"}}`)
	}
	writeRaw(w, status, "application/json", append(b, '\n'))
}

func writeRaw(w http.ResponseWriter, status int, contentType string, b []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
