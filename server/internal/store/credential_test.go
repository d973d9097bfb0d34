package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// createWithHash inserts a bare person with the token hash h.
func createWithHash(t *testing.T, st *Store, id string, h []byte) {
	t.Helper()
	err := st.Update(context.Background(), id, func(tx *Tx) error {
		return tx.CreatePerson(&PersonRow{ID: id, TokenHash: h, Config: "{}", GeoBudget: 1, Created: time.Unix(0, 0)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// aliceAndCarol opens a fresh store with two people, alice and carol, of token hashes
// hashOf("a") and hashOf("c").
func aliceAndCarol(t *testing.T, dir, url string) *Store {
	st := open(t, dir, url, Options{})
	createWithHash(t, st, "alice", hashOf("a"))
	createWithHash(t, st, "carol", hashOf("c"))
	return st
}

func hashOf(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

// unknownIDs are ids of no person in a store of alice and carol: before both, between, after
// both, the end row's own id, past it (clamped to it), a long one sharing alice's prefix, and
// the empty one.
var unknownIDs = []string{"aaron", "alicd", "alicf", "bob", "dave", "zzzz", credentialEnd, credentialEnd + "x",
	"\u00fc", "<b>", "alice" + strings.Repeat("e", 200), ""}

// TestCredential: Credential returns the person's token hash and Exists for a person, the
// dummy hash and not Exists for every other id wherever it sorts (the end row included), and
// follows a new token hash at once.
func TestCredential(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		st := aliceAndCarol(t, dir, url)
		check := func(id string, want []byte, exists bool) {
			t.Helper()
			c, err := st.Credential(ctx, id)
			if err != nil {
				t.Fatalf("%q: %v", id, err)
			}
			if !bytes.Equal(c.TokenHash, want) || c.Exists != exists {
				t.Errorf("%q: hash %x, exists %v; want %x, %v", id, c.TokenHash, c.Exists, want, exists)
			}
		}
		check("alice", hashOf("a"), true)
		check("carol", hashOf("c"), true)
		for _, id := range unknownIDs {
			check(id, DummyTokenHash[:], false)
		}
		if err := st.Update(ctx, "alice", func(tx *Tx) error { return tx.SetTokenHash("alice", hashOf("a2")) }); err != nil {
			t.Fatal(err)
		}
		check("alice", hashOf("a2"), true)
	})
}

// credentialVersion is the version of credentialMigration in migrations.
func credentialVersion(t *testing.T) int {
	for _, m := range migrations {
		if strings.HasPrefix(m.name, "credentials") {
			return m.version
		}
	}
	t.Fatal("no credentials migration")
	return 0
}

// TestMigrateCredentials: a database of the schema before credentials, with people, gets
// every person's credential and the end row, and running the migration's statements again
// changes nothing (it is idempotent).
func TestMigrateCredentials(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		v := credentialVersion(t)
		old, err := Open(ctx, dir, url, Options{maxVersion: v - 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"alice", "carol"} {
			if _, err := old.db.Exec(rebind(d, `INSERT INTO people (id, token_hash, created_at, config, geo_budget, cip_budget, budget)
				VALUES (?, ?, 0, '{}', 1, 0, 1)`), id, hashOf(id)); err != nil {
				t.Fatal(err)
			}
		}
		old.Close()
		st := open(t, dir, url, Options{})
		credentials := func() string {
			t.Helper()
			rows, err := st.db.Query(`SELECT id, token_hash FROM credentials ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var b strings.Builder
			for rows.Next() {
				var id string
				var h []byte
				if err := rows.Scan(&id, &h); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%q %x\n", id, h[:4])
			}
			return b.String()
		}
		want := fmt.Sprintf("%q %x\n%q %x\n%q %x\n", "alice", hashOf("alice")[:4], "carol", hashOf("carol")[:4], credentialEnd, DummyTokenHash[:4])
		if got := credentials(); got != want {
			t.Errorf("credentials after the migration:\n%s want\n%s", got, want)
		}
		m := credentialMigration(v)
		stmts := m.sqlite
		if d == Postgres {
			stmts = m.postgres
		}
		for _, q := range stmts {
			if _, err := st.db.Exec(q); err != nil {
				t.Fatalf("again: %v\n%s", err, q)
			}
		}
		if got := credentials(); got != want {
			t.Errorf("credentials after the migration ran again:\n%s want\n%s", got, want)
		}
		// The triggers, once more: a new person and a new token.
		createWithHash(t, st, "bob", hashOf("b"))
		if err := st.Update(ctx, "alice", func(tx *Tx) error { return tx.SetTokenHash("alice", hashOf("a2")) }); err != nil {
			t.Fatal(err)
		}
		for id, h := range map[string][]byte{"alice": hashOf("a2"), "bob": hashOf("b"), "carol": hashOf("carol")} {
			if c, err := st.Credential(ctx, id); err != nil || !c.Exists || !bytes.Equal(c.TokenHash, h) {
				t.Errorf("%s after the migration: %x, %v, %v", id, c.TokenHash, c.Exists, err)
			}
		}
		// IntegrityCheck sees credentials that no longer mirror people.
		if _, err := st.IntegrityCheck(ctx); err != nil {
			t.Errorf("integrity: %v", err)
		}
		for _, c := range []struct {
			breaks, mends string
			mendArgs      []any
		}{
			{`UPDATE credentials SET token_hash = ? WHERE id = 'bob'`, `UPDATE credentials SET token_hash = ? WHERE id = 'bob'`, []any{hashOf("b")}},
			{`INSERT INTO credentials (id, token_hash) VALUES ('dave', ?)`, `DELETE FROM credentials WHERE id = 'dave'`, nil},
			{`DELETE FROM credentials WHERE token_hash = ?`, `INSERT INTO credentials (id, token_hash) VALUES (?, ?)`, []any{credentialEnd, DummyTokenHash[:]}},
		} {
			if _, err := st.db.Exec(rebind(d, c.breaks), DummyTokenHash[:]); err != nil {
				t.Fatal(err)
			}
			if _, err := st.IntegrityCheck(ctx); err == nil || !strings.Contains(err.Error(), "credentials:") {
				t.Errorf("after %s: integrity %v, want a credentials error", c.breaks, err)
			}
			if _, err := st.db.Exec(rebind(d, c.mends), c.mendArgs...); err != nil {
				t.Fatal(err)
			}
			if _, err := st.IntegrityCheck(ctx); err != nil {
				t.Errorf("mended by %s: %v", c.mends, err)
			}
		}
		// With no credentials at all, an id past every person is refused, not read as unknown
		// by another path; the fix the errors name mends it.
		if _, err := st.db.Exec(`DELETE FROM credentials`); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Credential(ctx, "zed"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "rebuild") {
			t.Errorf("no end row: %v, want ErrUnavailable naming the fix", err)
		}
		for _, q := range credentialRebuildSQL(d) {
			if _, err := st.db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if _, err := st.IntegrityCheck(ctx); err != nil {
			t.Errorf("rebuilt: %v", err)
		}
		if c, err := st.Credential(ctx, "bob"); err != nil || !c.Exists {
			t.Errorf("bob, rebuilt: %+v, %v", c, err)
		}
	})
}

// oldCredentialQuery is the statement Credential ran before the credentials table: one row for
// any id, from a LEFT JOIN on people. TestCredentialSameWork's control: its work differs.
func oldCredentialQuery(d Dialect) string {
	blob := "BLOB"
	if d == Postgres {
		blob = "BYTEA"
	}
	return rebind(d, `SELECT COALESCE(p.token_hash, q.dummy), p.id IS NOT NULL
FROM (SELECT CAST(? AS TEXT) AS id, CAST(? AS `+blob+`) AS dummy) AS q
LEFT JOIN people AS p ON p.id = q.id`)
}

// work is what a statement read, counted by the database itself.
type work struct {
	pages int    // PostgreSQL: shared buffers hit or read; SQLite: pages the pager served
	rows  int    // rows returned
	plan  string // PostgreSQL: the plan's node types
}

// measureWork runs query with args on conn and counts its work: on PostgreSQL with EXPLAIN
// (ANALYZE, BUFFERS), on SQLite with the connection's pager counters (sqlite3_db_status
// CACHE_HIT and CACHE_MISS), reset before the statement.
func measureWork(t *testing.T, conn *sql.Conn, d Dialect, query string, args ...any) work {
	t.Helper()
	ctx := context.Background()
	if d == Postgres {
		var out string
		if err := conn.QueryRowContext(ctx, `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF, FORMAT JSON) `+query, args...).Scan(&out); err != nil {
			t.Fatal(err)
		}
		type node struct {
			Type  string  `json:"Node Type"`
			Index string  `json:"Index Name"`
			Rows  float64 `json:"Actual Rows"`
			Hit   int     `json:"Shared Hit Blocks"`
			Read  int     `json:"Shared Read Blocks"`
			Plans []node  `json:"Plans"`
		}
		var ex []struct{ Plan node }
		if err := json.Unmarshal([]byte(out), &ex); err != nil || len(ex) != 1 {
			t.Fatalf("EXPLAIN: %v\n%s", err, out)
		}
		var types func(n node) string
		types = func(n node) string {
			s := n.Type
			if n.Index != "" {
				s += " using " + n.Index
			}
			for _, c := range n.Plans {
				s += " (" + types(c) + ")"
			}
			return s
		}
		p := ex[0].Plan
		return work{pages: p.Hit + p.Read, rows: int(p.Rows), plan: types(p)}
	}
	status := func(reset bool) (n int) {
		err := conn.Raw(func(dc any) error {
			for _, op := range []sqlite.DBStatusOp{sqlite.DBStatusCacheHit, sqlite.DBStatusCacheMiss} {
				cur, _, err := dc.(sqlite.DBStatus).Status(op, reset)
				if err != nil {
					return err
				}
				n += cur
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Pages served from the memory map are not counted: read them through the pager.
	if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 0`); err != nil {
		t.Fatal(err)
	}
	status(true)
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		t.Fatal(err)
	}
	w := work{}
	for rows.Next() {
		w.rows++
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	w.pages = status(false)
	return w
}

// TestCredentialSameWork: Credential's statement does the same work for every id, a person's
// or not: it returns one row and reads as many pages (counted by the database: PostgreSQL's
// buffers, SQLite's pager), whatever the id and wherever it sorts. The control: the same count
// sees the work of the statement before the credentials table differ (an existing person's row
// was fetched from people after the index, an unknown id's from nowhere), or the count is blind.
func TestCredentialSameWork(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		st := aliceAndCarol(t, dir, url)
		conn, err := st.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ids := append([]string{"alice", "carol"}, unknownIDs...)
		q := rebind(d, credentialQuery)
		var first work
		for i, id := range ids {
			key := id
			if key > credentialEnd {
				key = credentialEnd // as Credential clamps it
			}
			measureWork(t, conn, d, q, key) // warm: the first run may read the catalogue
			w := measureWork(t, conn, d, q, key)
			t.Logf("%q: %+v", id, w)
			if d == Postgres && !strings.Contains(w.plan, "Index Scan using credentials_pkey") {
				t.Errorf("%q: plan %s, want an index scan of credentials_pkey", id, w.plan)
			}
			if i == 0 {
				first = w
				if w.rows != 1 || w.pages == 0 {
					t.Fatalf("%q: %+v: want one row and some pages", id, w)
				}
			} else if w.rows != first.rows || w.pages != first.pages {
				t.Errorf("%q: %d rows, %d pages; alice: %d rows, %d pages", id, w.rows, w.pages, first.rows, first.pages)
			}
		}
		// The control: the statement before reads more for alice than for an unknown id.
		old := oldCredentialQuery(d)
		measureWork(t, conn, d, old, "alice", DummyTokenHash[:])
		measureWork(t, conn, d, old, "alicf", DummyTokenHash[:])
		we := measureWork(t, conn, d, old, "alice", DummyTokenHash[:])
		wu := measureWork(t, conn, d, old, "alicf", DummyTokenHash[:])
		t.Logf("control, the statement before: alice %+v, alicf %+v", we, wu)
		if we.pages <= wu.pages {
			t.Errorf("control: the statement before read %d pages for alice and %d for alicf: the count does not see the fetch of a found row", we.pages, wu.pages)
		}
	})
}

// TestCredentialSameWorkMany: with people enough for a b-tree of several levels and pages,
// every person's id reads as many pages, and an unknown id reads as many, but for the few whose
// next person begins the next leaf page (one step right, on either database), at most one
// per leaf page, never fewer.
func TestCredentialSameWorkMany(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of statements: not in -short (TestCredentialSameWork is)")
	}
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		st := open(t, dir, url, Options{})
		const n = 2000
		tx, err := st.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d == SQLite {
			tx.Rollback()
			tx, err = st.wdb.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
		}
		ins := rebind(d, `INSERT INTO people (id, token_hash, created_at, config, geo_budget, cip_budget, budget) VALUES (?, ?, 0, '{}', 1, 0, 1)`)
		for i := range n {
			if _, err := tx.Exec(ins, fmt.Sprintf("person-%05d", 2*i), hashOf(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if d == Postgres {
			if _, err := st.db.Exec(`VACUUM ANALYZE credentials`); err != nil {
				t.Fatal(err)
			}
		}
		conn, err := st.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		q := rebind(d, credentialQuery)
		count := func(id string) int {
			measureWork(t, conn, d, q, id)
			w := measureWork(t, conn, d, q, id)
			if w.rows != 1 {
				t.Fatalf("%q: %d rows", id, w.rows)
			}
			return w.pages
		}
		// Unknown id 2i−1 reads person 2i's row, as person 2i does.
		existing, diffs := map[int]int{}, map[int]int{}
		for i := range n {
			e := count(fmt.Sprintf("person-%05d", 2*i))
			u := count(fmt.Sprintf("person-%05d", 2*i-1))
			existing[e]++
			diffs[u-e]++
		}
		var leaves int
		leafQuery := `SELECT relpages FROM pg_class WHERE oid = 'credentials_pkey'::regclass` // the schema's own
		if d == SQLite {
			leafQuery = `SELECT COUNT(*) FROM dbstat WHERE name = 'credentials' AND pagetype = 'leaf'`
		}
		if err := st.db.QueryRow(leafQuery).Scan(&leaves); err != nil {
			t.Fatal(err)
		}
		t.Logf("pages read: existing %v; unknown − its next person %v; %d index pages", existing, diffs, leaves)
		if len(existing) != 1 {
			t.Errorf("people's ids read different numbers of pages: %v", existing)
		}
		if diffs[0]+diffs[1] != n || diffs[1] > leaves {
			t.Errorf("unknown ids read %v pages more than the person after them: want 0, or 1 for at most one per leaf page (%d)", diffs, leaves)
		}
	})
}
