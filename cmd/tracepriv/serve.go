package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
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

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var f serveFlags
		cmd := &cobra.Command{
			Use:   "serve --addr HOST:PORT --data DIR [--db postgres://...] [--tls-cert F --tls-key F]",
			Short: "Run the online location-privacy service (HTTP/JSON API, durable budget ledger, web page)",
			Long: `Serve the tracepriv API: people with per-person budgets, online obfuscation of
location fixes with the predictive mechanism (IM or PM, state kept server-side),
CIP trace sanitisation with certificates, and each person's ledger; /healthz,
Prometheus /metrics, the OpenAPI document at /openapi.json and the web page
at /.

Every charge commits, durably, in the same transaction that decides the
answer, before the answer is sent; a person's requests are serialised, so
concurrent requests cannot both pass the last unit of budget; a retry with the
same Idempotency-Key gets the stored answer, never a fresh sample nor a second
charge. Nothing resets or recreates a budget.

` + cli.Wrap("What the budgets mean: a location budget (epsilon_budget, ε per metre per window) of 0.023, as in the example below: "+geoind.Meaning(0.023)+
				". A CIP release at the default epsilon 1, lambda 2, radius 100 m: "+sanitize.MeaningOf(1, 2, 100).Text+".", cli.HelpWidth) + `

Storage: SQLite in DIR/tracepriv.db (WAL; each batch of commits is fsynced
before any of its answers is sent) by default; PostgreSQL with
--db postgres://USER@HOST/DB (fsync and synchronous_commit on, checked at
start). Schema migrations are applied at start.

The admin token (creates people, rotates their tokens, reads any ledger and
/metrics) is read from the environment variable TRACEPRIV_ADMIN_TOKEN; the
server refuses to start without it, or with one that cannot hold 128 bits of
entropy (shorter than 16 bytes, or too short for its characters: 22 characters
of base64 or 32 hex digits will do), and never logs it. Each person's token is
returned once at creation and stored hashed; POST /v1/people/ID/token (admin)
replaces it and revokes the old one.

Every release of a person (an online session, a sanitised trace, a release
their device draws and asks to be charged for with POST /v1/people/ID/charges)
is charged to one account, in the currency of the ledger file (package budget),
whose one budget bounds the total; a window is a rate within it, never a fresh
budget.

A location query's time must be within --time-window of the server's clock
(default 5m), so that one query dated in the future cannot make every later
one of its person "out of order". /metrics needs the admin token unless
--public-metrics. Serving plain HTTP on an address other machines can reach
prints a warning: use --tls-cert/--tls-key, or a TLS proxy in front. Logs are structured (JSON on stderr) and hold no token and no
location. With --check, serve checks its setup (the admin token, the store,
its migrations and integrity, the address, the TLS files), says what it would
serve, and exits without serving.

The page's map draws a bundled offline layer (Natural Earth coastlines,
borders and cities, served by tracepriv itself) and asks no other host for
anything. --tiles URL draws the tiles of a tile server you run instead
(e.g. https://tiles.example.org/{z}/{x}/{y}.png): every tile request tells the
tile server which area the person looks at, which is where they are, so never
point it at a public tile server. See docs/serve.md for the API, the ledger's
guarantees and the threat model.`,
			// The server runs until stopped, so only --check runs as a
			// checked example; the others are comments.
			Example: `  # The admin token comes from the environment, never from a flag:
  # export TRACEPRIV_ADMIN_TOKEN="$(head -c 32 /dev/urandom | base64)"
  # Check the setup (store, migrations, integrity, address) and exit:
  tracepriv serve --addr 127.0.0.1:0 --data tracepriv-data --check
  # Serve with SQLite under ./tracepriv-data until Ctrl-C; the page is at http://127.0.0.1:8080/
  # tracepriv serve --addr 127.0.0.1:8080 --data tracepriv-data
  # alice's one budget (account, Rényi at order 2 within 100 m, for every release) and one online session's epsilon per metre:
  # curl -H "Authorization: Bearer $TRACEPRIV_ADMIN_TOKEN" -d '{"id":"alice","epsilon_budget":0.0230,"account":{"epsilon_budget":4}}' http://127.0.0.1:8080/v1/people
  # curl -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $(uuidgen)" -d '{"lat":39.9841,"lon":116.3185,"time":"'$(date -u +%FT%TZ)'"}' http://127.0.0.1:8080/v1/people/alice/locate
  # curl -X POST -H "Authorization: Bearer $TRACEPRIV_ADMIN_TOKEN" http://127.0.0.1:8080/v1/people/alice/token   # a new token for alice
  # PostgreSQL and TLS:
  # tracepriv serve --addr 0.0.0.0:8443 --db postgres://tracepriv@localhost/tracepriv --tls-cert cert.pem --tls-key key.pem`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				return runServe(cmd.Context(), env, &f)
			},
		}
		fl := cmd.Flags()
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
	})
}

// errNoAdminToken explains the missing admin token.
var errNoAdminToken = errors.New(`serve: TRACEPRIV_ADMIN_TOKEN is not set: the admin token (it creates people
and their budgets) is read from the environment, never from a flag or a file
on the command line; set it to a long random value, e.g.
export TRACEPRIV_ADMIN_TOKEN=$(head -c 32 /dev/urandom | base64)`)

func runServe(ctx context.Context, env *cli.Env, f *serveFlags) error {
	if env.SeedSet {
		return usageErrorf("serve: --seed is refused: the service always draws noise from crypto/rand")
	}
	admin := os.Getenv("TRACEPRIV_ADMIN_TOKEN")
	if admin == "" {
		return errNoAdminToken
	}
	if err := server.CheckAdminToken(admin); err != nil {
		return fmt.Errorf("serve: TRACEPRIV_ADMIN_TOKEN: %w", err)
	}
	if f.data == "" && f.db == "" {
		return usageErrorf("serve: --data DIR is required (the SQLite database lives there), or --db postgres://...")
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageErrorf("serve: --tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" {
		// Loaded here so that a bad pair fails the start, not the first
		// handshake.
		if _, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey); err != nil {
			return fmt.Errorf("serve: --tls-cert %s --tls-key %s: %w", f.tlsCert, f.tlsKey, err)
		}
	}
	var page http.Handler // nil: the page with the bundled basemap
	if f.tiles != "" {
		h, err := web.New(web.Options{Tiles: f.tiles})
		if err != nil {
			return fmt.Errorf("serve: --tiles: %w", err)
		}
		page = h
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usageErrorf("serve: --log-level %q: want debug, info, warn or error", f.logLevel)
	}
	hopt := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch f.logFormat {
	case "json":
		logger = slog.New(slog.NewJSONHandler(env.Stderr, hopt))
	case "text":
		logger = slog.New(slog.NewTextHandler(env.Stderr, hopt))
	default:
		return usageErrorf("serve: --log-format %q: want json or text", f.logFormat)
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
	c, err := srv.Check(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("listening", "url", url, "store", c.Store, "tls", f.tlsCert != "", "schema_version", c.SchemaVersion)
	if err := env.Emit(map[string]any{"listening": url, "store": c.Store}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "tracepriv serve: listening on %s (%s store)\n", url, c.Store)
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
