package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
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

// apiError is an error with its HTTP status and JSON body. Handlers return
// it; writeError renders it.
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

// writeError renders err as a JSON error; anything but an *apiError is an
// internal error whose text is logged, never sent.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		var ce *CommitError
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// The client went away before its request ran: nothing ran.
			ae = errf(http.StatusServiceUnavailable, CodeUnavailable, "the request was cancelled before it ran; nothing was charged or released")
		} else if errors.As(err, &ce) || errors.Is(err, ErrStoreClosed) {
			s.log.ErrorContext(r.Context(), "store failure", "request_id", requestID(r), "err", err)
			ae = errf(http.StatusServiceUnavailable, CodeUnavailable, "the store could not commit; nothing was charged or released, retry with the same Idempotency-Key")
			ae.RetryAfter = time.Second
		} else {
			s.log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r), "err", err)
			ae = errf(http.StatusInternalServerError, CodeInternal, "internal error; nothing was charged or released (request id %s)", requestID(r))
		}
	}
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
