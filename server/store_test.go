package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMigrations: migrations apply once, re-opening applies nothing, and a
// database from a newer build is refused.
func TestMigrations(t *testing.T) {
	forEachStore(t, func(t *testing.T, d Dialect) {
		o := storeOptions(t, d)
		ctx := context.Background()
		for i := range 3 {
			st, err := OpenStore(ctx, o.DataDir, o.DB)
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
		st, err := OpenStore(ctx, o.DataDir, o.DB)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.db.Exec(rebind(d, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 'x')`), SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if _, err := OpenStore(ctx, o.DataDir, o.DB); err == nil || !strings.Contains(err.Error(), "newer than this build") {
			t.Errorf("a newer schema: %v", err)
		}
	})
}

func TestRebindAndRedact(t *testing.T) {
	if got := rebind(Postgres, "a = ? AND b = ?"); got != "a = $1 AND b = $2" {
		t.Errorf("rebind: %q", got)
	}
	if got := RedactURL("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Errorf("redact: %q", got)
	}
}

// addTestPerson inserts a bare person row for store-level tests.
func addTestPerson(t *testing.T, st *Store, id string) {
	t.Helper()
	err := st.Update(context.Background(), func(tx *Tx) error {
		_, err := tx.Exec(`INSERT INTO people (id, token_hash, created_at, config, geo_budget, cip_budget) VALUES (?, ?, 0, '{}', 1, 0)`, id, []byte("h"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seqOf reads a person's seq through the read pool.
func seqOf(t *testing.T, st *Store, id string) int64 {
	t.Helper()
	var n int64
	if err := st.DB().QueryRow(rebind(st.Dialect(), `SELECT seq FROM people WHERE id = ?`), id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// bump is a job that increments a person's seq after reading it under the
// person's lock, failing with fail (its write then rolled back) or
// panicking.
func bump(id string, fail error, panics bool) func(*Tx) error {
	return func(tx *Tx) error {
		row, _, err := lockPerson(tx, id, "")
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE people SET seq = ? WHERE id = ?`, row.seq+1, id); err != nil {
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
	forEachStore(t, func(t *testing.T, d Dialect) {
		o := storeOptions(t, d)
		st, err := OpenStore(context.Background(), o.DataDir, o.DB)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		addTestPerson(t, st, "u")
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
				err := st.Update(context.Background(), func(tx *Tx) error {
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

// TestSQLiteAnswerAfterFsync: an Update returns only after the WAL fsync
// that follows its batch's COMMIT; while that fsync is held, the write is
// committed but the caller has no answer; a failed fsync fails the batch
// and every later write (the store must be restarted).
func TestSQLiteAnswerAfterFsync(t *testing.T) {
	dir := t.TempDir()
	var held atomic.Bool
	release := make(chan struct{})
	syncing := make(chan struct{}, 100)
	var fail atomic.Bool
	st, err := openStore(context.Background(), dir, "", func() error {
		if held.Load() {
			syncing <- struct{}{}
			<-release
		}
		if fail.Load() {
			return errors.New("injected fsync failure")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	addTestPerson(t, st, "f")

	held.Store(true)
	done := make(chan error, 1)
	go func() { done <- st.Update(context.Background(), bump("f", nil, false)) }()
	<-syncing // committed, now in the fsync
	if got := seqOf(t, st, "f"); got != 1 {
		t.Fatalf("seq %d while the batch is in its fsync, want the committed 1", got)
	}
	// More jobs meanwhile form the next batch, which waits for the syncer.
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = st.Update(context.Background(), bump("f", nil, false)) }()
	}
	select {
	case err := <-done:
		t.Fatalf("Update returned (%v) before its batch's fsync", err)
	case <-time.After(100 * time.Millisecond):
	}
	held.Store(false)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("job %d: %v", i, err)
		}
	}
	if got := seqOf(t, st, "f"); got != 11 {
		t.Errorf("seq %d, want 11", got)
	}

	fail.Store(true)
	var ce *CommitError
	if err := st.Update(context.Background(), bump("f", nil, false)); !errors.As(err, &ce) {
		t.Fatalf("Update after a failed fsync: %v, want a CommitError", err)
	}
	fail.Store(false)
	if err := st.Update(context.Background(), bump("f", nil, false)); !errors.As(err, &ce) {
		t.Errorf("Update after an earlier failed fsync: %v, want the store to refuse writes", err)
	}
}
