package store

import (
	"strconv"
	"strings"
)

// A charge's settlement (the column settlement, migration pendingCharges):
// a charge made before its release was drawn, at the upper bound the
// release can reach, is Pending until the release lands (then Settled, at
// its certified epsilon) or is known not to have landed (Undone: it costs
// the account nothing, and stays in the ledger so that charges keep their
// numbers). A pending charge counts in the account's spent like any other,
// so every check of the service and of the tracepriv CLI counts it.
const (
	Settled = "settled"
	Pending = "pending"
	Undone  = "undone"
)

// OriginCLI is the origin of a charge made by a tracepriv command that
// keeps its ledger in the service's database (--ledger sqlite:PATH or
// postgres://...): a release drawn by the CLI, not by this service.
const OriginCLI = "cli"

// pendingCharges lets a charge be pending (its own migration: charges of
// releases the tracepriv CLI draws against the service's accounts). A
// charge gets the key of its release (release_key, the CLI's
// budget.Request.Release: a hash, never a path) and its settlement; every
// existing charge is settled. The partial index finds the pending charges
// a crashed release left, and the people of a release.
func pendingCharges() migration {
	stmts := []string{
		`ALTER TABLE charges ADD COLUMN release_key TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE charges ADD COLUMN settlement TEXT NOT NULL DEFAULT 'settled' CHECK (settlement IN ('settled', 'pending', 'undone'))`,
		`CREATE INDEX charges_release ON charges (release_key, settlement) WHERE release_key <> ''`,
	}
	return migration{version: 4, name: "pending charges", sqlite: stmts, postgres: stmts}
}

// ChargeCLI records c, a release of c.Mechanism that a tracepriv command
// draws (origin OriginCLI), numbered p.Seq+1, Pending under c.Release at
// its upper bound (or Settled), taking the account to p.Spent + c.Epsilon
// within its budget (checked by the update, as every charge). Its
// idempotency key holds a space, which no client's key can
// (printable ASCII without spaces), so that no request replays it.
func (t *Tx) ChargeCLI(p *PersonRow, c *ChargeRow, slack float64) error {
	c.Origin, c.Key = OriginCLI, "cli charge "+strconv.FormatInt(c.Seq, 10)
	return t.chargeAccount(p, c, slack)
}

// PendingCharges returns the person's pending charges of release, in
// order.
func (t *Tx) PendingCharges(id, release string) ([]ChargeRow, error) {
	rows, err := t.query(`SELECT seq, kind, amount, epsilon, detail FROM charges WHERE person_id = ? AND release_key = ? AND settlement = 'pending' ORDER BY seq`, id, release)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ChargeRow
	for rows.Next() {
		c := ChargeRow{Person: id, Release: release, Settlement: Pending, Origin: OriginCLI}
		var detail string
		if err := rows.Scan(&c.Seq, &c.Mechanism, &c.Amount, &c.Epsilon, &detail); err != nil {
			return nil, err
		}
		c.Detail = []byte(detail)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SettleCharge settles the person's pending charge seq to amount (the
// mechanism's unit) and epsilon (the account's currency), or, with
// undo, marks it undone (epsilon 0, the amount kept for the record); the
// account's spent becomes the sum of its charges again. The caller holds
// the person's row (LockPerson).
func (t *Tx) SettleCharge(id string, seq int64, amount, epsilon float64, undo bool) error {
	state := Settled
	if undo {
		state, epsilon = Undone, 0
	}
	res, err := t.exec(`UPDATE charges SET amount = ?, epsilon = ?, settlement = ? WHERE person_id = ? AND seq = ? AND settlement = 'pending'`,
		amount, epsilon, state, id, seq)
	if err := oneRow(res, err, id); err != nil {
		return err
	}
	res, err = t.exec(`UPDATE people SET spent = (SELECT COALESCE(SUM(epsilon), 0) FROM charges WHERE person_id = ?) WHERE id = ?`, id, id)
	return oneRow(res, err, id)
}

// RenameRelease gives the person's charges of release old the key
// release, and settles those pending at their amount (a geoind session's
// charge, keyed by a nonce until the session has an id).
func (t *Tx) RenameRelease(id, old, release string) error {
	_, err := t.exec(`UPDATE charges SET release_key = ?, settlement = CASE settlement WHEN 'pending' THEN 'settled' ELSE settlement END
		WHERE person_id = ? AND release_key = ?`, release, id, old)
	return err
}

// PendingReleases returns the release keys starting with prefix that
// have pending charges, each with its people, in the order first charged.
func (v *View) PendingReleases(prefix string) (keys []string, people map[string][]string, err error) {
	// The prefix is matched in Go, not with LIKE, whose wildcards a key
	// could hold; the partial index keeps the scan to pending charges.
	rows, err := v.q.query(`SELECT release_key, person_id FROM charges WHERE settlement = 'pending' AND release_key <> '' ORDER BY created_at, person_id, seq`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	people = map[string][]string{}
	for rows.Next() {
		var k, id string
		if err := rows.Scan(&k, &id); err != nil {
			return nil, nil, err
		}
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if _, ok := people[k]; !ok {
			keys = append(keys, k)
		}
		people[k] = append(people[k], id)
	}
	return keys, people, rows.Err()
}

// ReleasePeople returns the people with a charge of kind (a mechanism)
// under release (settled or pending; not undone).
func (v *View) ReleasePeople(kind, release string) ([]string, error) {
	rows, err := v.q.query(`SELECT DISTINCT person_id FROM charges WHERE release_key = ? AND kind = ? AND settlement <> 'undone' ORDER BY person_id`, release, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
