package server

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

// ledgerDBOf opens the database of e's server as a budget ledger.
func ledgerDBOf(t *testing.T, e *testEnv, d Dialect) *LedgerDB {
	t.Helper()
	loc := "sqlite:" + e.srv.opt.DataDir
	if d == Postgres {
		loc = e.srv.opt.DB
	}
	l, err := OpenLedgerDB(loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// createAccount creates person id with an account budget of b at order 2
// within 100 m and returns their token.
func (e *testEnv) createAccount(id string, b float64) string {
	e.t.Helper()
	return e.createPerson(map[string]any{"id": id, "epsilon_budget": 0.023, "account": map[string]any{"epsilon_budget": b},
		"cip": map[string]any{"lambda": 2, "radius_m": 100}})
}

// TestLedgerDBOneAccount: budget.Admission on the service's database
// charges the service's account of the person: the service's own charges
// count in its check, its pending charge counts in the service's check
// (a device charge that fits only without it is refused), settling and
// undoing change the one account, a charge a killed run left pending is
// found and settled by the next, a person the service does not know is
// refused with the fix, and the store's invariants hold throughout.
func TestLedgerDBOneAccount(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil).on(t)
		tok := e.createAccount("alice", 3)
		device := func(eps float64) response {
			return e.charge("alice", tok, newKey(), map[string]any{"mechanism": "cip", "epsilon": eps, "radius_m": 100, "certificate_sha256": certDigest(newKey())})
		}
		if r := device(1); r.status != http.StatusCreated {
			t.Fatalf("device charge: %d %s", r.status, r.body)
		}
		l := ledgerDBOf(t, e, d)
		req := budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Command: "tracepriv sanitize", Output: "/x/r.plt", Release: "sanitize file k"}
		adm := budget.NewAdmission(l, req)
		var re *budget.RefusedError
		if err := adm.Check(map[string]float64{"alice": 2.5}); !errors.As(err, &re) || re.Over[0].Spent != 1 || re.Over[0].Budget != 3 {
			t.Fatalf("2.5 more on 1 of 3: %v", err)
		} else if strings.Contains(err.Error(), "--raise-budget") || !strings.Contains(err.Error(), "never raised") {
			t.Errorf("the refusal suggests a raise the database refuses: %v", err)
		}
		// A --budget above the service's is refused with the service's
		// fix, not a raise; a smaller one applies to the run.
		above := budget.NewAdmission(l, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: 5, Release: "above"})
		if err := above.Check(map[string]float64{"alice": 0.1}); err == nil || strings.Contains(err.Error(), "--raise-budget") || !strings.Contains(err.Error(), "never raised") {
			t.Errorf("--budget 5 above the service's 3: %v", err)
		}
		below := budget.NewAdmission(l, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: 1.5, Release: "below"})
		if err := below.Check(map[string]float64{"alice": 0.6}); !errors.As(err, &re) || re.Over[0].Budget != 1.5 {
			t.Errorf("--budget 1.5 below the service's 3, 0.6 more on 1: %v", err)
		}
		if err := adm.Check(map[string]float64{"bob": 0.1}); err == nil || !strings.Contains(err.Error(), "POST /v1/people") {
			t.Fatalf("a person the service does not know: %v", err)
		}
		if err := adm.Check(map[string]float64{"alice": 0.5}); err != nil {
			t.Fatal(err)
		}
		lo := budget.NewAdmission(l, budget.Request{Mechanism: budget.CIP, Lambda: 1.5, RadiusM: 100, Release: "lo"})
		if err := lo.Check(map[string]float64{"alice": 0.1}); err == nil || !strings.Contains(err.Error(), "not covered") {
			t.Fatalf("a release below the account's order: %v", err)
		}
		if err := adm.Charge("", map[string]float64{"alice": 1.5}); err != nil {
			t.Fatal(err)
		}
		// 1 + 1.5 pending + 1 > 3: the service refuses what fits only
		// without the pending charge.
		if k := exhaustedKind(t, device(1)); k != string(store.BudgetAccount) {
			t.Fatalf("refusal kind %q", k)
		}
		if cs := e.ledgerOf("alice", tok).Charges; cs[len(cs)-1].Settlement != store.Pending || cs[len(cs)-1].Origin != store.OriginCLI {
			t.Fatalf("the pending charge in the service's ledger: %+v", cs[len(cs)-1])
		}
		if err := adm.Settle("", map[string]float64{"alice": 0.8}); err != nil {
			t.Fatal(err)
		}
		if r := device(1); r.status != http.StatusCreated {
			t.Fatalf("device charge after the settlement to 0.8: %d %s", r.status, r.body)
		}
		a, err := l.Account("alice")
		if err != nil || math.Abs(a.Spent-2.8) > 1e-12 || *a.Budget != 3 || a.Lambda != 2 || a.RadiusM != 100 {
			t.Fatalf("account %+v, %v; want 2.8 of 3 at order 2 within 100 m", a, err)
		}
		// A release that did not land: undone, it costs nothing.
		adm2 := budget.NewAdmission(l, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Release: "sanitize file k2"})
		if err := adm2.Charge("", map[string]float64{"alice": 0.2}); err != nil {
			t.Fatal(err)
		}
		if note := adm2.UndoNote(); !strings.Contains(note, "nothing is charged") {
			t.Fatalf("undo: %s", note)
		}
		// A run killed between its charge and its settlement: the next run
		// of the same release (another process: another LedgerDB) finds the
		// pending charge and settles it.
		adm3 := budget.NewAdmission(l, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Release: "corpus c"})
		if err := adm3.Charge("unit 1", map[string]float64{"alice": 0.2}); err != nil {
			t.Fatal(err)
		}
		next := budget.NewAdmission(ledgerDBOf(t, e, d), budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Release: "corpus c"})
		keys, err := next.Pending()
		if err != nil || len(keys) != 1 || keys[0] != "unit 1" {
			t.Fatalf("pending after a killed run: %v %v", keys, err)
		}
		if err := next.Settle("unit 1", map[string]float64{"alice": 0.1}); err != nil {
			t.Fatal(err)
		}
		if keys, err := next.Pending(); err != nil || len(keys) != 0 {
			t.Fatalf("pending after settling: %v %v", keys, err)
		}
		led := e.ledgerOf("alice", tok)
		var cli []float64
		var settled []string
		for _, c := range led.Charges {
			if c.Origin == store.OriginCLI {
				cli, settled = append(cli, c.Epsilon), append(settled, c.Settlement)
			}
		}
		if len(cli) != 3 || cli[0] != 0.8 || cli[1] != 0 || cli[2] != 0.1 || math.Abs(led.Account.Spent-2.9) > 1e-12 ||
			settled[0] != "" || settled[1] != store.Undone || settled[2] != "" {
			t.Fatalf("the service's ledger: command charges %v, account %+v; want 0.8, 0 (undone), 0.1 and 2.9 spent", cli, led.Account)
		}
		checkInvariants(t, e.srv.store)
	})
}

// TestLedgerDBConcurrentCannotOverspend: the service's device charges and
// commands charging through their own LedgerDB (their own connections,
// as separate processes have) race for the last of one budget: what is
// admitted never exceeds it, every refusal is a budget refusal, and the
// store's invariants hold. Ten charges of 0.1 fit, and ten are admitted.
func TestLedgerDBConcurrentCannotOverspend(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil).on(t)
		tok := e.createAccount("carol", 1)
		const n = 12 // each side could pay 1.2 alone
		var wg sync.WaitGroup
		var admitted atomic.Int64
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				r := e.charge("carol", tok, newKey(), map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 100, "certificate_sha256": certDigest(newKey())})
				switch {
				case r.status == http.StatusCreated:
					admitted.Add(1)
				case r.status != http.StatusTooManyRequests:
					t.Errorf("device charge %d: %d %s", i, r.status, r.body)
				}
			}()
			go func() {
				defer wg.Done()
				l := ledgerDBOf(t, e, d)
				adm := budget.NewAdmission(l, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Release: "race " + newKey()})
				var re *budget.RefusedError
				switch err := adm.Charge("", map[string]float64{"carol": 0.1}); {
				case err == nil:
					admitted.Add(1)
					if err := adm.Settle("", map[string]float64{"carol": 0.1}); err != nil {
						t.Error(err)
					}
				case !errors.As(err, &re):
					t.Errorf("command charge %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		a, err := ledgerDBOf(t, e, d).Account("carol")
		if err != nil {
			t.Fatal(err)
		}
		if admitted.Load() != 10 || a.Spent > 1+1e-9 || math.Abs(a.Spent-0.1*float64(admitted.Load())) > 1e-9 {
			t.Fatalf("%d charges of 0.1 admitted, spent %v of 1", admitted.Load(), a.Spent)
		}
		checkInvariants(t, e.srv.store)
	})
}
