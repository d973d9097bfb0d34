package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/server/api"
)

type ctxKey int

const requestIDKey ctxKey = iota

// requestID returns the id the middleware gave the request.
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// contentSecurityPolicy allows the page to load its own scripts, styles
// and images and to call the API on its own origin only; nothing may frame
// it.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware wraps the mux: request ids, security headers, the
// same-origin rule for the API, panics as JSON 500s, metrics and one log
// line per request (method, route pattern, status, duration; never
// headers, bodies or query strings).
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		h := w.Header()
		h.Set("X-Request-Id", id)
		// The clock that judges query times (Options.Now), so that a client
		// whose own clock is off can correct it.
		h.Set("Date", s.opt.Now().UTC().Format(http.TimeFormat))
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		isAPI := strings.HasPrefix(r.URL.Path, "/v1/")
		if isAPI {
			h.Set("Cache-Control", "no-store")
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic", "request_id", id, "panic", panicText(p), "stack", stackText(debug.Stack()))
				if sw.status == 0 {
					s.writeError(sw, r, errf(http.StatusInternalServerError, api.CodeInternal, "internal error (request id %s)", id))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			s.metrics.observeRequest(route, r.Method, sw.status, d)
			s.log.Info("request", "request_id", id, "method", r.Method, "route", route,
				"status", sw.status, "bytes", sw.bytes, "duration_ms", float64(d.Microseconds())/1000)
		}()
		if isAPI && !sameOrigin(r) {
			s.writeError(sw, r, errf(http.StatusForbidden, api.CodeForbidden, "cross-origin requests are not allowed: the API serves its own page only"))
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// panicText describes a panic for the log without its value, which may
// hold what the request carried (a location): a runtime error's message
// (an index, a nil dereference), else only the value's type.
func panicText(p any) string {
	if re, ok := p.(runtime.Error); ok {
		return re.Error()
	}
	return fmt.Sprintf("panic with a %T (value not logged)", p)
}

// stackText is a stack trace without its frames' argument words (the last
// parenthesised group of each frame line), which may be a location's
// float bits.
func stackText(b []byte) string {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "\t") || !strings.HasSuffix(l, ")") {
			continue
		}
		depth := 0
		for j := len(l) - 1; j >= 0; j-- {
			switch l[j] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				lines[i] = l[:j] + "(...)"
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// sameOrigin reports whether a browser request comes from the service's
// own origin. Requests without Origin or Sec-Fetch-Site (curl, apps) are
// not browser cross-origin requests and pass; the API sends no CORS
// headers, so a browser would not let another site read a response
// anyway, and this refuses such a request before it spends anything.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}
