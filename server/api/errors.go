package api

// Code is the machine-readable kind of an API error: a client branches on
// it (never on the message, which is written for people).
type Code string

// The error codes of the API, each with the HTTP status it comes with.
const (
	CodeBadRequest       Code = "bad_request"            // 400: the request cannot be read (an upload, a header)
	CodeBadJSON          Code = "malformed_json"         // 400: the body is not one JSON object
	CodeInvalidField     Code = "invalid_field"          // 400: Error.Field names the field at fault
	CodeUnauthorized     Code = "unauthorized"           // 401: no bearer token
	CodeForbidden        Code = "forbidden"              // 403: the token does not grant access, or a cross-origin request
	CodeNotFound         Code = "not_found"              // 404: no such person (admin) or operation
	CodeMethod           Code = "method_not_allowed"     // 405: the Allow header names the method
	CodeConflict         Code = "conflict"               // 409: the person exists already
	CodeTooLarge         Code = "request_too_large"      // 413: body, upload or points over the server's limits
	CodeUnsupportedMedia Code = "unsupported_media_type" // 415: a Content-Type the operation does not take
	CodeIdempotencyKey   Code = "idempotency_key_reused" // 422: the Idempotency-Key was used with another request
	CodeUnprocessable    Code = "unprocessable"          // 422: the query or trace cannot be answered as asked
	CodeBudgetExhausted  Code = "budget_exhausted"       // 429: the budget cannot pay; nothing was released
	CodeRateLimited      Code = "rate_limited"           // 429: too many requests; see Retry-After
	CodeUnavailable      Code = "unavailable"            // 503: the store could not run or confirm the request
	CodeInternal         Code = "internal"               // 500: nothing was released; retry with the same key
)

// Error is the error object of every error answer.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Field is the request field at fault (CodeInvalidField, and some
	// CodeUnprocessable errors).
	Field string `json:"field,omitempty"`
	// Details holds figures of the case: for CodeBudgetExhausted kind
	// ("account": the person's one budget, which never renews; "geoind":
	// the window's session, until window_end), budget, spent, remaining,
	// and needed (account) or window and window_end (geoind).
	Details map[string]any `json:"details,omitempty"`
}

// Error returns the code and the message, so that a client can return an
// *Error as its error.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// ErrorResponse is the body of every error answer (a status other than
// 2xx, JSON).
type ErrorResponse struct {
	Error *Error `json:"error"`
	// RequestID is the X-Request-Id of the request: quote it when asking
	// the operator about a failure.
	RequestID string `json:"request_id"`
}
