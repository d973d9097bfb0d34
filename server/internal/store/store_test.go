package store

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/internal/testrun"
)

func TestMain(m *testing.M) {
	// The tests wait on fsyncs, PostgreSQL and gated commits more than they
	// compute: 4 at a time overlap those waits on 2 cores.
	flag.Parse()
	testrun.RaiseParallel(flag.CommandLine, 4)
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// forEachStore runs f as a subtest per store, in parallel, each with a
// fresh store location (dataDir, url).
func forEachStore(t *testing.T, f func(t *testing.T, d Dialect, dataDir, url string)) {
	for _, d := range []Dialect{SQLite, Postgres} {
		t.Run(string(d), func(t *testing.T) {
			if d == Postgres && testing.Short() {
				// A real cluster is a heavy check, run by the full suite.
				t.Skip("PostgreSQL: full suite only (-short runs this test on SQLite)")
			}
			t.Parallel()
			if d == Postgres {
				f(t, d, "", pgtest.Database(t))
				return
			}
			f(t, d, t.TempDir(), "")
		})
	}
}

func open(t *testing.T, dataDir, url string, opt Options) *Store {
	t.Helper()
	st, err := Open(context.Background(), dataDir, url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestMigrations: migrations apply once, re-opening applies nothing, and a
// database from a newer build is refused.
func TestMigrations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		for i := range 3 {
			st, err := Open(ctx, dir, url, Options{})
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			var n, v int
			if err := st.db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &v); err != nil {
				t.Fatal(err)
			}
			if n != len(migrations) || v != SchemaVersion() {
				t.Errorf("open %d: %d migrations recorded, version %d", i, n, v)
			}
			if d == Postgres {
				var sc string
				st.db.QueryRow(`SHOW synchronous_commit`).Scan(&sc)
				if sc != "on" {
					t.Errorf("synchronous_commit = %q", sc)
				}
			} else {
				var mode string
				st.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
				if mode != "wal" {
					t.Errorf("journal_mode = %q", mode)
				}
			}
			st.Close()
		}
		st, err := Open(ctx, dir, url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.db.Exec(rebind(d, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 'x')`), SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if _, err := Open(ctx, dir, url, Options{}); err == nil || !strings.Contains(err.Error(), "newer than this build") {
			t.Errorf("a newer schema: %v", err)
		}
	})
}

func TestRebindAndRedact(t *testing.T) {
	t.Parallel()
	if got := rebind(Postgres, "a = ? AND b = ?"); got != "a = $1 AND b = $2" {
		t.Errorf("rebind: %q", got)
	}
	if got := RedactURL("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Errorf("redact: %q", got)
	}
}

// addPerson inserts a bare person.
func addPerson(t *testing.T, st *Store, id string) {
	t.Helper()
	err := st.Update(context.Background(), id, func(tx *Tx) error {
		return tx.CreatePerson(&PersonRow{ID: id, TokenHash: []byte("h"), Config: "{}", GeoBudget: 1, Created: time.Unix(0, 0)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seqOf reads a person's seq.
func seqOf(t *testing.T, st *Store, id string) int64 {
	t.Helper()
	p, err := st.Lookup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Seq
}

// bump is a job that increments a person's seq after reading it under the
// person's lock, failing with fail (its write then rolled back) or
// panicking.
func bump(id string, fail error, panics bool) func(*Tx) error {
	return func(tx *Tx) error {
		p, _, err := tx.LockPerson(id, "")
		if err != nil {
			return err
		}
		if _, err := tx.exec(`UPDATE people SET seq = ? WHERE id = ?`, p.Seq+1, id); err != nil {
			return err
		}
		if panics {
			panic("job panics after its write")
		}
		return fail
	}
}

// TestStoreUpdate: concurrent read-modify-write jobs on one person lose no
// update; a job that fails or panics leaves nothing behind and does not
// disturb the others; OnCommit hooks run for committed jobs only.
func TestStoreUpdate(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		st := open(t, dir, url, Options{})
		addPerson(t, st, "u")
		const N = 60
		failure := errors.New("refused")
		var (
			wg             sync.WaitGroup
			ok, hooks, bad atomic.Int64
		)
		for i := range N {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var fail error
				if i%5 == 1 {
					fail = failure
				}
				f := bump("u", fail, i%10 == 3)
				err := st.Update(context.Background(), "u", func(tx *Tx) error {
					tx.OnCommit(func() { hooks.Add(1) })
					return f(tx)
				})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, failure) || strings.Contains(err.Error(), "panicked"):
					bad.Add(1)
				default:
					t.Errorf("job %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if got := seqOf(t, st, "u"); got != ok.Load() || hooks.Load() != ok.Load() || ok.Load()+bad.Load() != N {
			t.Errorf("seq %d after %d committed jobs (%d hooks run, %d failed)", got, ok.Load(), hooks.Load(), bad.Load())
		}
	})
}

// holder is an AfterCommit hook a test can arm: the next commit then
// signals held and waits for release, which says whether it fails.
type holder struct {
	armed   atomic.Bool
	held    chan struct{}
	release chan error
	stop    chan struct{} // closed when the test ends: nothing is held any more
}

func newHolder() *holder {
	return &holder{held: make(chan struct{}, 1), release: make(chan error), stop: make(chan struct{})}
}

func (h *holder) hook() error {
	if !h.armed.CompareAndSwap(true, false) {
		return nil
	}
	h.held <- struct{}{}
	select {
	case err := <-h.release:
		return err
	case <-h.stop:
		return nil
	}
}

// waitUntil polls cond until it holds or done delivers (the thing the
// test waits on happened first): it returns whether cond held.
func waitUntil(cond func() bool, done <-chan error) (bool, error) {
	for {
		if cond() {
			return true, nil
		}
		select {
		case err := <-done:
			return false, err
		case <-time.After(time.Millisecond):
		}
	}
}

// TestDurabilityBarrier holds a commit between its COMMIT and its
// confirmation (the WAL fsync, or PostgreSQL's COMMIT returning): a read
// of that person that sees it, and another write of that person, return
// only once it is confirmed; a read of another person does not wait. When
// the confirmation fails, the commit's Update, and the read and the write
// that saw it, fail with ErrNotDurable; on SQLite the store then refuses
// every write and every releasing read (ErrUnhealthy) until it is
// reopened; PostgreSQL's later reads see what it holds, which is durable.
func TestDurabilityBarrier(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
				h := newHolder()
				st := open(t, dir, url, Options{AfterCommit: h.hook})
				t.Cleanup(func() { close(h.stop) }) // before the store closes
				addPerson(t, st, "a")
				addPerson(t, st, "b")
				ctx := context.Background()

				h.armed.Store(true)
				first := make(chan error, 1)
				go func() { first <- st.Update(ctx, "a", bump("a", nil, false)) }()
				<-h.held // committed, not confirmed
				base := st.Waiting()
				seen := make(chan int64, 1)
				read := make(chan error, 1)
				go func() {
					read <- st.Read(ctx, "a", func(v *View) error {
						p, err := v.Person("a")
						if err == nil {
							seen <- p.Seq
						}
						return err
					})
				}()
				if s := <-seen; s != 1 {
					t.Fatalf("the read saw seq %d, want the committed 1", s)
				}
				if ok, err := waitUntil(func() bool { return st.Waiting() > base }, read); !ok {
					t.Fatalf("a read of a commit not yet durable returned (%v) before the commit was confirmed", err)
				}
				base = st.Waiting()
				second := make(chan error, 1)
				go func() { second <- st.Update(ctx, "a", bump("a", nil, false)) }()
				if d == Postgres {
					// The second write reads the first under the row lock and
					// waits after its own commit.
					if ok, err := waitUntil(func() bool { return st.Waiting() > base }, second); !ok {
						t.Fatalf("a write after a commit not yet durable returned (%v) before the commit was confirmed", err)
					}
				}
				// Another person is not held up.
				if err := st.Read(ctx, "b", func(v *View) error { _, err := v.Person("b"); return err }); err != nil {
					t.Fatalf("read of another person: %v", err)
				}
				select {
				case err := <-first:
					t.Fatalf("Update returned (%v) before its commit was confirmed", err)
				default:
				}
				if !fail {
					h.release <- nil
					for _, c := range []chan error{first, read, second} {
						if err := <-c; err != nil {
							t.Errorf("after the confirmation: %v", err)
						}
					}
					if got := seqOf(t, st, "a"); got != 2 {
						t.Errorf("seq %d, want 2", got)
					}
					return
				}
				h.release <- errors.New("injected fsync failure")
				if err := <-first; !errors.Is(err, ErrNotDurable) {
					t.Errorf("the held commit after a failed confirmation: %v, want ErrNotDurable", err)
				}
				if err := <-read; !errors.Is(err, ErrNotDurable) {
					t.Errorf("the read that saw it: %v, want ErrNotDurable", err)
				}
				err := <-second
				if d == Postgres && !errors.Is(err, ErrNotDurable) {
					t.Errorf("the write that saw it: %v, want ErrNotDurable", err)
				}
				if d == SQLite && !errors.Is(err, ErrNotDurable) && !errors.Is(err, ErrUnhealthy) {
					t.Errorf("the write queued behind it: %v, want ErrNotDurable or ErrUnhealthy", err)
				}
				readB := st.Read(ctx, "b", func(v *View) error { _, err := v.Person("b"); return err })
				writeB := st.Update(ctx, "b", bump("b", nil, false))
				if d == SQLite {
					if !errors.Is(readB, ErrUnhealthy) || !errors.Is(writeB, ErrUnhealthy) {
						t.Errorf("after a failed fsync: read %v, write %v; want both ErrUnhealthy", readB, writeB)
					}
					if st.Health(ctx) == nil {
						t.Errorf("health: ok after a failed fsync")
					}
					st.Close()
					st2 := open(t, dir, url, Options{})
					if err := st2.Update(ctx, "b", bump("b", nil, false)); err != nil {
						t.Errorf("after reopening: %v", err)
					}
				} else if readB != nil || writeB != nil {
					t.Errorf("postgres after a failed confirmation: read %v, write %v", readB, writeB)
				}
			})
		})
	}
}

// TestMigrateAccounts: a database of schema 1 (two budgets, geoind per
// window) opened by this build is migrated to one account per person: the
// budget Options.Account gives, every CIP release charged its certified
// epsilon, each window with geoind answers one session charge on its
// first answer, and the service's run of each window unchanged; opened
// without Options.Account, it is refused with the fix and left at schema 1.
func TestMigrateAccounts(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		old, exec := openAtSchema(t, d, dir, url, 1)
		// alice: two windows of geoind answers (0.004 + 0.002, then 0.003)
		// and one CIP release of 0.9; bob: nothing yet.
		for _, id := range []string{"alice", "bob"} {
			exec(`INSERT INTO people (id, token_hash, created_at, config, geo_budget, geo_window, geo_spent, geo_total, cip_budget, cip_spent, seq, tag)
				VALUES (?, ?, 0, ?, 0.02, ?, ?, ?, 4, ?, ?, 7)`, id, []byte("h"), `{"old": "`+id+`"}`,
				map[string]int{"alice": 1}[id], map[string]float64{"alice": 0.003}[id], map[string]float64{"alice": 0.009}[id],
				map[string]float64{"alice": 0.9}[id], map[string]int{"alice": 4}[id])
		}
		for i, c := range []struct {
			kind   string
			win    int
			amount float64
		}{{"geoind", 0, 0.004}, {"geoind", 0, 0.002}, {"cip", 0, 0.9}, {"geoind", 1, 0.003}} {
			exec(`INSERT INTO charges (person_id, seq, created_at, kind, win, amount, request_id, idem_key, body_mac, detail, status, content_type, response)
				VALUES ('alice', ?, 0, ?, ?, ?, 'r', ?, ?, ?, 200, 'application/json', ?)`, i+1, c.kind, c.win, c.amount, fmt.Sprint("k", i), []byte("m"), fmt.Sprint(`{"step":`, i, `}`), []byte("{}"))
		}
		old.Close()

		if _, err := Open(ctx, dir, url, Options{}); err == nil || !strings.Contains(err.Error(), "tracepriv serve") {
			t.Fatalf("migrating people without Options.Account: %v", err)
		}
		const session = 2.5
		var seen []string
		st := open(t, dir, url, Options{Account: func(config string, geo, cip float64) (AccountTerms, error) {
			seen = append(seen, config)
			if geo != 0.02 || cip != 4 {
				t.Errorf("old budgets %v, %v", geo, cip)
			}
			return AccountTerms{Budget: 3.5, SessionCharge: session, Config: strings.Replace(config, "old", "new", 1)}, nil
		}})
		if len(seen) != 2 {
			t.Errorf("Account called for %d people, want 2", len(seen))
		}
		err := st.Scan(ctx, func(v *View) error {
			if n, err := v.SchemaVersion(); err != nil || n != SchemaVersion() {
				return fmt.Errorf("schema %d, %v", n, err)
			}
			a, err := v.Person("alice")
			if err != nil {
				return err
			}
			if a.Budget != 3.5 || a.Spent != 2*session+0.9 || a.GeoSession != 1 || a.Config != `{"new": "alice"}` || a.GeoSpent != 0.003 || a.Seq != 4 {
				return fmt.Errorf("alice: %+v", a)
			}
			b, err := v.Person("bob")
			if err != nil {
				return err
			}
			if b.Budget != 3.5 || b.Spent != 0 || b.GeoSession != -1 {
				return fmt.Errorf("bob: %+v", b)
			}
			cs, err := v.Charges("alice", 0, 10, false)
			if err != nil {
				return err
			}
			want := []float64{session, 0, 0.9, session}
			for i, c := range cs {
				if c.Epsilon != want[i] || c.Origin != "service" {
					return fmt.Errorf("charge %d: epsilon %v origin %q, want %v service", c.Seq, c.Epsilon, c.Origin, want[i])
				}
			}
			run, err := v.GeoindDetails("alice", 0)
			if err != nil || len(run) != 2 || string(run[1]) != `{"step":1}` {
				return fmt.Errorf("window 0's run after the migration: %q %v", run, err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	})
}

// TestIntegrityCheckOwnSchema: on PostgreSQL, IntegrityCheck checks the
// indexes of the tables the store's search_path sees, every one of them
// and no other schema's (two stores in one database here, as pgtest gives
// every test), through amcheck installed in a schema off that path. The
// count is recomputed from pg_indexes; a corrupted index is not planted
// (amcheck's own tests do that), but a check that named another schema's
// index, or missed one of its own, changes the count.
func TestIntegrityCheckOwnSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL: full suite only")
	}
	t.Parallel()
	a := open(t, "", pgtest.Database(t), Options{})
	b := open(t, "", pgtest.Database(t), Options{})
	addPerson(t, a, "a")
	addPerson(t, b, "b")
	ctx := context.Background()
	var want int
	if err := a.db.QueryRow(`SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema()
		AND tablename IN ('people', 'charges', 'schema_migrations', 'credentials')`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if want < 4 {
		t.Fatalf("%d indexes in the store's schema: the recount does not see it", want)
	}
	for _, st := range []*Store{a, b} {
		got, err := st.IntegrityCheck(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if w := fmt.Sprintf("postgres bt_index_check (heapallindexed) on %d indexes: ok", want); got != w {
			t.Errorf("got %q, want %q", got, w)
		}
	}
}
