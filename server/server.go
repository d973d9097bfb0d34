package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
	"github.com/tracepriv/tracepriv/server/wasm"
	"github.com/tracepriv/tracepriv/server/web"
	"github.com/tracepriv/tracepriv/trace"
)

// Defaults of Options.
const (
	DefaultRateLimit      = 50.0 // requests per second per token
	DefaultBurst          = 100
	DefaultMaxBodyBytes   = 64 << 10
	DefaultMaxUploadBytes = 8 << 20
	DefaultMaxTracePoints = 20_000
	// DefaultTimeWindow is how far a location query's time may be from
	// the server's clock, either way.
	DefaultTimeWindow = 5 * time.Minute
	// MinAdminTokenBits is the least entropy an admin token must be able
	// to hold (see CheckAdminToken).
	MinAdminTokenBits = 128
)

// Options configures a Server. The zero value of every field but
// AdminToken has a default.
type Options struct {
	// DataDir holds the SQLite database (and nothing else) unless DB is set.
	DataDir string
	// DB is empty for SQLite under DataDir, or a postgres:// URL.
	DB string
	// AdminToken authorises creating people, rotating their tokens,
	// reading any ledger and /metrics. It is required and must pass
	// CheckAdminToken.
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
	// TimeWindow bounds how far a location query's time may be from the
	// server's clock, either way (default DefaultTimeWindow): a query far
	// in the future would otherwise refuse every later query of its
	// person as out of order.
	TimeWindow time.Duration
	// PublicMetrics serves /metrics without the admin token.
	PublicMetrics bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Web serves the page at GET / (nil: web.Handler()).
	Web http.Handler

	// afterCommit is the store's store.Options.AfterCommit (tests).
	afterCommit func() error
	// afterCharge, if set, runs when a charge (POST .../charges) has
	// committed durably and before its answer is written (the crash test
	// kills the process there).
	afterCharge func()
	// release computes a sanitised release (nil: sanitize.ReleaseContext;
	// tests replace it).
	release releaseFunc
}

type releaseFunc = func(context.Context, []*trace.Trace, sanitize.Options) ([]*trace.Trace, *sanitize.Certificate, error)

// CheckAdminToken refuses an admin token that cannot hold 128 bits of
// entropy. The server cannot measure a token's randomness; it bounds it
// by the token's length and the character classes it uses (lower case,
// upper case, digits, other printable ASCII; any other byte counts 8
// bits), and refuses tokens shorter than 16 bytes or made of few distinct
// characters (fewer than 8) or repeating themselves. 22 characters of base64 or 32 hex digits from a random
// source pass.
func CheckAdminToken(tok string) error {
	const how = "generate one with: head -c 32 /dev/urandom | base64"
	if len(tok) < MinAdminTokenBits/8 {
		return fmt.Errorf("the admin token is %d bytes long: it needs at least %d bits of entropy, so at least %d bytes; %s",
			len(tok), MinAdminTokenBits, MinAdminTokenBits/8, how)
	}
	var lower, upper, digit, other, binary bool
	distinct := map[byte]bool{}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		distinct[c] = true
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		case 0x20 <= c && c < 0x7f:
			other = true
		default:
			binary = true
		}
	}
	alphabet := 0
	for _, c := range []struct {
		on bool
		n  int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}} {
		if c.on {
			alphabet += c.n
		}
	}
	if binary {
		alphabet = 256
	}
	bits := float64(len(tok)) * math.Log2(float64(alphabet))
	if bits < MinAdminTokenBits {
		return fmt.Errorf("the admin token can hold at most %.0f bits of entropy (%d characters from an alphabet of %d): it needs %d; use a longer token or more kinds of characters; %s",
			bits, len(tok), alphabet, MinAdminTokenBits, how)
	}
	if len(distinct) < 8 {
		return fmt.Errorf("the admin token uses only %d distinct characters in %d: it is not random; %s", len(distinct), len(tok), how)
	}
	for p := 1; p <= len(tok)/2; p++ {
		if tok[p:] == tok[:len(tok)-p] {
			return fmt.Errorf("the admin token repeats its first %d characters: it is not random; %s", p, how)
		}
	}
	return nil
}

func (o *Options) defaults() error {
	if o.AdminToken == "" {
		return errors.New("server: an admin token is required (TRACEPRIV_ADMIN_TOKEN)")
	}
	if err := CheckAdminToken(o.AdminToken); err != nil {
		return fmt.Errorf("server: TRACEPRIV_ADMIN_TOKEN: %w", err)
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
	if o.SanitizeWorkers < 0 {
		return fmt.Errorf("server: %d sanitize workers: want at least 1", o.SanitizeWorkers)
	}
	if o.TimeWindow == 0 {
		o.TimeWindow = DefaultTimeWindow
	}
	if o.TimeWindow < time.Second || o.TimeWindow > 7*24*time.Hour {
		return fmt.Errorf("server: time window %v: want from 1s to 168h (the default is %v)", o.TimeWindow, DefaultTimeWindow)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Web == nil {
		// The page pins the module's loader by its digest.
		h, err := web.New(web.Options{Loader: wasm.Integrity("loader.js")})
		if err != nil {
			return fmt.Errorf("server: the page: %w", err)
		}
		o.Web = h
	}
	if o.release == nil {
		o.release = sanitize.ReleaseContext
	}
	return nil
}

// Server is the tracepriv online service: people and their budgets, online
// obfuscation with the predictive mechanism, CIP trace sanitisation, and
// the ledger, over HTTP/JSON. See docs/serve.md.
type Server struct {
	opt      Options
	store    *store.Store
	log      *slog.Logger
	metrics  *metrics
	limits   *limiter
	failures *limiter // failed authentications, per client address
	sessions *sessionCache
	configs  *configCache
	prior    *prior.Prior // the bundled default prior
	adminMAC []byte
	slots    *semaphore.Weighted // bounds the sanitisations computed at once
	handler  http.Handler
	routes   []route
	// authProbe, set by tests only, is told each step authPerson takes.
	authProbe func(step string)
}

// New opens the store (applying migrations) and builds the server.
func New(ctx context.Context, opt Options) (*Server, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	prior, err := prior.Read(strings.NewReader(string(sample.Prior)))
	if err != nil {
		return nil, fmt.Errorf("server: bundled prior: %w", err)
	}
	s := &Server{
		opt:      opt,
		log:      opt.Logger,
		limits:   newLimiter(opt.RateLimit, opt.Burst),
		failures: newLimiter(opt.RateLimit, opt.Burst),
		sessions: newSessionCache(100_000),
		configs:  newConfigCache(),
		prior:    prior,
		adminMAC: tokenHash(opt.AdminToken),
		slots:    semaphore.NewWeighted(int64(opt.SanitizeWorkers)),
	}
	s.metrics = newMetrics(s)
	st, err := store.Open(ctx, opt.DataDir, opt.DB, store.Options{
		AfterCommit: opt.afterCommit,
		Observe:     func(d time.Duration, jobs int, err error) { s.metrics.observeCommit(d, jobs, err) },
		Account:     s.accountTerms,
	})
	if err != nil {
		return nil, err
	}
	s.store = st
	s.metrics.dialect = string(st.Dialect())
	s.routes = s.routeTable()
	s.handler = s.buildHandler()
	return s, nil
}

// Handler returns the HTTP handler of the whole service.
func (s *Server) Handler() http.Handler { return s.handler }

// Close closes the store.
func (s *Server) Close() error { return s.store.Close() }

// CheckReport is what Server.Check found.
type CheckReport struct {
	// Store is "sqlite" or "postgres"; Location the SQLite file or the
	// PostgreSQL URL without its password.
	Store, Location string
	SchemaVersion   int
	People, Charges int64
	// Integrity is what the database's own consistency check said.
	Integrity string
}

// Check checks the store: its schema, its counts and its integrity
// (SQLite's integrity_check; PostgreSQL's amcheck where installed).
func (s *Server) Check(ctx context.Context) (*CheckReport, error) {
	c := &CheckReport{Store: string(s.store.Dialect()), Location: s.store.Location()}
	err := s.store.Scan(ctx, func(v *store.View) error {
		var err error
		if c.SchemaVersion, err = v.SchemaVersion(); err != nil {
			return err
		}
		c.People, c.Charges, err = v.Counts()
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.Integrity, err = s.store.IntegrityCheck(ctx); err != nil {
		return nil, fmt.Errorf("the store is damaged: %w", err)
	}
	return c, nil
}

// route is one API operation: the method, the path pattern (net/http's
// syntax, also the OpenAPI path), and its handler.
type route struct {
	Method, Path string
	handler      http.HandlerFunc
}

func (s *Server) routeTable() []route {
	return []route{
		{"POST", "/v1/people", s.handleCreatePerson},
		{"POST", "/v1/people/{id}/token", s.handleRotateToken},
		{"POST", "/v1/people/{id}/locate", s.handleLocate},
		{"POST", "/v1/people/{id}/sanitize", s.handleSanitize},
		{"POST", "/v1/people/{id}/charges", s.handleCharge},
		{"GET", "/v1/people/{id}/ledger", s.handleLedger},
		{"GET", "/healthz", s.handleHealthz},
		{"GET", "/metrics", s.handleMetrics},
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
				s.writeError(w, r, errf(http.StatusMethodNotAllowed, api.CodeMethod, "%s %s is not allowed; use %s", r.Method, r.URL.Path, rt.Method))
				return
			}
		}
		s.writeError(w, r, errf(http.StatusNotFound, api.CodeNotFound, "no API operation at %s (see /openapi.json)", r.URL.Path))
	})
	// The WebAssembly module, its runtime and loader (docs/device.md).
	mux.Handle("GET /wasm/", wasm.Handler())
	// The page and its assets; "/" rather than "GET /" so that it does not
	// overlap the /v1/ catch-all.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.writeError(w, r, errf(http.StatusMethodNotAllowed, api.CodeMethod, "%s %s is not allowed", r.Method, r.URL.Path))
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

// PlainTextWarning returns the warning for serving without TLS on addr,
// or "" when addr is a loopback address (reachable from this machine
// only).
func PlainTextWarning(addr net.Addr) string {
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return ""
	}
	return fmt.Sprintf("serving plain HTTP on %s, which other machines can reach: tokens, locations and traces cross the network unencrypted. "+
		"Give --tls-cert and --tls-key, put a TLS proxy in front and bind 127.0.0.1, or bind 127.0.0.1 for local use", addr)
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully
// (in-flight requests finish, queued store jobs commit). With certFile
// and keyFile it serves TLS; without them on an address other machines
// can reach, it logs a warning (PlainTextWarning).
func (s *Server) Serve(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	if certFile == "" {
		if w := PlainTextWarning(ln.Addr()); w != "" {
			s.log.Warn("WARNING: " + w)
		}
	}
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
