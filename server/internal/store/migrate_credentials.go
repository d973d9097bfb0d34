package store

import "fmt"

// credentialMigration is the schema change of version v that gives Credential its table (see
// credentialQuery): credentials holds (id, token_hash) of every person and the end row
// (credentialEnd, with DummyTokenHash), filled from people and kept by triggers on people, so
// that every code path that writes a person's token hash keeps it. It is idempotent (IF NOT
// EXISTS, upserts), so that a half-applied run or a database that has it already is no error.
func credentialMigration(v int) migration {
	end := fmt.Sprintf("%X", DummyTokenHash[:])
	return migration{
		version: v,
		name:    "credentials: one row for any id",
		sqlite: []string{
			`CREATE TABLE IF NOT EXISTS credentials (
				id TEXT PRIMARY KEY,
				token_hash BLOB NOT NULL
			) STRICT, WITHOUT ROWID`,
			`INSERT INTO credentials (id, token_hash) SELECT id, token_hash FROM people WHERE true
				ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash`,
			`INSERT INTO credentials (id, token_hash) VALUES (char(127), X'` + end + `') ON CONFLICT (id) DO NOTHING`,
			`CREATE TRIGGER IF NOT EXISTS people_credential_insert AFTER INSERT ON people BEGIN
				INSERT INTO credentials (id, token_hash) VALUES (NEW.id, NEW.token_hash)
					ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash;
			END`,
			`CREATE TRIGGER IF NOT EXISTS people_credential_update AFTER UPDATE OF id, token_hash ON people BEGIN
				DELETE FROM credentials WHERE id = OLD.id;
				INSERT INTO credentials (id, token_hash) VALUES (NEW.id, NEW.token_hash)
					ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash;
			END`,
			`CREATE TRIGGER IF NOT EXISTS people_credential_delete AFTER DELETE ON people BEGIN
				DELETE FROM credentials WHERE id = OLD.id;
			END`,
		},
		postgres: []string{
			// "C": byte order, the order credentialEnd and Credential's clamp assume.
			`CREATE TABLE IF NOT EXISTS credentials (
				id TEXT COLLATE "C" PRIMARY KEY,
				token_hash BYTEA NOT NULL
			)`,
			`INSERT INTO credentials (id, token_hash) SELECT id, token_hash FROM people
				ON CONFLICT (id) DO UPDATE SET token_hash = EXCLUDED.token_hash`,
			`INSERT INTO credentials (id, token_hash) VALUES (chr(127), '\x` + end + `'::bytea) ON CONFLICT (id) DO NOTHING`,
			`CREATE OR REPLACE FUNCTION people_credential() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP <> 'INSERT' THEN
					DELETE FROM credentials WHERE id = OLD.id;
				END IF;
				IF TG_OP <> 'DELETE' THEN
					INSERT INTO credentials (id, token_hash) VALUES (NEW.id, NEW.token_hash)
						ON CONFLICT (id) DO UPDATE SET token_hash = EXCLUDED.token_hash;
				END IF;
				RETURN NULL;
			END $$`,
			`DROP TRIGGER IF EXISTS people_credential ON people`,
			`CREATE TRIGGER people_credential AFTER INSERT OR UPDATE OF id, token_hash OR DELETE ON people
				FOR EACH ROW EXECUTE FUNCTION people_credential()`,
		},
	}
}
