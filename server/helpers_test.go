package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/internal/testrun"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

const testAdmin = "test-admin-token-0123456789abcdef"

// The stores, by the ledger's names.
type Dialect = store.Dialect

const (
	SQLite   = store.SQLite
	Postgres = store.Postgres
)

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(serveMain(os.Args[1:]))
	}
	// The tests wait on fsyncs, PostgreSQL and gated commits more than they
	// compute: 4 at a time overlap those waits on 2 cores.
	flag.Parse()
	testrun.RaiseParallel(flag.CommandLine, 4)
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// postgresURL returns a fresh database on the test cluster, starting it on
// first use, or skips the test when PostgreSQL is not installed.
func postgresURL(t testing.TB) string { return pgtest.Database(t) }

// storeKinds are the stores every store-dependent test runs against.
var storeKinds = []Dialect{SQLite, Postgres}

// forEachStore runs f as a subtest per store, in parallel: each run has
// a store and a server of its own.
func forEachStore(t *testing.T, f func(t *testing.T, d Dialect)) {
	for _, d := range storeKinds {
		t.Run(string(d), func(t *testing.T) {
			skipPostgresShort(t, d)
			t.Parallel()
			f(t, d)
		})
	}
}

// skipPostgresShort skips a PostgreSQL run with -short: a real cluster is a
// heavy check, run by the full suite; -short runs the same test on SQLite.
func skipPostgresShort(t *testing.T, d Dialect) {
	if d == Postgres && testing.Short() {
		t.Skip("PostgreSQL: full suite only (-short runs this test on SQLite)")
	}
}

// forEachStoreInTurn runs f as a subtest per store, one after the other:
// for the timing test, which measures one store at a time on a machine
// running nothing else of this package.
func forEachStoreInTurn(t *testing.T, f func(t *testing.T, d Dialect)) {
	for _, d := range storeKinds {
		t.Run(string(d), func(t *testing.T) { skipPostgresShort(t, d); f(t, d) })
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// testEnv is a server on a loopback listener.
type testEnv struct {
	t      testing.TB
	srv    *Server
	ts     *httptest.Server
	client *http.Client
	clock  *fakeClock
}

// storeOptions returns options for a fresh store of kind d.
func storeOptions(t testing.TB, d Dialect) Options {
	o := Options{AdminToken: testAdmin, RateLimit: 1e6, Burst: 1e6}
	if d == Postgres {
		o.DB = postgresURL(t)
	} else {
		o.DataDir = t.TempDir()
	}
	return o
}

func newEnv(t testing.TB, d Dialect, mod func(*Options)) *testEnv {
	t.Helper()
	o := storeOptions(t, d)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	o.Now = clock.Now
	if mod != nil {
		mod(&o)
	}
	return startEnv(t, o, clock)
}

func startEnv(t testing.TB, o Options, clock *fakeClock) *testEnv {
	t.Helper()
	srv, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	tr := &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}
	e := &testEnv{t: t, srv: srv, ts: ts, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}, clock: clock}
	t.Cleanup(func() {
		ts.Close()
		tr.CloseIdleConnections()
		srv.Close()
	})
	return e
}

// on returns the environment reporting to t: a parallel subtest's
// requests must fail the subtest, from its own goroutine.
func (e *testEnv) on(t testing.TB) *testEnv {
	c := *e
	c.t = t
	return &c
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d: not JSON: %v: %s", r.status, err, r.body)
	}
	return m
}

func (r response) errCode(t testing.TB) api.Code {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("status %d: no error object: %s", r.status, r.body)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Fatalf("status %d: error without a message: %s", r.status, r.body)
	}
	return api.Code(e["code"].(string))
}

// do sends a request; body is JSON-encoded unless it is []byte.
func (e *testEnv) do(method, path, token string, body any, hdr map[string]string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if _, ok := body.(map[string]any); ok {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// createPerson creates a person with the admin token and returns their token.
func (e *testEnv) createPerson(body map[string]any) string {
	e.t.Helper()
	r := e.do("POST", "/v1/people", testAdmin, body, nil)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create person: %d %s", r.status, r.body)
	}
	tok, _ := r.json(e.t)["token"].(string)
	if tok == "" {
		e.t.Fatalf("create person: no token: %s", r.body)
	}
	return tok
}

func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// locate sends one query with a fresh key unless key is given.
func (e *testEnv) locate(id, token string, lat, lon float64, t time.Time, key string) response {
	e.t.Helper()
	if key == "" {
		key = newKey()
	}
	return e.do("POST", "/v1/people/"+id+"/locate", token,
		map[string]any{"lat": lat, "lon": lon, "time": t.UTC().Format(time.RFC3339Nano)},
		map[string]string{"Idempotency-Key": key})
}

// ledgerOf reads a person's ledger.
func (e *testEnv) ledgerOf(id, token string) api.LedgerResponse {
	e.t.Helper()
	r := e.do("GET", "/v1/people/"+id+"/ledger", token, nil, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("ledger: %d %s", r.status, r.body)
	}
	var l api.LedgerResponse
	if err := json.Unmarshal(r.body, &l); err != nil {
		e.t.Fatal(err)
	}
	return l
}

// storeState is everything the store holds about the ledger, for
// "changes nothing" checks.
type storeState struct {
	People  []string
	Charges []string
}

func (e *testEnv) snapshot() storeState {
	e.t.Helper()
	var s storeState
	err := e.srv.store.Scan(context.Background(), func(v *store.View) error {
		people, err := v.People()
		if err != nil {
			return err
		}
		for _, p := range people {
			s.People = append(s.People, fmt.Sprint(p.ID, p.Budget, p.Spent, p.GeoSpent, p.GeoTotal, p.GeoWindow, p.GeoSession, p.CIPSpent, p.Seq, p.Tag, p.TokenHash))
			charges, err := v.Charges(p.ID, 0, 1<<40, false)
			if err != nil {
				return err
			}
			for _, c := range charges {
				s.Charges = append(s.Charges, fmt.Sprint(p.ID, c.Seq, c.Amount, c.Epsilon, c.Origin, c.Certificate, c.Key))
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// beijing is a point near the bundled prior's public origin.
var beijing = [2]float64{39.9841, 116.3185}

// roomy is the account budget of tests about something other than the
// account. Since issue 31 every window's geoind session is charged to the
// person's one account (default 4, Rényi at order 2 within 100 m), and a
// session of 0.05 per metre on the 1 m grid costs 5.07 of it: these tests
// give the account room for the sessions they run, so that what they test
// (the window's run, idempotency, durability) is what limits them.
var roomy = map[string]any{"epsilon_budget": 1000.0}
