package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server/web"
)

// Defaults of Options.
const (
	DefaultRateLimit      = 50.0 // requests per second per token
	DefaultBurst          = 100
	DefaultMaxBodyBytes   = 64 << 10
	DefaultMaxUploadBytes = 8 << 20
	DefaultMaxTracePoints = 20_000
	// MinAdminTokenLen is the shortest admin token accepted without a
	// warning in the log.
	MinAdminTokenLen = 16
)

// Options configures a Server. The zero value of every field but
// AdminToken has a default.
type Options struct {
	// DataDir holds the SQLite database (and nothing else) unless DB is set.
	DataDir string
	// DB is empty for SQLite under DataDir, or a postgres:// URL.
	DB string
	// AdminToken authorises POST /v1/people (and reading any ledger). It
	// is required.
	AdminToken string
	// Logger receives structured logs; nil discards them. Nothing secret
	// (tokens, locations, uploaded traces) is ever logged.
	Logger *slog.Logger
	// RateLimit (requests per second) and Burst bound each token's
	// requests (and, for failed authentication, each client address's).
	RateLimit float64
	Burst     int
	// MaxBodyBytes bounds JSON request bodies, MaxUploadBytes trace
	// uploads, MaxTracePoints the points of one upload.
	MaxBodyBytes   int64
	MaxUploadBytes int64
	MaxTracePoints int
	// SanitizeWorkers bounds the sanitisations computed at once (default
	// 1: each one already uses every core).
	SanitizeWorkers int
	// Now is the clock (nil: time.Now); tests move it to cross budget
	// windows.
	Now func() time.Time
	// Web serves the page at GET / (nil: web.Handler()).
	Web http.Handler
}

func (o *Options) defaults() error {
	if o.AdminToken == "" {
		return errors.New("server: an admin token is required (TRACEPRIV_ADMIN_TOKEN)")
	}
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if !(o.RateLimit > 0) || o.Burst < 1 {
		return fmt.Errorf("server: rate limit %v/s with burst %d: want both positive", o.RateLimit, o.Burst)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxUploadBytes == 0 {
		o.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if o.MaxTracePoints == 0 {
		o.MaxTracePoints = DefaultMaxTracePoints
	}
	if o.SanitizeWorkers == 0 {
		o.SanitizeWorkers = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Web == nil {
		o.Web = web.Handler()
	}
	return nil
}

// Server is the tracepriv online service: people and their budgets, online
// obfuscation with the predictive mechanism, CIP trace sanitisation, and
// the ledger, over HTTP/JSON. See docs/serve.md.
type Server struct {
	opt        Options
	store      *Store
	log        *slog.Logger
	metrics    *metrics
	limits     *limiter
	failures   *limiter // failed authentications, per client address
	sessions   *sessionCache
	people     *personCache
	prior      *gp.Prior // the bundled default prior
	adminMAC   []byte
	sanitizing chan struct{} // bounds the sanitisations computed at once
	handler    http.Handler
	routes     []route
}

// New opens the store (applying migrations) and builds the server.
func New(ctx context.Context, opt Options) (*Server, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	prior, err := gp.ReadPrior(strings.NewReader(string(sample.Prior)))
	if err != nil {
		return nil, fmt.Errorf("server: bundled prior: %w", err)
	}
	st, err := OpenStore(ctx, opt.DataDir, opt.DB)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opt:        opt,
		store:      st,
		log:        opt.Logger,
		limits:     newLimiter(opt.RateLimit, opt.Burst),
		failures:   newLimiter(opt.RateLimit, opt.Burst),
		sessions:   newSessionCache(100_000),
		people:     newPersonCache(),
		prior:      prior,
		adminMAC:   tokenHash(opt.AdminToken),
		sanitizing: make(chan struct{}, opt.SanitizeWorkers),
	}
	s.metrics = newMetrics(s)
	st.observe = func(d time.Duration, jobs int, err error) { s.metrics.observeCommit(st.Dialect(), d, jobs, err) }
	if len(opt.AdminToken) < MinAdminTokenLen {
		s.log.Warn("the admin token is short; use at least 32 random characters", "length", len(opt.AdminToken))
	}
	s.routes = s.routeTable()
	s.handler = s.buildHandler()
	return s, nil
}

// Store returns the server's store.
func (s *Server) Store() *Store { return s.store }

// Handler returns the HTTP handler of the whole service.
func (s *Server) Handler() http.Handler { return s.handler }

// Close closes the store.
func (s *Server) Close() error { return s.store.Close() }

// route is one API operation: the method, the path pattern (net/http's
// syntax, also the OpenAPI path), and its handler.
type route struct {
	Method, Path string
	handler      http.HandlerFunc
}

// Routes lists the operations the server registers (the OpenAPI test
// compares them with the document).
func (s *Server) Routes() []struct{ Method, Path string } {
	out := make([]struct{ Method, Path string }, len(s.routes))
	for i, r := range s.routes {
		out[i] = struct{ Method, Path string }{r.Method, r.Path}
	}
	return out
}

func (s *Server) routeTable() []route {
	return []route{
		{"POST", "/v1/people", s.handleCreatePerson},
		{"POST", "/v1/people/{id}/locate", s.handleLocate},
		{"POST", "/v1/people/{id}/sanitize", s.handleSanitize},
		{"GET", "/v1/people/{id}/ledger", s.handleLedger},
		{"GET", "/healthz", s.handleHealthz},
		{"GET", "/metrics", s.metrics.handler().ServeHTTP},
		{"GET", "/openapi.json", s.handleOpenAPI},
	}
}

func (s *Server) buildHandler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes {
		mux.HandleFunc(rt.Method+" "+rt.Path, rt.handler)
	}
	// Anything else under /v1/ is a JSON 404 (or 405), never the page.
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range s.routes {
			if pathMatches(rt.Path, r.URL.Path) {
				w.Header().Set("Allow", rt.Method)
				s.writeError(w, r, errf(http.StatusMethodNotAllowed, CodeMethod, "%s %s is not allowed; use %s", r.Method, r.URL.Path, rt.Method))
				return
			}
		}
		s.writeError(w, r, errf(http.StatusNotFound, CodeNotFound, "no API operation at %s (see /openapi.json)", r.URL.Path))
	})
	// The page and its assets; "/" rather than "GET /" so that it does not
	// overlap the /v1/ catch-all.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.writeError(w, r, errf(http.StatusMethodNotAllowed, CodeMethod, "%s %s is not allowed", r.Method, r.URL.Path))
			return
		}
		s.opt.Web.ServeHTTP(w, r)
	})
	return s.middleware(mux)
}

// pathMatches reports whether path fits a pattern with {wildcards}.
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], "{") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// HTTPServer returns an http.Server for the service with the timeouts and
// limits of a public endpoint.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       60 * time.Second, // a trace upload on a slow link
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully
// (in-flight requests finish, queued store jobs commit). With certFile
// and keyFile it serves TLS.
func (s *Server) Serve(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	hs := s.HTTPServer(ln.Addr().String())
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- hs.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc
	return err
}
