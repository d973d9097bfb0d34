package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
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
	code   api.Code
}{
	{store.ErrNoPerson, http.StatusNotFound, api.CodeNotFound},
	{store.ErrWrongToken, http.StatusForbidden, api.CodeForbidden},
	{store.ErrExists, http.StatusConflict, api.CodeConflict},
	{store.ErrReplayMismatch, http.StatusUnprocessableEntity, api.CodeIdempotencyKey},
	{store.ErrBudgetExhausted, http.StatusTooManyRequests, api.CodeBudgetExhausted},
	{errOutOfOrder, http.StatusUnprocessableEntity, api.CodeUnprocessable},
	{errClockWindow, http.StatusUnprocessableEntity, api.CodeUnprocessable},
	{errFarFromOrigin, http.StatusUnprocessableEntity, api.CodeUnprocessable},
	{errMechanism, http.StatusUnprocessableEntity, api.CodeUnprocessable},
	{errUnreleasable, http.StatusUnprocessableEntity, api.CodeUnprocessable},
	{store.ErrNotDurable, http.StatusServiceUnavailable, api.CodeUnavailable},
	{store.ErrUnhealthy, http.StatusServiceUnavailable, api.CodeUnavailable},
	{store.ErrUnavailable, http.StatusServiceUnavailable, api.CodeUnavailable},
	{store.ErrNotRun, http.StatusServiceUnavailable, api.CodeUnavailable},
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
// with its status and the fields of its JSON body (api.Error);
// writeError renders it.
type apiError struct {
	Status  int
	Code    api.Code
	Message string
	Field   string
	Details map[string]any
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func errf(status int, code api.Code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func fieldErr(field, format string, args ...any) *apiError {
	e := errf(http.StatusBadRequest, api.CodeInvalidField, format, args...)
	e.Field = field
	return e
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
		var ee *store.ExhaustedError
		switch {
		case errors.As(err, &de):
			ae.Message, ae.Field, ae.Details, ae.RetryAfter = de.msg, de.field, de.details, de.retryAfter
		case errors.As(err, &ee):
			ae.Message = ee.Error()
			ae.Details = map[string]any{"kind": ee.Kind, "budget": ee.Budget, "spent": ee.Spent, "remaining": max(0, ee.Budget-ee.Spent)}
			if ee.Kind == store.BudgetAccount {
				ae.Details["needed"], ae.Details["mechanism"] = ee.Needed, ee.Mechanism
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
		return errf(http.StatusServiceUnavailable, api.CodeUnavailable, "the request was cancelled before an answer was ready; nothing was released")
	}
	s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r), "err", err)
	return errf(http.StatusInternalServerError, api.CodeInternal,
		"internal error; nothing was released: retry with the same Idempotency-Key (request id %s)", requestID(r))
}

// writeError writes err as a JSON error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.toAPIError(r, err)
	if ae.RetryAfter > 0 {
		secs := int((ae.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	}
	body := &api.Error{Code: ae.Code, Message: ae.Message, Field: ae.Field, Details: ae.Details}
	writeJSON(w, ae.Status, api.ErrorResponse{Error: body, RequestID: requestID(r)})
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
