// Package pgtest starts a real, throwaway PostgreSQL server for tests:
// initdb and pg_ctl (Debian's postgresql package) in a temporary
// directory, listening on a unix socket in that directory only (no TCP
// port), as the postgres (or nobody) user when the tests run as root,
// since PostgreSQL refuses to run as root. Nothing is mocked; a machine
// without PostgreSQL gets ErrUnavailable and the tests skip.
//
// A test gets a schema of its own (NewSchema), not a database: its URL
// sets search_path to that schema alone, so every unqualified name the
// store creates or reads is the test's, and a schema costs a catalog row
// where CREATE DATABASE copies template1 through the write-ahead log and
// fsyncs it (0.45 CPU-s of the server's processes per database, against
// under 0.1 per schema, BENCHMARKS.md issue 32 session 44). What a schema
// does not isolate, and why no test depends on it: advisory locks are per
// database (the store's migration lock then serialises the migrations of
// tests running at once, which is what it is for), the catalogs are shared
// (a catalog query names the schema: the store's IntegrityCheck checks
// the tables its search_path sees), and the amcheck extension lives in
// the public schema, which is not on the tests' search_path.
//
// fsync, synchronous_commit and full_page_writes stay on (the defaults):
// the service's durability claims are measured against a durable
// PostgreSQL, and a claim checked against a server that does not flush is
// a different claim.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// ErrUnavailable means PostgreSQL is not installed (or cannot run here).
var ErrUnavailable = errors.New("pgtest: PostgreSQL is not available")

// Cluster is a running PostgreSQL server.
type Cluster struct {
	dir   string
	bin   string
	cred  *syscall.Credential
	seq   atomic.Int64
	admin *sql.DB // the postgres database, where the tests' schemas are
}

// binDir finds the directory of initdb and pg_ctl: $PATH, then Debian's
// /usr/lib/postgresql/VERSION/bin (newest first).
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		d := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrUnavailable
}

// Start initialises and starts a cluster in a new temporary directory.
func Start() (*Cluster, error) {
	if os.Getenv("TRACEPRIV_TEST_POSTGRES") == "off" {
		return nil, fmt.Errorf("%w: TRACEPRIV_TEST_POSTGRES=off", ErrUnavailable)
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tracepriv-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		var u *user.User
		for _, name := range []string{"postgres", "nobody"} {
			if u, err = user.Lookup(name); err == nil {
				break
			}
		}
		if u == nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%w: running as root and no postgres or nobody user to run it as", ErrUnavailable)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: initdb: %v: %s", ErrUnavailable, err, out)
	}
	// Unix socket in dir only; fsync and synchronous_commit stay on (the
	// defaults, see the package comment).
	opts := fmt.Sprintf("-k %s -c listen_addresses= -c max_connections=200 -c shared_buffers=128MB", dir)
	if out, err := c.run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: pg_ctl start: %v: %s %s", ErrUnavailable, err, out, log)
	}
	if c.admin, err = sql.Open("pgx", c.URL("postgres")); err == nil {
		// amcheck lets the tests check the indexes (Store.IntegrityCheck).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err = c.admin.ExecContext(ctx, "CREATE EXTENSION amcheck")
		cancel()
	}
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("pgtest: amcheck: %w", err)
	}
	return c, nil
}

func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// URL returns the URL of database db.
func (c *Cluster) URL(db string) string {
	return "postgres://postgres@/" + db + "?host=" + c.dir + "&sslmode=disable"
}

// NewSchema creates a fresh, empty schema in the cluster's postgres
// database and returns a URL whose connections see it alone (search_path).
func (c *Cluster) NewSchema(prefix string) (string, error) {
	name := fmt.Sprintf("%s_%d_%d", strings.ToLower(prefix), os.Getpid(), c.seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", err
	}
	return c.URL("postgres") + "&search_path=" + name, nil
}

// Stop stops the server and removes its directory.
func (c *Cluster) Stop() {
	if c.admin != nil {
		c.admin.Close()
	}
	c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop")
	os.RemoveAll(c.dir)
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns the cluster shared by the tests of one test binary,
// starting it on first use, or skips the test when PostgreSQL is not
// installed. Call StopShared from TestMain.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() { shared.c, shared.err = Start() })
	if shared.err != nil {
		if errors.Is(shared.err, ErrUnavailable) {
			t.Skipf("PostgreSQL tests skipped: %v", shared.err)
		}
		t.Fatal(shared.err)
	}
	return shared.c
}

// Database returns the URL of a fresh schema (NewSchema) on the shared
// cluster (Shared).
func Database(t testing.TB) string {
	t.Helper()
	u, err := Shared(t).NewSchema("tp")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// StopShared stops the shared cluster, if one was started.
func StopShared() {
	if shared.c != nil {
		shared.c.Stop()
	}
}

// DataDir is the cluster's data directory (for tests that read its files).
func (c *Cluster) DataDir() string { return filepath.Join(c.dir, "data") }

// Checkpoint makes the server write every dirty page to its data files.
func (c *Cluster) Checkpoint() error {
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("CHECKPOINT")
	return err
}

// Rows returns every row the queries select from the database db, one
// line each, so that a test can check that a refused operation changed no
// row (SQLite or PostgreSQL alike; the caller registers the driver).
func Rows(db *sql.DB, queries ...string) (string, error) {
	var b strings.Builder
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			return "", fmt.Errorf("%s: %w", q, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return "", err
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			fmt.Fprintf(&b, "%s: %q\n", q, vals)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
