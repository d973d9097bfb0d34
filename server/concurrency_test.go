package server

import (
	"net/http"
	"sync"
	"testing"

	"github.com/tracepriv/tracepriv/geoind"
)

// TestConcurrentLastUnit fires many concurrent queries at one person whose
// budget pays for exactly K: exactly K are answered, the rest get 429, and
// the ledger holds exactly K charges within the budget.
func TestConcurrentLastUnit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		const K, N = 10, 80
		acc := 500.0
		per := geoind.CN(0.9) / acc
		eps := per * (K + 0.5)
		tok := e.createPerson(map[string]any{"account": roomy, "id": "c", "epsilon_budget": eps,
			"geoind": map[string]any{"mechanism": "im", "manager": "fixed-utility", "accuracy_m": acc}})
		t0 := e.clock.Now()
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			codes = map[int]int{}
		)
		start := make(chan struct{})
		for range N {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := e.locate("c", tok, beijing[0], beijing[1], t0, "")
				mu.Lock()
				codes[r.status]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		if codes[200] != K || codes[429] != N-K {
			t.Errorf("answers by status %v, want %d × 200 and %d × 429", codes, K, N-K)
		}
		l := e.ledgerOf("c", tok)
		if len(l.Charges) != K || l.Spent > eps {
			t.Errorf("ledger: %d charges, spent %v of %v", len(l.Charges), l.Spent, eps)
		}
		checkInvariants(t, e.srv.store)
	})
}

// TestConcurrentSameKey sends one query many times at once with one
// idempotency key: one charge, one answer, returned to every copy.
func TestConcurrentSameKey(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"account": roomy, "id": "k", "epsilon_budget": 0.05})
		key := newKey()
		t0 := e.clock.Now()
		const N = 30
		bodies := make([]string, N)
		var wg sync.WaitGroup
		for i := range N {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.locate("k", tok, beijing[0], beijing[1], t0, key)
				if r.status != http.StatusOK {
					t.Errorf("copy %d: %d %s", i, r.status, r.body)
				}
				bodies[i] = string(r.body)
			}()
		}
		wg.Wait()
		for i := range bodies {
			if bodies[i] != bodies[0] {
				t.Fatalf("copy %d got another answer:\n%s\n%s", i, bodies[i], bodies[0])
			}
		}
		if l := e.ledgerOf("k", tok); len(l.Charges) != 1 {
			t.Errorf("%d charges, want 1", len(l.Charges))
		}
		checkInvariants(t, e.srv.store)
	})
}

// TestConcurrentPredictive runs the predictive mechanism for a few people
// from many goroutines until every budget is spent.
func TestConcurrentPredictive(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		ids := []string{"p0", "p1", "p2"}
		toks := map[string]string{}
		for _, id := range ids {
			toks[id] = e.createPerson(map[string]any{"account": roomy, "id": id, "epsilon_budget": 0.02,
				"geoind": map[string]any{"rate": 0.02 / 15, "max_speed_kmh": 30}})
		}
		t0 := e.clock.Now()
		var wg sync.WaitGroup
		for w := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := ids[w%len(ids)]
				for i := range 60 {
					// Same time for all: order does not matter to the check.
					r := e.locate(id, toks[id], beijing[0]+float64(i%7)*1e-4, beijing[1], t0, "")
					if r.status == http.StatusTooManyRequests {
						return
					}
					if r.status != http.StatusOK {
						t.Errorf("%d %s", r.status, r.body)
						return
					}
				}
			}()
		}
		wg.Wait()
		rep := checkInvariants(t, e.srv.store)
		if rep.Charges < 3*10 {
			t.Errorf("only %d charges", rep.Charges)
		}
	})
}
