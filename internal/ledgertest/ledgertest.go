// Package ledgertest gives the command and pipeline tests of a database
// ledger the database of tracepriv serve: SQLite in a temporary folder, or
// a fresh schema on the real PostgreSQL server the test binary shares
// (internal/pgtest's Database; the full suite only; the package's TestMain
// calls pgtest.StopShared), with people created through the service's API
// and the store's rows to compare before and after.
//
//	ledgertest.Each(t, func(t *testing.T, db *ledgertest.ServiceDB) {
//		db.Create("p0", 3)
//		// tracepriv sanitize ... --ledger db.Ledger
//		charges, spent := db.Charges("p0")
//	})
package ledgertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/server"
	"github.com/tracepriv/tracepriv/server/api"
)

// Admin is the service's admin token in these tests.
const Admin = "ledgertest-admin-token-0123456789abcdef"

// ServiceDB is a database of tracepriv serve used as a --ledger.
type ServiceDB struct {
	t testing.TB
	// Ledger is the --ledger value naming it, Name what certificates and
	// manifests call it.
	Ledger, Name   string
	driver, source string // database/sql's, to read its rows
	file           string // SQLite's database file ("" for PostgreSQL)
}

// Each runs f on SQLite, and on PostgreSQL in the full suite (-short
// skips it), on the test binary's shared cluster: the calling package's
// TestMain must call pgtest.StopShared after m.Run.
func Each(t *testing.T, f func(t *testing.T, db *ServiceDB)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "tracepriv.db")
		f(t, &ServiceDB{t: t, Ledger: "sqlite:" + dir, Name: "sqlite:tracepriv.db", driver: "sqlite", source: file, file: file})
	})
	t.Run("postgres", func(t *testing.T) {
		if testing.Short() {
			t.Skip("PostgreSQL: full suite only (-short runs this test on SQLite)")
		}
		u := pgtest.Database(t)
		p, _ := url.Parse(u)
		f(t, &ServiceDB{t: t, Ledger: u, Name: "postgres:" + strings.TrimPrefix(p.Path, "/"), driver: "pgx", source: u})
	})
}

// Request answers one request of the service on this database, with
// bearer token tok (in this process, through its handler; the service is
// closed after it, as an operator's serve between the commands' runs).
func (d *ServiceDB) Request(tok, method, path string, body any) (int, map[string]any) {
	d.t.Helper()
	opt := server.Options{AdminToken: Admin, DB: d.source}
	if d.file != "" {
		opt = server.Options{AdminToken: Admin, DataDir: filepath.Dir(d.file)}
	}
	srv, err := server.New(context.Background(), opt)
	if err != nil {
		d.t.Fatal(err)
	}
	defer srv.Close()
	b, _ := json.Marshal(body)
	req := httptest.NewRequest(method, path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	var k [16]byte
	rand.Read(k[:])
	req.Header.Set("Idempotency-Key", hex.EncodeToString(k[:]))
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, req)
	var v map[string]any
	json.Unmarshal(w.Body.Bytes(), &v)
	return w.Code, v
}

// Create creates person id with an account budget of b at order 2 within
// 100 m, and returns their token.
func (d *ServiceDB) Create(id string, b float64) string {
	d.t.Helper()
	c, v := d.Request(Admin, "POST", "/v1/people", map[string]any{"id": id, "epsilon_budget": 0.023, "account": map[string]any{"epsilon_budget": b},
		"cip": map[string]any{"lambda": 2, "radius_m": 100}})
	if c != http.StatusCreated {
		d.t.Fatalf("create %s: %d %v", id, c, v)
	}
	return v["token"].(string)
}

// Charges returns the person's charges by tracepriv commands (origin cli)
// as GET /v1/people/{id}/ledger answers them (Settlement "" once
// settled), and the account's spent.
func (d *ServiceDB) Charges(id string) ([]api.Charge, float64) {
	d.t.Helper()
	c, v := d.Request(Admin, "GET", "/v1/people/"+id+"/ledger", nil)
	var led api.LedgerResponse
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &led); c != http.StatusOK || err != nil {
		d.t.Fatalf("ledger of %s: %d %v %v", id, c, v, err)
	}
	var out []api.Charge
	for _, c := range led.Charges {
		if c.Origin == "cli" {
			out = append(out, c)
		}
	}
	return out, led.Account.Spent
}

// Rows returns every person and charge row of the store, and SQLite's
// file bytes (nil for PostgreSQL): every command closes its connections,
// which folds SQLite's WAL into the file.
func (d *ServiceDB) Rows() (string, []byte) {
	d.t.Helper()
	db, err := sql.Open(d.driver, d.source)
	if err != nil {
		d.t.Fatal(err)
	}
	r, err := pgtest.Rows(db, "SELECT * FROM people ORDER BY id", "SELECT * FROM charges ORDER BY person_id, seq")
	db.Close()
	if err != nil {
		d.t.Fatal(err)
	}
	var file []byte
	if d.file != "" {
		if file, err = os.ReadFile(d.file); err != nil {
			d.t.Fatal(err)
		}
	}
	return r, file
}
