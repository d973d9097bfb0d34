package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// migration is one versioned schema change, with its statements for each
// dialect, and data, which rewrites the rows the statements left (run in
// the same transaction). Migrations are append-only: a released one is
// never edited.
type migration struct {
	version  int
	name     string
	sqlite   []string
	postgres []string
	data     func(ctx context.Context, tx *sql.Tx, d Dialect, opt Options) error
}

// migrations is the schema history, applied in order at start.
//
// people holds one row per person: the hash of their token, their
// configuration (JSON), and the running totals of the two budgets with the
// geo-indistinguishability window they belong to. seq is the last charge's
// number and tag a random value replaced at every write, which lets the
// service cache a person's mechanism state and know when it is stale.
//
// charges is the ledger, clustered by (person, seq) (SQLite: WITHOUT
// ROWID), so that a person's run is one range scan: one row per answer the service released (a
// location, or a sanitised trace), with its amount, the idempotency key
// and a MAC of the request under the person's token, and the stored
// response returned to a retry. detail is public: the predictive
// mechanism's step (reported point on the plane, decision, cost) or the
// CIP release's parameters. No true location is ever stored.
var migrations = []migration{
	{
		version: 1,
		name:    "people and charges",
		sqlite: []string{
			`CREATE TABLE people (
				id TEXT PRIMARY KEY,
				token_hash BLOB NOT NULL,
				created_at INTEGER NOT NULL,
				config TEXT NOT NULL,
				geo_budget REAL NOT NULL CHECK (geo_budget > 0),
				geo_window INTEGER NOT NULL DEFAULT 0,
				geo_spent REAL NOT NULL DEFAULT 0 CHECK (geo_spent >= 0 AND geo_spent <= geo_budget),
				geo_total REAL NOT NULL DEFAULT 0,
				cip_budget REAL NOT NULL CHECK (cip_budget >= 0),
				cip_spent REAL NOT NULL DEFAULT 0 CHECK (cip_spent >= 0 AND cip_spent <= cip_budget),
				seq INTEGER NOT NULL DEFAULT 0,
				tag INTEGER NOT NULL DEFAULT 0
			) STRICT`,
			`CREATE TABLE charges (
				person_id TEXT NOT NULL REFERENCES people(id),
				seq INTEGER NOT NULL,
				created_at INTEGER NOT NULL,
				kind TEXT NOT NULL CHECK (kind IN ('geoind', 'cip')),
				win INTEGER NOT NULL,
				amount REAL NOT NULL CHECK (amount >= 0),
				request_id TEXT NOT NULL,
				idem_key TEXT NOT NULL,
				body_mac BLOB NOT NULL,
				detail TEXT NOT NULL,
				status INTEGER NOT NULL,
				content_type TEXT NOT NULL,
				response BLOB NOT NULL,
				PRIMARY KEY (person_id, seq),
				UNIQUE (person_id, idem_key)
			) STRICT, WITHOUT ROWID`,
		},
		postgres: []string{
			`CREATE TABLE people (
				id TEXT PRIMARY KEY,
				token_hash BYTEA NOT NULL,
				created_at BIGINT NOT NULL,
				config TEXT NOT NULL,
				geo_budget DOUBLE PRECISION NOT NULL CHECK (geo_budget > 0),
				geo_window BIGINT NOT NULL DEFAULT 0,
				geo_spent DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (geo_spent >= 0 AND geo_spent <= geo_budget),
				geo_total DOUBLE PRECISION NOT NULL DEFAULT 0,
				cip_budget DOUBLE PRECISION NOT NULL CHECK (cip_budget >= 0),
				cip_spent DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (cip_spent >= 0 AND cip_spent <= cip_budget),
				seq BIGINT NOT NULL DEFAULT 0,
				tag BIGINT NOT NULL DEFAULT 0
			)`,
			`CREATE TABLE charges (
				person_id TEXT NOT NULL REFERENCES people(id),
				seq BIGINT NOT NULL,
				created_at BIGINT NOT NULL,
				kind TEXT NOT NULL CHECK (kind IN ('geoind', 'cip')),
				win BIGINT NOT NULL,
				amount DOUBLE PRECISION NOT NULL CHECK (amount >= 0),
				request_id TEXT NOT NULL,
				idem_key TEXT NOT NULL,
				body_mac BYTEA NOT NULL,
				detail TEXT NOT NULL,
				status INTEGER NOT NULL,
				content_type TEXT NOT NULL,
				response BYTEA NOT NULL,
				PRIMARY KEY (person_id, seq),
				UNIQUE (person_id, idem_key)
			)`,
		},
	},
	{
		// One account per person in one currency (package budget): budget
		// and spent are Rényi epsilon at the person's order within their
		// radius, over every mechanism; geo_session is the last window whose
		// geoind session was charged to it (-1: none). A charge's epsilon is
		// what it cost the account (a window's session charge rides on its
		// first answer; the window's later answers cost 0), origin says who
		// drew the release ("service": this service's locate or sanitize;
		// "device": a release drawn elsewhere, charged by POST
		// /v1/people/{id}/charges), certificate its certificate's SHA-256.
		// geo_budget, geo_spent and geo_window now bound one window's
		// session (a rate within the total); cip_budget and cip_spent are
		// no longer written (the account replaces them).
		version: 2,
		name:    "one account per person",
		sqlite: []string{
			`ALTER TABLE people ADD COLUMN budget REAL NOT NULL DEFAULT 0`,
			`ALTER TABLE people ADD COLUMN spent REAL NOT NULL DEFAULT 0`,
			`ALTER TABLE people ADD COLUMN geo_session INTEGER NOT NULL DEFAULT -1`,
			`ALTER TABLE charges ADD COLUMN epsilon REAL NOT NULL DEFAULT 0`,
			`ALTER TABLE charges ADD COLUMN origin TEXT NOT NULL DEFAULT 'service'`,
			`ALTER TABLE charges ADD COLUMN certificate TEXT NOT NULL DEFAULT ''`,
		},
		postgres: []string{
			`ALTER TABLE people ADD COLUMN budget DOUBLE PRECISION NOT NULL DEFAULT 0`,
			`ALTER TABLE people ADD COLUMN spent DOUBLE PRECISION NOT NULL DEFAULT 0`,
			`ALTER TABLE people ADD COLUMN geo_session BIGINT NOT NULL DEFAULT -1`,
			`ALTER TABLE charges ADD COLUMN epsilon DOUBLE PRECISION NOT NULL DEFAULT 0`,
			`ALTER TABLE charges ADD COLUMN origin TEXT NOT NULL DEFAULT 'service'`,
			`ALTER TABLE charges ADD COLUMN certificate TEXT NOT NULL DEFAULT ''`,
		},
		data: migrateAccounts,
	},
	credentialMigration(3),
	pendingCharges(),
}

// AccountTerms are a person's account as migration 2 opens it for a
// person of schema 1 (Options.Account computes them from the person's
// configuration): Budget, in the account's currency, and SessionCharge,
// what one window's geoind session costs in it.
type AccountTerms struct {
	Budget, SessionCharge float64
	// Config is the person's configuration rewritten for the account
	// ("": unchanged).
	Config string
}

// migrateAccounts opens the account of every person of schema 1: the
// budget Options.Account gives, and every past charge priced in the
// account's currency (a CIP release its certified epsilon, each window
// with geoind answers one session charge, on its first answer).
func migrateAccounts(ctx context.Context, tx *sql.Tx, d Dialect, opt Options) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, config, geo_budget, cip_budget FROM people ORDER BY id`)
	if err != nil {
		return err
	}
	type old struct {
		id, config           string
		geoBudget, cipBudget float64
	}
	var people []old
	for rows.Next() {
		var p old
		if err := rows.Scan(&p.id, &p.config, &p.geoBudget, &p.cipBudget); err != nil {
			rows.Close()
			return err
		}
		people = append(people, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(people) > 0 && opt.Account == nil {
		return errors.New("the database holds people of schema 1, whose accounts only the service can open: open it with tracepriv serve (or server.New)")
	}
	for _, p := range people {
		terms, err := opt.Account(p.config, p.geoBudget, p.cipBudget)
		if err != nil {
			return fmt.Errorf("person %s: %w", p.id, err)
		}
		// A CIP charge costs its certified epsilon; the first geoind answer
		// of each window carries that window's session charge.
		q := []string{
			`UPDATE charges SET epsilon = amount WHERE person_id = ? AND kind = 'cip'`,
			`UPDATE charges SET epsilon = ? WHERE person_id = ? AND kind = 'geoind' AND seq IN
				(SELECT MIN(seq) FROM charges WHERE person_id = ? AND kind = 'geoind' GROUP BY win)`,
			`UPDATE people SET budget = ?,
				spent = COALESCE((SELECT SUM(epsilon) FROM charges WHERE person_id = ?), 0),
				geo_session = COALESCE((SELECT MAX(win) FROM charges WHERE person_id = ? AND kind = 'geoind'), -1)
				WHERE id = ?`,
		}
		args := [][]any{{p.id}, {terms.SessionCharge, p.id, p.id}, {terms.Budget, p.id, p.id, p.id}}
		if terms.Config != "" {
			q = append(q, `UPDATE people SET config = ? WHERE id = ?`)
			args = append(args, []any{terms.Config, p.id})
		}
		for i := range q {
			if _, err := tx.ExecContext(ctx, rebind(d, q[i]), args[i]...); err != nil {
				return fmt.Errorf("person %s: %w", p.id, err)
			}
		}
	}
	return nil
}

// SchemaVersion is the schema version this build migrates to.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrate applies the missing migrations, each in its own transaction
// together with its row in schema_migrations, so that a crash leaves the
// schema at a version boundary. It is idempotent, serialised against
// another server starting on the same database (PostgreSQL advisory lock;
// SQLite's write lock), and refuses a database whose schema is newer than
// this build.
func migrate(ctx context.Context, s *Store) error {
	db := s.db
	if s.wdb != nil {
		db = s.wdb
	}
	create := `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`
	if _, err := db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	for _, m := range migrations {
		if s.opt.maxVersion > 0 && m.version > s.opt.maxVersion {
			break
		}
		if err := applyMigration(ctx, db, s.dialect, m, s.opt); err != nil {
			return err
		}
	}
	var newest int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("store: schema version: %w", err)
	}
	if newest > SchemaVersion() {
		return fmt.Errorf("store: the database schema is at version %d, newer than this build's %d: upgrade tracepriv", newest, SchemaVersion())
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, d Dialect, m migration, opt Options) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %d: %w", m.version, err)
	}
	defer tx.Rollback()
	if d == Postgres {
		// Two servers starting at once wait for each other here.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7261847)`); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, rebind(d, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.version).Scan(&n); err != nil {
		return fmt.Errorf("store: migration %d: %w", m.version, err)
	}
	if n > 0 {
		return nil
	}
	stmts := m.sqlite
	if d == Postgres {
		stmts = m.postgres
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
		}
	}
	if m.data != nil {
		if err := m.data(ctx, tx, d, opt); err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, rebind(d, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
		m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("store: migration %d: %w", m.version, err)
	}
	return tx.Commit()
}
