package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
)

// openAtSchema opens a store whose migrations stop at version, for a
// migration's test, with exec running raw SQL on it.
func openAtSchema(t *testing.T, d Dialect, dir, url string, version int) (*Store, func(q string, args ...any)) {
	t.Helper()
	st, err := Open(context.Background(), dir, url, Options{maxVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return st, func(q string, args ...any) {
		t.Helper()
		if _, err := st.db.Exec(rebind(d, q), args...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigratePendingCharges: the pending-charges migration applies to a
// database of the previous schema, keeping every charge as it was
// (settled, with no release key), and applies once: opening again
// changes nothing.
func TestMigratePendingCharges(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		old, exec := openAtSchema(t, d, dir, url, pendingCharges().version-1)
		exec(`INSERT INTO people (id, token_hash, created_at, config, budget, spent, geo_budget, cip_budget, seq) VALUES ('alice', ?, 0, '{}', 4, 0.9, 1, 0, 1)`, []byte("h"))
		exec(`INSERT INTO charges (person_id, seq, created_at, kind, win, amount, epsilon, origin, request_id, idem_key, body_mac, detail, status, content_type, response)
			VALUES ('alice', 1, 0, 'cip', 0, 0.9, 0.9, 'device', 'r', 'k', ?, '{}', 201, 'application/json', ?)`, []byte("m"), []byte("{}"))
		old.Close()
		for i := range 2 {
			st, err := Open(ctx, dir, url, Options{})
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			err = st.Scan(ctx, func(v *View) error {
				if n, err := v.SchemaVersion(); err != nil || n != SchemaVersion() {
					return fmt.Errorf("schema %d, %v", n, err)
				}
				cs, err := v.Charges("alice", 0, 10, false)
				if err != nil {
					return err
				}
				if len(cs) != 1 || cs[0].Settlement != Settled || cs[0].Release != "" || cs[0].Epsilon != 0.9 {
					return fmt.Errorf("charges after the migration: %+v", cs)
				}
				keys, _, err := v.PendingReleases("")
				if err != nil || len(keys) != 0 {
					return fmt.Errorf("pending after the migration: %v %v", keys, err)
				}
				return nil
			})
			var n int
			if err == nil {
				err = st.db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
			}
			st.Close()
			if err != nil || n != len(migrations) {
				t.Fatalf("open %d: %v; %d migrations recorded, want %d", i, err, n, len(migrations))
			}
		}
	})
}

// TestPendingChargeLifecycle: a pending charge counts in the account's
// spent (a charge past the budget with it is refused by the update), is
// found by its release key, settles to a smaller epsilon, or is undone
// (costing nothing, keeping its number); a renamed release is settled.
func TestPendingChargeLifecycle(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect, dir, url string) {
		ctx := context.Background()
		st := open(t, dir, url, Options{})
		err := st.Update(ctx, "u", func(tx *Tx) error {
			return tx.CreatePerson(&PersonRow{ID: "u", TokenHash: []byte("h"), Config: "{}", Budget: 2, GeoBudget: 1, Created: time.Unix(0, 0)})
		})
		if err != nil {
			t.Fatal(err)
		}
		const slack = 1 + budget.Tolerance
		charge := func(release string, eps float64, settlement string) error {
			return st.Update(ctx, "u", func(tx *Tx) error {
				p, _, err := tx.LockPerson("u", "")
				if err != nil {
					return err
				}
				return tx.ChargeCLI(p, &ChargeRow{Person: "u", Seq: p.Seq + 1, Time: time.Unix(1, 0), Mechanism: budget.CIP, Amount: eps, Epsilon: eps,
					Detail: []byte("{}"), Release: release, Settlement: settlement, Answer: Answer{MAC: []byte{}, Body: []byte{}}}, slack)
			})
		}
		settle := func(release string, eps float64, undo bool) error {
			return st.Update(ctx, "u", func(tx *Tx) error {
				if _, _, err := tx.LockPerson("u", ""); err != nil {
					return err
				}
				cs, err := tx.PendingCharges("u", release)
				if err != nil {
					return err
				}
				if len(cs) != 1 {
					return fmt.Errorf("pending charges of %q: %+v", release, cs)
				}
				return tx.SettleCharge("u", cs[0].Seq, eps, eps, undo)
			})
		}
		state := func() (*PersonRow, []ChargeRow, []string) {
			var p *PersonRow
			var cs []ChargeRow
			var keys []string
			err := st.Scan(ctx, func(v *View) error {
				var err error
				if p, err = v.Person("u"); err != nil {
					return err
				}
				if cs, err = v.Charges("u", 0, 100, false); err != nil {
					return err
				}
				keys, _, err = v.PendingReleases("sanitize ")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return p, cs, keys
		}
		if err := charge("sanitize a", 1.5, Pending); err != nil {
			t.Fatal(err)
		}
		if p, _, keys := state(); p.Spent != 1.5 || len(keys) != 1 || keys[0] != "sanitize a" {
			t.Fatalf("after a pending charge: spent %v, pending %v", p.Spent, keys)
		}
		if err := charge("sanitize b", 1, Pending); err == nil {
			t.Fatal("a charge over the budget with the pending one was stored")
		}
		if err := settle("sanitize a", 0.7, false); err != nil {
			t.Fatal(err)
		}
		if err := charge("sanitize b", 1, Pending); err != nil {
			t.Fatal(err)
		}
		if err := settle("sanitize b", 0, true); err != nil {
			t.Fatal(err)
		}
		p, cs, keys := state()
		if p.Spent != 0.7 || p.Seq != 2 || len(cs) != 2 || cs[0].Settlement != Settled || cs[0].Epsilon != 0.7 || cs[0].Origin != OriginCLI ||
			cs[1].Settlement != Undone || cs[1].Epsilon != 0 || len(keys) != 0 {
			t.Fatalf("after settling and undoing: spent %v seq %d, charges %+v, pending %v", p.Spent, p.Seq, cs, keys)
		}
		if err := charge("geoind session starting x", 0.5, Pending); err != nil {
			t.Fatal(err)
		}
		err = st.Update(ctx, "u", func(tx *Tx) error { return tx.RenameRelease("u", "geoind session starting x", "geoind session 1") })
		if err != nil {
			t.Fatal(err)
		}
		err = st.Scan(ctx, func(v *View) error {
			people, err := v.ReleasePeople("cip", "geoind session 1")
			if err != nil || len(people) != 1 || people[0] != "u" {
				return fmt.Errorf("people of the renamed release: %v %v", people, err)
			}
			keys, _, err := v.PendingReleases("")
			if err != nil || len(keys) != 0 {
				return fmt.Errorf("pending after the rename: %v %v", keys, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
