package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// IntegrityCheck runs the database's own consistency check: SQLite's
// PRAGMA integrity_check; on PostgreSQL, amcheck's bt_index_check on the
// service's indexes when the extension is installed (skipped, and said
// so, otherwise). It returns what was checked. First, credentials must
// mirror people (checkCredentials).
func (s *Store) IntegrityCheck(ctx context.Context) (string, error) {
	if err := s.checkCredentials(ctx); err != nil {
		return "", err
	}
	if s.dialect == SQLite {
		rows, err := s.db.QueryContext(ctx, "PRAGMA integrity_check")
		if err != nil {
			return "", err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return "", err
			}
			out = append(out, line)
		}
		if err := rows.Err(); err != nil {
			return "", err
		}
		if len(out) != 1 || out[0] != "ok" {
			return "", fmt.Errorf("sqlite integrity_check: %s", strings.Join(out, "; "))
		}
		return "sqlite integrity_check: ok", nil
	}
	// The check only reads: amcheck is used where an administrator (or the
	// test setup) installed it, in whichever schema, which need not be on
	// the service's search_path.
	var amcheck sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT quote_ident(n.nspname) FROM pg_extension e
		JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'amcheck'`).Scan(&amcheck); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	if !amcheck.Valid {
		return "postgres: the amcheck extension is not installed, index check skipped", nil
	}
	// The service's tables are the ones its unqualified names resolve to
	// (pg_table_is_visible): a database may hold other schemas with tables
	// of the same names, which are not the service's to check.
	rows, err := s.db.QueryContext(ctx, `SELECT c.oid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = c.relam
		WHERE t.relname IN ('people', 'charges', 'schema_migrations', 'credentials') AND pg_table_is_visible(t.oid)
		AND a.amname = 'btree'`)
	if err != nil {
		return "", err
	}
	var idx []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return "", err
		}
		idx = append(idx, n)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return "", err
	}
	for _, n := range idx {
		if _, err := s.db.ExecContext(ctx, "SELECT "+amcheck.String+".bt_index_check($1::regclass, true)", n); err != nil {
			return "", fmt.Errorf("postgres bt_index_check %s: %w", n, err)
		}
	}
	return fmt.Sprintf("postgres bt_index_check (heapallindexed) on %d indexes: ok", len(idx)), nil
}
