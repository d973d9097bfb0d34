package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server/api"
)

// commitGate is a store AfterCommit hook: armed, the next commit reports
// on held and waits at the gate between its COMMIT and its confirmation
// (the WAL fsync; PostgreSQL's COMMIT returning) for open to say whether
// it fails.
type commitGate struct {
	armed atomic.Bool
	held  chan struct{}
	open  chan error
	done  chan struct{} // closed at the end of the test: the gate stays open
}

func newCommitGate(t *testing.T) *commitGate {
	g := &commitGate{held: make(chan struct{}, 1), open: make(chan error), done: make(chan struct{})}
	return g
}

func (g *commitGate) hook() error {
	if !g.armed.CompareAndSwap(true, false) {
		return nil
	}
	g.held <- struct{}{}
	select {
	case err := <-g.open:
		return err
	case <-g.done:
		return nil
	}
}

// TestAnswerAfterDurable is the review's first finding, for both
// endpoints and both stores: a request's commit is held between COMMIT and
// its confirmation while the same request is retried (same key, same
// body). The retry must not be answered before the charge is durable:
// once the commit is confirmed both get the same answer, and when the
// confirmation fails both get a 503 that says the charge is unknown and
// nothing was released; then nothing is released until the store is
// healthy (SQLite: a restart; PostgreSQL, which made the commit visible
// only once flushed, at once), and the retry gets the stored answer.
func TestAnswerAfterDurable(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"locate", "sanitize"} {
		for _, fail := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fail=%v", op, fail), func(t *testing.T) {
				t.Parallel() // each run has its own gate, store and server
				forEachStore(t, func(t *testing.T, d Dialect) {
					testAnswerAfterDurable(t, d, op, fail)
				})
			})
		}
	}
}

func testAnswerAfterDurable(t *testing.T, d Dialect, op string, fail bool) {
	g := newCommitGate(t)
	var opts Options
	e := newEnv(t, d, func(o *Options) { o.afterCommit = g.hook; opts = *o })
	t.Cleanup(func() { close(g.done) }) // before the server closes
	tok := e.createPerson(map[string]any{"account": roomy, "id": "r", "epsilon_budget": 0.05})
	key := newKey()
	t0 := e.clock.Now()
	send := func(e *testEnv) response {
		if op == "locate" {
			return e.locate("r", tok, beijing[0], beijing[1], t0, key)
		}
		return e.do("POST", "/v1/people/r/sanitize?format=plt", tok, sample.PLT, map[string]string{"Idempotency-Key": key})
	}
	g.armed.Store(true)
	first := make(chan response, 1)
	go func() { first <- send(e) }()
	<-g.held // the charge is committed, not yet durable
	base := e.srv.store.Waiting()
	second := make(chan response, 1)
	go func() { second <- send(e) }()
	for e.srv.store.Waiting() <= base {
		select {
		case r := <-second:
			t.Fatalf("the retry was answered (%d) while the original's charge was not durable: %.200s", r.status, r.body)
		case <-time.After(time.Millisecond):
		}
	}
	if !fail {
		g.open <- nil
		a, b := <-first, <-second
		if a.status != 200 || b.status != 200 || string(a.body) != string(b.body) || b.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("after the fsync: first %d, retry %d (replayed %q); same answer %v", a.status, b.status,
				b.header.Get("Idempotent-Replayed"), string(a.body) == string(b.body))
		}
		return
	}
	g.open <- errors.New("injected fsync failure")
	for i, r := range []response{<-first, <-second} {
		if r.status != http.StatusServiceUnavailable || r.errCode(t) != api.CodeUnavailable {
			t.Fatalf("request %d after a failed fsync: %d %s", i, r.status, r.body)
		}
		msg := r.json(t)["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, "may or may not have been charged") || !strings.Contains(msg, "nothing was released") {
			t.Errorf("request %d: the message claims more than is known: %q", i, msg)
		}
	}
	if d == SQLite {
		// Nothing is released until the store is healthy again.
		for _, r := range []response{send(e), e.do("GET", "/v1/people/r/ledger", tok, nil, nil), e.do("GET", "/healthz", "", nil, nil)} {
			if r.status != http.StatusServiceUnavailable {
				t.Errorf("after a failed fsync: %d %.200s, want 503", r.status, r.body)
			}
		}
		e.ts.Close()
		e.srv.Close()
		e = startEnv(t, opts, e.clock)
	}
	r := send(e)
	if r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry once the store is healthy: %d %.200s (replayed %q), want the stored answer", r.status, r.body, r.header.Get("Idempotent-Replayed"))
	}
	checkInvariants(t, e.srv.store)
}
