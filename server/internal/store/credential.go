package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// The credentials table holds every person's token hash (kept by triggers on people; see
// credentialMigration) and one more row, the end row, whose id sorts after every person's.
// Credential reads the first row at or after the id, so that every lookup finds exactly one
// row and fetches it from the same table: the person's own row if they exist, else the next
// person's, or the end row. A lookup that returns a row or none (a LEFT JOIN on people, before)
// fetches a found row from the table after the index and an unknown id's from nowhere, and that
// fetch showed: 0.3 to 1.6 µs on both stores, once 4.1 µs on PostgreSQL under load (issue 32).
const credentialQuery = `SELECT id, token_hash FROM credentials WHERE id >= ? ORDER BY id LIMIT 1`

// credentialEnd is the end row's id: DEL sorts after every byte of a person's id
// ([A-Za-z0-9._-], server.validID) in byte order (SQLite's BINARY, PostgreSQL's "C" collation
// of credentials.id), and no person can be given it.
const credentialEnd = "\x7f"

// credentialRebuild is the fix, in errors, for a credentials table that no longer mirrors
// people: the statements of credentialRebuildSQL.
func credentialRebuild(d Dialect) string {
	return "with the service stopped, rebuild it in one transaction: " + strings.Join(credentialRebuildSQL(d), "; ")
}

// credentialRebuildSQL rebuilds credentials from people, with the end row.
func credentialRebuildSQL(d Dialect) []string {
	end := `chr(127), sha256('x')`
	if d == SQLite {
		end = `char(127), zeroblob(32)`
	}
	return []string{
		`DELETE FROM credentials`,
		`INSERT INTO credentials (id, token_hash) SELECT id, token_hash FROM people`,
		`INSERT INTO credentials (id, token_hash) VALUES (` + end + `)`,
	}
}

// DummyTokenHash is what Credential returns as the token hash of an unknown id: the
// SHA-256 of a string that is not a token, of the size of a real hash.
var DummyTokenHash = sha256.Sum256([]byte("tracepriv: no such person"))

// Credential is what authentication reads of a person before it knows the token is right.
type Credential struct {
	// TokenHash is the person's token hash, or DummyTokenHash when there is no such person.
	TokenHash []byte
	// Exists says whether the person exists; compare it only after the constant-time
	// comparison of the token's hash, and together with it.
	Exists bool
}

// Credential reads the token hash of person id with one statement that fetches one row from
// the credentials table whether or not the person exists (see credentialQuery), and tells the
// two apart with constant-time comparisons: for authentication, so that the time a wrong token
// takes does not say whether the person exists. It reads nothing else (Lookup reads the person
// once the token is right).
func (s *Store) Credential(ctx context.Context, id string) (Credential, error) {
	// An id past the end row (none a person can have) is read as the end row: one row, always.
	// A branch on the id alone, which the client sent.
	key := id
	if key > credentialEnd {
		key = credentialEnd
	}
	var found string
	var hash []byte
	if err := s.cred.QueryRowContext(ctx, key).Scan(&found, &hash); errors.Is(err, sql.ErrNoRows) {
		return Credential{}, wrap(ErrUnavailable, fmt.Errorf("the credentials table lost its end row (id %q): %s", credentialEnd, credentialRebuild(s.dialect)))
	} else if err != nil {
		return Credential{}, wrap(ErrUnavailable, err)
	}
	if len(hash) != len(DummyTokenHash) {
		return Credential{}, wrap(ErrUnavailable, fmt.Errorf("credentials: the token hash of %q has %d bytes, want %d", found, len(hash), len(DummyTokenHash)))
	}
	// The end row is no person's, even when asked for by its id.
	exists := sameID(found, id) & (1 - sameID(found, credentialEnd))
	c := Credential{TokenHash: make([]byte, len(DummyTokenHash)), Exists: exists == 1}
	copy(c.TokenHash, DummyTokenHash[:])
	subtle.ConstantTimeCopy(exists, c.TokenHash, hash)
	return c, nil
}

// idCompareLen covers every person's id (server.validID: at most 128 bytes).
const idCompareLen = 128

// sameID is 1 if a == b, else 0, in a time that depends on neither: both are compared over
// idCompareLen bytes, zero-padded (their lengths are compared too).
func sameID(a, b string) int {
	var pa, pb [idCompareLen]byte
	copy(pa[:], a)
	copy(pb[:], b)
	// A longer id is no person's: only its length can tell, and it is the client's own.
	long := 0
	if len(a) > idCompareLen || len(b) > idCompareLen {
		long = 1
	}
	return subtle.ConstantTimeCompare(pa[:], pb[:]) & subtle.ConstantTimeEq(int32(min(len(a), idCompareLen+1)), int32(min(len(b), idCompareLen+1))) & (1 - long)
}

// checkCredentials checks that credentials is people's ids and token hashes and the end row,
// nothing more nor less (IntegrityCheck): a person missing there could not authenticate, a
// row of no person would be read in place of an unknown id's neighbour.
func (s *Store) checkCredentials(ctx context.Context) error {
	collate := ""
	if s.dialect == Postgres {
		collate = ` COLLATE "C"` // people.id's collation is the database's: compare bytes
	}
	var missing, extra, end int
	err := s.db.QueryRowContext(ctx, rebind(s.dialect, `SELECT
		(SELECT COUNT(*) FROM people AS p WHERE NOT EXISTS
			(SELECT 1 FROM credentials AS c WHERE c.id = p.id`+collate+` AND c.token_hash = p.token_hash)),
		(SELECT COUNT(*) FROM credentials AS c WHERE c.id <> ? AND NOT EXISTS
			(SELECT 1 FROM people AS p WHERE p.id`+collate+` = c.id)),
		(SELECT COUNT(*) FROM credentials WHERE id = ?)`), credentialEnd, credentialEnd).Scan(&missing, &extra, &end)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if missing != 0 || extra != 0 || end != 1 {
		return fmt.Errorf("credentials: %d people missing or with another token hash, %d rows of no person, %d end rows (want 0, 0, 1): the triggers of schema 3 were bypassed; %s", missing, extra, end, credentialRebuild(s.dialect))
	}
	return nil
}
