package store

import (
	"context"
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
	// test setup) installed it.
	var amcheck bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'amcheck')`).Scan(&amcheck); err != nil {
		return "", err
	}
	if !amcheck {
		return "postgres: the amcheck extension is not installed, index check skipped", nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = c.relam
		WHERE t.relname IN ('people', 'charges', 'schema_migrations', 'credentials') AND a.amname = 'btree'`)
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
	rows.Close()
	for _, n := range idx {
		if _, err := s.db.ExecContext(ctx, "SELECT bt_index_check($1::regclass, true)", n); err != nil {
			return "", fmt.Errorf("postgres bt_index_check %s: %w", n, err)
		}
	}
	return fmt.Sprintf("postgres bt_index_check (heapallindexed) on %d indexes: ok", len(idx)), nil
}
