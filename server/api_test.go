package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

func TestCreatePerson(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		body := map[string]any{"account": roomy, "id": "alice", "epsilon_budget": 0.023}
		r := e.do("POST", "/v1/people", testAdmin, body, nil)
		if r.status != http.StatusCreated {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.json(t)
		tok := m["token"].(string)
		if !strings.HasPrefix(tok, tokenPrefix) || len(tok) != len(tokenPrefix)+43 {
			t.Errorf("token %q: want %s + 43 base64url characters (256 bits)", tok, tokenPrefix)
		}
		g := m["geoind"].(map[string]any)
		if g["mechanism"] != "pm" || g["manager"] != "fixed-rate" || g["window"] != "none" || g["rate"].(float64) != 0.023/30 {
			t.Errorf("defaults: %v", g)
		}
		// The store keeps the hash, never the token.
		row, err := e.srv.store.Lookup(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if hash := row.TokenHash; string(hash) != string(tokenHash(tok)) || strings.Contains(string(hash), tok) {
			t.Errorf("stored token hash is not SHA-256 of the token")
		}
		// Recreating is refused: nothing resets a budget.
		before := e.snapshot()
		for _, b := range []map[string]any{body, {"id": "alice", "epsilon_budget": 10.0}} {
			r = e.do("POST", "/v1/people", testAdmin, b, nil)
			if r.status != http.StatusConflict || r.errCode(t) != api.CodeConflict {
				t.Errorf("recreate: %d %s", r.status, r.body)
			}
		}
		if after := e.snapshot(); !equalState(before, after) {
			t.Errorf("a refused recreation changed the store")
		}
		// Only the admin token creates people.
		for _, tk := range []string{"", tok, "wrong"} {
			r = e.do("POST", "/v1/people", tk, map[string]any{"account": roomy, "id": "bob", "epsilon_budget": 1.0}, nil)
			if r.status != http.StatusUnauthorized && r.status != http.StatusForbidden {
				t.Errorf("token %q: %d %s", tk, r.status, r.body)
			}
		}
	})
}

func equalState(a, b storeState) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestLocateAndLedger(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		eps := math.Ln10 / 100
		tok := e.createPerson(map[string]any{"account": roomy, "id": "alice", "epsilon_budget": eps})
		t0 := e.clock.Now()
		var charged, lastSpent float64
		n := 0
		for i := 0; ; i++ {
			r := e.locate("alice", tok, beijing[0]+float64(i)*1e-4, beijing[1], t0.Add(time.Duration(i)*100*time.Millisecond), "")
			if r.status == http.StatusTooManyRequests {
				if r.errCode(t) != api.CodeBudgetExhausted {
					t.Fatalf("429 %s", r.body)
				}
				det := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
				if det["spent"].(float64) != lastSpent {
					t.Errorf("exhausted: spent %v, want %v", det["spent"], lastSpent)
				}
				break
			}
			if r.status != http.StatusOK {
				t.Fatalf("locate %d: %d %s", i, r.status, r.body)
			}
			var lr api.LocateResponse
			json.Unmarshal(r.body, &lr)
			if lr.EpsilonCharged < 0 || lr.Spent > eps || lr.Step != i || math.Abs(lr.Lat-beijing[0]) > 1 {
				t.Fatalf("locate %d: %+v", i, lr)
			}
			charged += lr.EpsilonCharged
			if lr.Spent != charged {
				t.Fatalf("spent %v, sum of charges %v", lr.Spent, charged)
			}
			lastSpent = lr.Spent
			n++
			if i > 500 {
				t.Fatal("budget never exhausted")
			}
		}
		if n < 10 {
			t.Errorf("only %d answers from a budget of ~30 rates", n)
		}
		l := e.ledgerOf("alice", tok)
		if len(l.Charges) != n || l.Spent != charged || l.Budget != eps || l.Remaining != math.Max(0, eps-charged) {
			t.Errorf("ledger: %d charges, spent %v remaining %v; want %d, %v", len(l.Charges), l.Spent, l.Remaining, n, charged)
		}
		sum := 0.0
		for i, c := range l.Charges {
			if c.Seq != int64(i+1) || c.Kind != "geoind" || !strings.HasPrefix(c.RequestID, "req_") || c.Time.IsZero() {
				t.Errorf("charge %d: %+v", i, c)
			}
			sum += c.Amount
		}
		if sum != charged {
			t.Errorf("charges sum to %v, spent %v", sum, charged)
		}
		// The admin may read the ledger too; nobody else.
		if l2 := e.ledgerOf("alice", testAdmin); l2.Spent != l.Spent {
			t.Errorf("admin ledger differs")
		}
	})
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"account": roomy, "id": "alice", "epsilon_budget": 0.05})
		t0 := e.clock.Now()
		key := newKey()
		first := e.locate("alice", tok, beijing[0], beijing[1], t0, key)
		if first.status != 200 {
			t.Fatalf("%d %s", first.status, first.body)
		}
		before := e.snapshot()
		for range 5 {
			r := e.locate("alice", tok, beijing[0], beijing[1], t0, key)
			if r.status != 200 || string(r.body) != string(first.body) || r.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s (first %s)", r.status, r.body, first.body)
			}
		}
		// The same query spelled differently is the same request.
		r := e.do("POST", "/v1/people/alice/locate", tok,
			[]byte(`{ "time": "2026-01-01T08:00:00+08:00", "lon": 116.31850, "lat": 39.98410 }`),
			map[string]string{"Idempotency-Key": key, "Content-Type": "application/json"})
		if r.status != 200 || string(r.body) != string(first.body) {
			t.Errorf("replay with another spelling: %d %s", r.status, r.body)
		}
		// The key with another body is refused.
		r = e.locate("alice", tok, beijing[0]+0.01, beijing[1], t0, key)
		if r.status != http.StatusUnprocessableEntity || r.errCode(t) != api.CodeIdempotencyKey {
			t.Errorf("reused key: %d %s", r.status, r.body)
		}
		if after := e.snapshot(); !equalState(before, after) {
			t.Errorf("replays changed the store:\n%v\n%v", before, after)
		}
		if l := e.ledgerOf("alice", tok); len(l.Charges) != 1 {
			t.Errorf("%d charges after replays, want 1", len(l.Charges))
		}
		// Keys are per person: bob may use alice's key.
		tb := e.createPerson(map[string]any{"account": roomy, "id": "bob", "epsilon_budget": 0.05})
		if r := e.locate("bob", tb, beijing[0], beijing[1], t0, key); r.status != 200 || string(r.body) == string(first.body) {
			t.Errorf("bob with alice's key: %d %s", r.status, r.body)
		}
	})
}

// TestWindows: a window is a rate within the person's one account, not a
// budget of its own. Each window's session may spend epsilon_budget per
// metre (the manager stops it there, with Retry-After at the window's
// end), and opening it charges the account the session's conversion.
// Changed with issue 31: windows used to renew the whole budget; now a
// window boundary opens a session only while the account can pay it, and
// the third window here, which the account cannot pay, is refused for
// good (no Retry-After) with nothing stored.
func TestWindows(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		eps := 0.02
		session := budget.GeoIndCharge(eps, geoind.DefaultGrid, 2, 100) // independent of the server's sessionCharge
		tok := e.createPerson(map[string]any{"id": "w", "epsilon_budget": eps, "account": map[string]any{"epsilon_budget": 2.5 * session},
			"geoind": map[string]any{"mechanism": "im", "manager": "fixed-rate", "rate": eps / 4, "window": "24h"}})
		q := 0
		spend := func() (int, response) {
			n := 0
			for {
				r := e.locate("w", tok, beijing[0], beijing[1], e.clock.Now().Add(time.Duration(q)*time.Second), "")
				q++
				if r.status == http.StatusTooManyRequests {
					return n, r
				}
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				var lr api.LocateResponse
				json.Unmarshal(r.body, &lr)
				if want := map[bool]float64{true: session, false: 0}[n == 0]; lr.Account.Charged != want {
					t.Errorf("answer %d of a window charged the account %v, want %v", n, lr.Account.Charged, want)
				}
				n++
			}
		}
		kind := func(r response) any { return r.json(t)["error"].(map[string]any)["details"].(map[string]any)["kind"] }
		if n, r := spend(); n != 4 || r.header.Get("Retry-After") == "" || kind(r) != "geoind" {
			t.Errorf("window 0: %d answers, want 4, then the window's refusal with Retry-After: %s", n, r.body)
		}
		e.clock.Add(23 * time.Hour)
		if r := e.locate("w", tok, beijing[0], beijing[1], e.clock.Now(), ""); r.status != http.StatusTooManyRequests {
			t.Errorf("same window: %d", r.status)
		}
		e.clock.Add(2 * time.Hour)
		l := e.ledgerOf("w", tok)
		if l.Window != 1 || l.Spent != 0 || l.Remaining != eps || math.Abs(l.TotalSpent-eps) > 1e-15 || l.Account.Spent != session || l.Exhausted {
			t.Errorf("new window ledger: %+v", l)
		}
		if n, _ := spend(); n != 4 {
			t.Errorf("window 1: %d answers, want 4", n)
		}
		l = e.ledgerOf("w", tok)
		if l.Window != 1 || len(l.Charges) != 8 || math.Abs(l.TotalSpent-2*eps) > 1e-15 || l.WindowEnd == nil || l.Account.Spent != 2*session {
			t.Errorf("ledger after two windows: window %d, %d charges, total %v, account %v", l.Window, len(l.Charges), l.TotalSpent, l.Account.Spent)
		}
		// The third window would open a session the account cannot pay: a
		// window boundary does not renew the total.
		e.clock.Add(24 * time.Hour)
		if l := e.ledgerOf("w", tok); !l.Exhausted {
			t.Errorf("window 2: the ledger does not say the account cannot pay the next session")
		}
		before := e.snapshot()
		r := e.locate("w", tok, beijing[0], beijing[1], e.clock.Now(), "")
		if r.status != http.StatusTooManyRequests || kind(r) != "account" || r.header.Get("Retry-After") != "" {
			t.Errorf("window 2: %d %s (Retry-After %q), want the account's refusal, for good", r.status, r.body, r.header.Get("Retry-After"))
		}
		if !equalState(before, e.snapshot()) {
			t.Errorf("a refused session changed the store")
		}
		// A clock set back does not reopen a spent window: a query at the
		// clock's time is refused (it comes before the window's last query),
		// and nothing is charged.
		e.clock.Add(-72 * time.Hour)
		before = e.snapshot()
		if r := e.locate("w", tok, beijing[0], beijing[1], e.clock.Now(), ""); r.status == http.StatusOK {
			t.Errorf("clock set back: %d %s", r.status, r.body)
		}
		if !equalState(before, e.snapshot()) {
			t.Errorf("a query after the clock was set back changed the store")
		}
	})
}

func TestIMFixedUtilityExactBudget(t *testing.T) {
	t.Parallel()
	// IM with fixed utility charges exactly c_N/α per query and stops when
	// the next one cannot be paid: floor(ε α / c_N) answers.
	e := newEnv(t, SQLite, nil)
	acc := 500.0
	per := geoind.CN(0.9) / acc
	eps := per * 7.5
	tok := e.createPerson(map[string]any{"account": roomy, "id": "u", "epsilon_budget": eps,
		"geoind": map[string]any{"mechanism": "im", "manager": "fixed-utility", "accuracy_m": acc}})
	t0 := e.clock.Now()
	for i := range 8 {
		r := e.locate("u", tok, beijing[0], beijing[1], t0.Add(time.Duration(i)*time.Second), "")
		want := 200
		if i == 7 {
			want = 429
		}
		if r.status != want {
			t.Fatalf("query %d: %d %s", i, r.status, r.body)
		}
		if want == 200 {
			if c := r.json(t)["epsilon_charged"].(float64); c != per {
				t.Errorf("charged %v, want %v", c, per)
			}
		}
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"id": "s", "epsilon_budget": 0.02, "cip": map[string]any{"epsilon_budget": 2.5}})
		key := newKey()
		r := e.do("POST", "/v1/people/s/sanitize?format=plt", tok, sample.PLT, map[string]string{"Idempotency-Key": key})
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var sr api.SanitizeResponse
		if err := json.Unmarshal(r.body, &sr); err != nil {
			t.Fatal(err)
		}
		var plt string
		if err := json.Unmarshal(sr.Trace, &plt); err != nil || !strings.HasPrefix(plt, "Geolife trajectory") {
			t.Errorf("trace is not a PLT file: %.80s", sr.Trace)
		}
		if sr.Format != "plt" || sr.Points != strings.Count(string(sample.PLT), "\n")-6 || sr.EpsilonCharged <= 0 || sr.EpsilonCharged > 1+1e-9 || sr.Spent != sr.EpsilonCharged || sr.Lambda != 2 || sr.RadiusM != 100 {
			t.Errorf("response: %+v", sr)
		}
		var cert map[string]any
		json.Unmarshal(sr.Certificate, &cert)
		if cert["version"].(float64) != sanitize.CertificateVersion || cert["epsilon_max"].(float64) != sr.EpsilonCharged {
			t.Errorf("certificate: version %v, epsilon_max %v", cert["version"], cert["epsilon_max"])
		}
		if len(sr.Original) == 0 || !strings.Contains(string(sr.Original), "FeatureCollection") {
			t.Errorf("no original GeoJSON")
		}
		// The stored answer holds no true location: the original is not stored.
		var stored []byte
		e.srv.store.Scan(context.Background(), func(v *store.View) error {
			a, err := v.Answer("s", key)
			if a != nil {
				stored = a.Body
			}
			return err
		})
		if len(stored) == 0 || strings.Contains(string(stored), `"original"`) || strings.Contains(string(stored), "39.984") {
			t.Errorf("stored response holds the original trace")
		}
		// A retry is the stored answer, with the original derived again.
		r2 := e.do("POST", "/v1/people/s/sanitize?format=plt", tok, sample.PLT, map[string]string{"Idempotency-Key": key})
		if r2.status != 200 || string(r2.body) != string(r.body) {
			t.Errorf("replay differs: %d", r2.status)
		}
		// GeoJSON on request, composed with the first release.
		r3 := e.do("POST", "/v1/people/s/sanitize?output=geojson", tok, sample.PLT, map[string]string{"Content-Type": "application/vnd.geolife.plt"})
		if r3.status != 200 {
			t.Fatalf("%d %s", r3.status, r3.body)
		}
		var sr3 api.SanitizeResponse
		json.Unmarshal(r3.body, &sr3)
		var gj map[string]any
		if err := json.Unmarshal(sr3.Trace, &gj); err != nil || gj["type"] != "FeatureCollection" || sr3.Format != "geojson" {
			t.Errorf("geojson output: %v %.80s", err, sr3.Trace)
		}
		if sr3.Spent != sr.Spent+sr3.EpsilonCharged {
			t.Errorf("composition: %v after %v and %v", sr3.Spent, sr.Spent, sr3.EpsilonCharged)
		}
		// A third release does not fit in 2.5: refused, nothing changes.
		before := e.snapshot()
		r4 := e.do("POST", "/v1/people/s/sanitize?format=plt", tok, sample.PLT, nil)
		if r4.status != http.StatusTooManyRequests || r4.errCode(t) != api.CodeBudgetExhausted {
			t.Errorf("third release: %d %s", r4.status, r4.body)
		}
		if !equalState(before, e.snapshot()) {
			t.Errorf("a refused release changed the store")
		}
		l := e.ledgerOf("s", tok)
		if l.CIP.Spent != sr3.Spent || l.CIP.Budget != 2.5 || len(l.Charges) != 2 || l.Charges[1].Kind != "cip" {
			t.Errorf("ledger: %+v", l.CIP)
		}
	})
}

func TestHealthzMetricsOpenAPIPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	r := e.do("GET", "/healthz", "", nil, nil)
	if r.status != 200 || r.json(t)["status"] != "ok" {
		t.Errorf("healthz: %d %s", r.status, r.body)
	}
	tok := e.createPerson(map[string]any{"account": roomy, "id": "m", "epsilon_budget": 0.02})
	e.locate("m", tok, beijing[0], beijing[1], e.clock.Now(), "")
	// The metrics say what was charged and refused: the admin's only.
	for _, tk := range []string{"", tok} {
		if r := e.do("GET", "/metrics", tk, nil, nil); r.status != http.StatusUnauthorized && r.status != http.StatusForbidden {
			t.Errorf("metrics with token %q: %d", tk, r.status)
		}
	}
	r = e.do("GET", "/metrics", testAdmin, nil, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `tracepriv_charges_total{kind="geoind"} 1`) ||
		!strings.Contains(string(r.body), `tracepriv_http_requests_total{code="200",method="POST",route="POST /v1/people/{id}/locate"} 1`) {
		t.Errorf("metrics: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), tok) || strings.Contains(string(r.body), `"m"`) {
		t.Errorf("metrics mention a token or a person")
	}
	r = e.do("GET", "/", "", nil, nil)
	if r.status != 200 || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("page: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r.header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src") {
		t.Errorf("page headers: %v", r.header)
	}
}

// TestCurlDefaultContentType: JSON sent as curl -d sends it (Content-Type
// application/x-www-form-urlencoded) is accepted, as the documented curl
// examples need.
func TestCurlDefaultContentType(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	r := e.do("POST", "/v1/people", testAdmin, []byte(`{"id": "curl", "epsilon_budget": 0.023}`), form)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	tok := r.json(t)["token"].(string)
	form["Idempotency-Key"] = newKey()
	r = e.do("POST", "/v1/people/curl/locate", tok, []byte(`{"lat": 39.9841, "lon": 116.3185, "time": "2026-01-01T00:00:00Z"}`), form)
	if r.status != http.StatusOK {
		t.Fatalf("locate: %d %s", r.status, r.body)
	}
}
