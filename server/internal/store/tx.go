package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/budget"
)

// Tx is the write transaction an Update function runs in.
type Tx struct {
	tx      *sql.Tx
	dialect Dialect
	ctx     context.Context
	hooks   *[]func()
	stmts   *stmtCache // SQLite writer only
}

// stmtCache keeps the statements prepared in one SQLite batch: parsing a
// statement costs more than running it, and a batch runs the same few
// statements for every job. (database/sql cannot carry a statement
// prepared on a connection into a transaction without preparing it again,
// so the cache lives as long as the batch's transaction.)
type stmtCache struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := c.m[q]; ok {
		return st, nil
	}
	st, err := c.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.m[q] = st
	return st, nil
}

// OnCommit registers f to run after the transaction committed durably
// (never if it is rolled back or its durability is unknown).
func (t *Tx) OnCommit(f func()) { *t.hooks = append(*t.hooks, f) }

func (t *Tx) exec(q string, args ...any) (sql.Result, error) {
	if t.stmts != nil {
		st, err := t.stmts.get(t.ctx, q)
		if err != nil {
			return nil, err
		}
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, rebind(t.dialect, q), args...)
}

func (t *Tx) queryRow(q string, args ...any) *sql.Row {
	if t.stmts != nil {
		if st, err := t.stmts.get(t.ctx, q); err == nil {
			return st.QueryRowContext(t.ctx, args...)
		}
	}
	return t.tx.QueryRowContext(t.ctx, rebind(t.dialect, q), args...)
}

func (t *Tx) query(q string, args ...any) (*sql.Rows, error) {
	if t.stmts != nil {
		st, err := t.stmts.get(t.ctx, q)
		if err != nil {
			return nil, err
		}
		return st.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, rebind(t.dialect, q), args...)
}

// querier runs read queries with "?" placeholders on a read transaction.
type querier struct {
	tx  *sql.Tx
	d   Dialect
	ctx context.Context
}

func (q querier) queryRow(s string, args ...any) *sql.Row {
	return q.tx.QueryRowContext(q.ctx, rebind(q.d, s), args...)
}

func (q querier) query(s string, args ...any) (*sql.Rows, error) {
	return q.tx.QueryContext(q.ctx, rebind(q.d, s), args...)
}

// View is a read-only snapshot of the store (Store.Read, Store.Scan).
type View struct{ q querier }

// PersonRow is a person's row of the people table (api.Person is the
// configuration's wire form): the hash of their token, their configuration
// (JSON, fixed at creation), their account, and the running totals of
// their geoind sessions. Seq is the number of the last charge; Tag is a
// random value replaced at every geo-indistinguishability answer, which
// lets the service cache a person's mechanism state and know when it is
// stale.
type PersonRow struct {
	ID        string
	TokenHash []byte
	Created   time.Time
	Config    string
	// Budget and Spent are the person's one account, in its currency
	// (Rényi epsilon at the person's order within their radius; package
	// budget): every charge of every mechanism adds to Spent.
	Budget, Spent float64
	// GeoBudget is one window's geoind session budget and GeoSpent what
	// the session of window GeoWindow spent, GeoTotal over every window,
	// in epsilon per metre; GeoSession is the last window whose session
	// was charged to the account (-1: none).
	GeoBudget, GeoSpent, GeoTotal float64
	GeoWindow, GeoSession         int64
	// CIPBudget and CIPSpent are schema 1's separate CIP budget, kept as
	// migrated and no longer written.
	CIPBudget, CIPSpent float64
	Seq, Tag            int64
}

// Answer is the stored answer of a charge: what a retry of its request
// gets. MAC binds it to the request (keyed by the person's token).
type Answer struct {
	MAC         []byte
	Status      int
	ContentType string
	Body        []byte
}

// ChargeRow is a row of the charges table, one line of the person's ledger
// (the service's form of a budget.Charge; api.Charge is its wire form): one
// answer the service released, or one release drawn elsewhere and charged
// (Origin "device").
type ChargeRow struct {
	Person string
	Seq    int64
	Time   time.Time
	// Mechanism is the release's (budget.GeoInd or budget.CIP), in the
	// column kind.
	Mechanism budget.Mechanism
	Window    int64
	Amount    float64 // in the mechanism's own unit (epsilon per metre for geoind)
	// Epsilon is what the charge cost the account, in its currency.
	Epsilon float64
	// Origin is "service" (this service drew the release), "device", or
	// OriginCLI.
	Origin string
	// Release is the key of the release a tracepriv command charged
	// (budget.Request.Release), "" otherwise; Settlement is Settled,
	// Pending or Undone ("" is Settled).
	Release, Settlement string
	// Certificate is the SHA-256 (hex) of the release's certificate, if
	// the client gave it.
	Certificate string
	RequestID   string
	Key         string // the idempotency key
	// Detail is public: the predictive mechanism's step (reported point on
	// the plane, decision, cost) or the CIP release's parameters (JSON).
	Detail []byte
	// Answer is the stored answer (read only when asked for).
	Answer Answer
}

const personColumns = `id, token_hash, created_at, config, budget, spent, geo_budget, geo_spent, geo_total, geo_window, geo_session, cip_budget, cip_spent, seq, tag`

func scanPerson(row interface{ Scan(...any) error }) (*PersonRow, error) {
	var p PersonRow
	var created int64
	err := row.Scan(&p.ID, &p.TokenHash, &created, &p.Config, &p.Budget, &p.Spent, &p.GeoBudget, &p.GeoSpent, &p.GeoTotal, &p.GeoWindow,
		&p.GeoSession, &p.CIPBudget, &p.CIPSpent, &p.Seq, &p.Tag)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoPerson
	}
	if err != nil {
		return nil, err
	}
	p.Created = time.Unix(0, created).UTC()
	return &p, nil
}

const lockQuery = `SELECT id, token_hash, created_at, '', budget, spent, geo_budget, geo_spent, geo_total, geo_window, geo_session, cip_budget, cip_spent, seq, tag FROM people WHERE id = ?`

const answerQuery = `SELECT body_mac, status, content_type, response FROM charges WHERE person_id = ? AND idem_key = ?`

// LockPerson reads the person's row (without Config), locking it until
// the transaction ends (FOR UPDATE on PostgreSQL; SQLite's writer is
// already exclusive), and then the answer stored under the idempotency
// key, if any (nil otherwise). It fails with ErrNoPerson.
//
// On PostgreSQL the answer is read by a second statement, after the lock:
// under READ COMMITTED a statement that waited for a row lock re-reads the
// locked row but joins other tables from its own earlier snapshot, so a
// join would miss the charge the lock holder just committed under the
// same key.
func (t *Tx) LockPerson(id, key string) (*PersonRow, *Answer, error) {
	q := lockQuery
	if t.dialect == Postgres {
		q += ` FOR UPDATE`
	}
	p, err := scanPerson(t.queryRow(q, id))
	if err != nil {
		return nil, nil, err
	}
	a, err := scanAnswer(t.queryRow(answerQuery, id, key))
	if err != nil {
		return nil, nil, err
	}
	return p, a, nil
}

func scanAnswer(row *sql.Row) (*Answer, error) {
	var a Answer
	err := row.Scan(&a.MAC, &a.Status, &a.ContentType, &a.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// GeoindDetails returns the details of the person's geo-indistinguishability
// charges in window win, in order: the mechanism's run.
func (t *Tx) GeoindDetails(id string, win int64) ([][]byte, error) {
	rows, err := t.query(detailsQuery, id, win)
	if err != nil {
		return nil, err
	}
	return scanDetails(rows)
}

const detailsQuery = `SELECT detail FROM charges WHERE person_id = ? AND kind = 'geoind' AND origin = 'service' AND win = ? ORDER BY seq`

func scanDetails(rows *sql.Rows) ([][]byte, error) {
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, []byte(d))
	}
	return out, rows.Err()
}

func (t *Tx) insertCharge(c *ChargeRow) error {
	if c.Origin == "" {
		c.Origin = "service"
	}
	if c.Settlement == "" {
		c.Settlement = Settled
	}
	_, err := t.exec(`INSERT INTO charges (person_id, seq, created_at, kind, win, amount, epsilon, origin, certificate, request_id, idem_key, body_mac, detail, status, content_type, response, release_key, settlement)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Person, c.Seq, c.Time.UnixNano(), c.Mechanism, c.Window, c.Amount, c.Epsilon, c.Origin, c.Certificate, c.RequestID, c.Key, c.Answer.MAC, string(c.Detail),
		c.Answer.Status, c.Answer.ContentType, c.Answer.Body, c.Release, c.Settlement)
	return err
}

// Account charges are checked against the stored budget by the update
// itself (the ledger's own check, beside the service's): the new spent
// must be within budget·(1 + tolerance), the caller passing its admission
// rule's 1 + tolerance.

// ChargeGeoind records c, an answer of the service's geoind session of
// window c.Window numbered p.Seq+1, taking the window's spending to
// spent (epsilon per metre) and the account's to p.Spent + c.Epsilon (the
// session's charge on its first answer, 0 after), marks the window's
// session charged, and replaces the person's tag with tag. p is the row
// LockPerson returned: the update matches only that row version, only
// within the window's session budget and within the account's budget
// times slack, and fails otherwise.
func (t *Tx) ChargeGeoind(p *PersonRow, c *ChargeRow, spent float64, tag int64, slack float64) error {
	c.Mechanism, c.Origin = budget.GeoInd, "service"
	if err := t.insertCharge(c); err != nil {
		return err
	}
	acct := p.Spent + c.Epsilon
	res, err := t.exec(`UPDATE people SET geo_spent = ?, geo_window = ?, geo_session = ?, geo_total = geo_total + ?, spent = ?, seq = ?, tag = ?
		WHERE id = ? AND tag = ? AND seq = ? AND ? <= geo_budget AND ? <= budget * ?`,
		spent, c.Window, c.Window, c.Amount, acct, c.Seq, tag, p.ID, p.Tag, p.Seq, spent, acct, slack)
	return oneRow(res, err, p.ID)
}

// ChargeCIP records c, a CIP release the service drew, numbered p.Seq+1,
// taking the account to p.Spent + c.Epsilon (checked against the budget
// as ChargeGeoind does). The tag stays: it versions the
// geo-indistinguishability run, which a CIP release does not change.
func (t *Tx) ChargeCIP(p *PersonRow, c *ChargeRow, slack float64) error {
	c.Mechanism, c.Origin = budget.CIP, "service"
	return t.chargeAccount(p, c, slack)
}

// ChargeDevice records c, a release of c.Mechanism
// drawn elsewhere (a person's device), numbered p.Seq+1, taking the
// account to p.Spent + c.Epsilon within its budget. It changes neither
// the service's geoind run nor the tag.
func (t *Tx) ChargeDevice(p *PersonRow, c *ChargeRow, slack float64) error {
	c.Origin = "device"
	return t.chargeAccount(p, c, slack)
}

func (t *Tx) chargeAccount(p *PersonRow, c *ChargeRow, slack float64) error {
	if err := t.insertCharge(c); err != nil {
		return err
	}
	acct := p.Spent + c.Epsilon
	res, err := t.exec(`UPDATE people SET spent = ?, seq = ? WHERE id = ? AND seq = ? AND tag = ? AND ? <= budget * ?`,
		acct, c.Seq, p.ID, p.Seq, p.Tag, acct, slack)
	return oneRow(res, err, p.ID)
}

func oneRow(res sql.Result, err error, id string) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("person %s: ledger row changed under the lock", id)
	}
	return nil
}

// CreatePerson inserts a person with nothing spent; ErrExists if the id
// is taken.
func (t *Tx) CreatePerson(p *PersonRow) error {
	res, err := t.exec(`INSERT INTO people (id, token_hash, created_at, config, budget, geo_budget, cip_budget, tag)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		p.ID, p.TokenHash, p.Created.UnixNano(), p.Config, p.Budget, p.GeoBudget, p.CIPBudget, p.Tag)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrExists
	}
	return nil
}

// SetTokenHash replaces the hash of the person's token: the old token no
// longer authenticates. ErrNoPerson if there is no such person.
func (t *Tx) SetTokenHash(id string, hash []byte) error {
	res, err := t.exec(`UPDATE people SET token_hash = ? WHERE id = ?`, hash, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrNoPerson
	}
	return nil
}

// lookupQuery is Lookup's statement.
const lookupQuery = `SELECT ` + personColumns + ` FROM people WHERE id = ?`

// Lookup reads the person's row from the read pool, with no snapshot and
// no wait: for authentication, which releases nothing. Every id, known,
// unknown or malformed, costs the same one indexed query. ErrNoPerson if
// there is none.
func (s *Store) Lookup(ctx context.Context, id string) (*PersonRow, error) {
	p, err := scanPerson(s.person.QueryRowContext(ctx, id))
	if err != nil && !errors.Is(err, ErrNoPerson) {
		return nil, wrap(ErrUnavailable, err)
	}
	return p, err
}

// Person reads a person's row; ErrNoPerson if there is none.
func (v *View) Person(id string) (*PersonRow, error) {
	return scanPerson(v.q.queryRow(lookupQuery, id))
}

// People reads every person, by id.
func (v *View) People() ([]*PersonRow, error) {
	rows, err := v.q.query(`SELECT ` + personColumns + ` FROM people ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*PersonRow
	for rows.Next() {
		p, err := scanPerson(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Answer returns the answer stored under the person's idempotency key,
// or nil.
func (v *View) Answer(id, key string) (*Answer, error) {
	return scanAnswer(v.q.queryRow(answerQuery, id, key))
}

// Charges returns at most limit of the person's charges numbered after
// after, in order, with their stored answers if answers is set.
func (v *View) Charges(id string, after, limit int64, answers bool) ([]ChargeRow, error) {
	cols := `seq, created_at, kind, win, amount, epsilon, origin, certificate, request_id, idem_key, detail, release_key, settlement`
	if answers {
		cols += `, body_mac, status, content_type, response`
	}
	rows, err := v.q.query(`SELECT `+cols+` FROM charges WHERE person_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ChargeRow
	for rows.Next() {
		c := ChargeRow{Person: id}
		var at int64
		var detail string
		dst := []any{&c.Seq, &at, &c.Mechanism, &c.Window, &c.Amount, &c.Epsilon, &c.Origin, &c.Certificate, &c.RequestID, &c.Key, &detail, &c.Release, &c.Settlement}
		if answers {
			dst = append(dst, &c.Answer.MAC, &c.Answer.Status, &c.Answer.ContentType, &c.Answer.Body)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		c.Time, c.Detail = time.Unix(0, at).UTC(), []byte(detail)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SpentByMechanism returns what the person's charges of each mechanism
// cost the account.
func (v *View) SpentByMechanism(id string) (map[budget.Mechanism]float64, error) {
	rows, err := v.q.query(`SELECT kind, SUM(epsilon) FROM charges WHERE person_id = ? GROUP BY kind`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[budget.Mechanism]float64{}
	for rows.Next() {
		var k budget.Mechanism
		var e float64
		if err := rows.Scan(&k, &e); err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, rows.Err()
}

// GeoindDetails is Tx.GeoindDetails in a snapshot.
func (v *View) GeoindDetails(id string, win int64) ([][]byte, error) {
	rows, err := v.q.query(detailsQuery, id, win)
	if err != nil {
		return nil, err
	}
	return scanDetails(rows)
}

// Counts returns how many people and charges the store holds.
func (v *View) Counts() (people, charges int64, err error) {
	err = v.q.queryRow(`SELECT (SELECT COUNT(*) FROM people), (SELECT COUNT(*) FROM charges)`).Scan(&people, &charges)
	return people, charges, err
}

// SchemaVersion returns the newest migration applied.
func (v *View) SchemaVersion() (int, error) {
	var n int
	err := v.q.queryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&n)
	return n, err
}
