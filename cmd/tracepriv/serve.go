package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/server"
	"github.com/tracepriv/tracepriv/server/web"
)

// serveFlags are the flags of tracepriv serve.
type serveFlags struct {
	addr, data, db, tlsCert, tlsKey string
	tiles                           string
	logFormat, logLevel             string
	rateLimit                       float64
	burst                           int
	maxUpload                       int64
	maxPoints                       int
	timeWindow                      time.Duration
	publicMetrics                   bool
	check                           bool
}

func init() { register(newServeCmd) }

// serveCmd is "tracepriv serve": the online service (package server).
type serveCmd struct {
	env *cli.Env
	serveFlags
}

func newServeCmd(env *cli.Env) *cobra.Command {
	c := &serveCmd{env: env}
	long, example := helpMeaning("serve", geoind.Meaning(0.023), sanitize.MeaningOf(1, 2, 100).Text)
	cmd := &cobra.Command{
		Use:     "serve --addr HOST:PORT --data DIR [--db postgres://...] [--tls-cert F --tls-key F]",
		Short:   "Run the online location-privacy service (HTTP/JSON API, durable budget ledger, web page)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Context()) },
	}
	fl, f := cmd.Flags(), &c.serveFlags
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (HOST:PORT; port 0 picks a free one)")
	fl.StringVar(&f.data, "data", "", "data directory: holds the SQLite database (required unless --db)")
	fl.StringVar(&f.db, "db", "", "PostgreSQL URL (postgres://...); default SQLite under --data")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM); serve HTTPS with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fl.StringVar(&f.logFormat, "log-format", "json", "log format on stderr: json or text")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.Float64Var(&f.rateLimit, "rate-limit", server.DefaultRateLimit, "requests per second allowed per token")
	fl.IntVar(&f.burst, "burst", server.DefaultBurst, "burst of requests allowed per token")
	fl.Int64Var(&f.maxUpload, "max-upload", server.DefaultMaxUploadBytes, "largest trace upload in bytes")
	fl.IntVar(&f.maxPoints, "max-points", server.DefaultMaxTracePoints, "most points of one trace upload")
	fl.DurationVar(&f.timeWindow, "time-window", server.DefaultTimeWindow, "how far a location query's time may be from the server's clock, either way")
	fl.BoolVar(&f.publicMetrics, "public-metrics", false, "serve /metrics without the admin token")
	fl.StringVar(&f.tiles, "tiles", "", "URL template of a self-hosted tile server for the page's map (https://HOST/{z}/{x}/{y}.png); default: the bundled offline layer, no other host")
	fl.BoolVar(&f.check, "check", false, "check the setup (store, migrations, integrity, address, TLS files), print it and exit")
	return cmd
}

// errNoAdminToken explains the missing admin token.
var errNoAdminToken = errors.New(`serve: TRACEPRIV_ADMIN_TOKEN is not set: the admin token (it creates people
and their budgets) is read from the environment, never from a flag or a file
on the command line; set it to a long random value, e.g.
export TRACEPRIV_ADMIN_TOKEN=$(head -c 32 /dev/urandom | base64)`)

// validate refuses limits the service would read as its defaults (0) or
// misread (a negative upload limit refused every upload), and an address
// that is not HOST:PORT, before the store is opened.
func (f *serveFlags) validate() error {
	switch {
	case !(f.rateLimit > 0) || math.IsInf(f.rateLimit, 1):
		return usageErrorf("serve: --rate-limit %v: want a positive, finite number of requests per second (default %v)", f.rateLimit, server.DefaultRateLimit)
	case f.burst < 1:
		return usageErrorf("serve: --burst %d: want at least 1 (default %d)", f.burst, server.DefaultBurst)
	case f.maxUpload < 1:
		return usageErrorf("serve: --max-upload %d: want at least 1 byte (default %d)", f.maxUpload, server.DefaultMaxUploadBytes)
	case f.maxPoints < 1:
		return usageErrorf("serve: --max-points %d: want at least 1 (default %d)", f.maxPoints, server.DefaultMaxTracePoints)
	case f.timeWindow < time.Second || f.timeWindow > 7*24*time.Hour:
		return usageErrorf("serve: --time-window %v: the time window must be from 1s to 168h (default %v)", f.timeWindow, server.DefaultTimeWindow)
	}
	_, port, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usageErrorf("serve: --addr %s: %w (want HOST:PORT, e.g. 127.0.0.1:8080)", f.addr, err)
	}
	// A numeric port must fit in 16 bits; a service name ("http") is the
	// resolver's to check when the listener opens.
	numeric := strings.Trim(port, "0123456789") == ""
	if _, perr := strconv.ParseUint(port, 10, 16); port == "" || numeric && perr != nil {
		return usageErrorf("serve: --addr %s: port %q: want a number from 0 to 65535 (0 picks a free one)", f.addr, port)
	}
	return nil
}

func (c *serveCmd) run(ctx context.Context) error {
	env, f := c.env, &c.serveFlags
	if err := f.validate(); err != nil {
		return err
	}
	admin, page, logger, err := c.setup()
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.New(ctx, server.Options{
		DataDir: f.data, DB: f.db, AdminToken: admin, Logger: logger,
		RateLimit: f.rateLimit, Burst: f.burst, MaxUploadBytes: f.maxUpload, MaxTracePoints: f.maxPoints,
		TimeWindow: f.timeWindow, PublicMetrics: f.publicMetrics, Web: page,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %s: %w", f.addr, err)
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	url := scheme + "://" + ln.Addr().String()
	if f.tlsCert == "" {
		if w := server.PlainTextWarning(ln.Addr()); w != "" {
			fmt.Fprintf(env.Stderr, "tracepriv serve: WARNING: %s\n", w)
		}
	}
	if f.check {
		ln.Close()
		return checkServe(ctx, env, srv, url)
	}
	ck, err := srv.Check(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("listening", "url", url, "store", ck.Store, "tls", f.tlsCert != "", "schema_version", ck.SchemaVersion)
	if err := env.Emit(map[string]any{"listening": url, "store": ck.Store}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "tracepriv serve: listening on %s (%s store)\n", url, ck.Store)
		return err
	}); err != nil {
		return err
	}
	if err := srv.Serve(ctx, ln, f.tlsCert, f.tlsKey); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// setup checks the flags and the environment before anything is opened:
// the admin token, the store, the TLS pair, the page and the logger.
func (c *serveCmd) setup() (admin string, page http.Handler, logger *slog.Logger, err error) {
	f := &c.serveFlags
	if c.env.SeedSet {
		return "", nil, nil, usageErrorf("serve: --seed is refused: the service always draws noise from crypto/rand")
	}
	admin = os.Getenv("TRACEPRIV_ADMIN_TOKEN")
	if admin == "" {
		return "", nil, nil, &cli.FlagError{Err: errNoAdminToken} // a setting missing, like a flag
	}
	if err := server.CheckAdminToken(admin); err != nil {
		return "", nil, nil, usageErrorf("serve: TRACEPRIV_ADMIN_TOKEN: %w", err)
	}
	if f.data == "" && f.db == "" {
		return "", nil, nil, usageErrorf("serve: --data DIR is required (the SQLite database lives there), or --db postgres://...")
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return "", nil, nil, usageErrorf("serve: --tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" {
		// Loaded here so that a bad pair fails the start, not the first
		// handshake.
		if _, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey); err != nil {
			err = fmt.Errorf("serve: --tls-cert %s --tls-key %s: %w", f.tlsCert, f.tlsKey, err)
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
				err = &cli.InputError{Err: err} // read, but not a PEM key pair
			}
			return "", nil, nil, err
		}
	}
	if f.tiles != "" { // else nil: the page with the bundled basemap
		if page, err = web.New(web.Options{Tiles: f.tiles}); err != nil {
			return "", nil, nil, usageErrorf("serve: --tiles: %w", err)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return "", nil, nil, usageErrorf("serve: --log-level %q: want debug, info, warn or error", f.logLevel)
	}
	hopt := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "json":
		logger = slog.New(slog.NewJSONHandler(c.env.Stderr, hopt))
	case "text":
		logger = slog.New(slog.NewTextHandler(c.env.Stderr, hopt))
	default:
		return "", nil, nil, usageErrorf("serve: --log-format %q: want json or text", f.logFormat)
	}
	return admin, page, logger, nil
}

// serveCheck is what serve --check found.
type serveCheck struct {
	Check         string `json:"check"`
	Store         string `json:"store"`
	Location      string `json:"location"`
	SchemaVersion int    `json:"schema_version"`
	People        int64  `json:"people"`
	Charges       int64  `json:"charges"`
	Integrity     string `json:"integrity"`
	URL           string `json:"url"`
}

// checkServe reports the state of a store that opened (and migrated) and
// passes its integrity check, and the address that could be bound.
func checkServe(ctx context.Context, env *cli.Env, srv *server.Server, url string) error {
	r, err := srv.Check(ctx)
	if err != nil {
		return fmt.Errorf("serve --check: %w", err)
	}
	c := serveCheck{Check: "ok", Store: r.Store, Location: r.Location, SchemaVersion: r.SchemaVersion,
		People: r.People, Charges: r.Charges, Integrity: r.Integrity, URL: url}
	return env.Emit(c, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "tracepriv serve --check: ok\n  store: %s at %s, schema version %d, %d people, %d charges\n  integrity: %s\n  would serve %s\n",
			c.Store, c.Location, c.SchemaVersion, c.People, c.Charges, c.Integrity, c.URL)
		return err
	})
}
