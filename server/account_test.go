package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server/api"
)

// certDigest is a made-up certificate's SHA-256, as a device sends it.
func certDigest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// charge posts a device charge.
func (e *testEnv) charge(id, token, key string, body map[string]any) response {
	e.t.Helper()
	hdr := map[string]string{}
	if key != "" {
		hdr["Idempotency-Key"] = key
	}
	return e.do("POST", "/v1/people/"+id+"/charges", token, body, hdr)
}

func exhaustedKind(t testing.TB, r response) string {
	t.Helper()
	if r.status != http.StatusTooManyRequests || r.errCode(t) != api.CodeBudgetExhausted {
		t.Fatalf("want a budget refusal, got %d %s", r.status, r.body)
	}
	k, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)["kind"].(string)
	return k
}

// TestOneAccount: a person who spends half of their one budget on a geoind
// session and half on a CIP upload is refused the next release of either,
// by the service and by the device. Before issue 31 the service kept two
// budgets (and windows renewed the geoind one), and answered both.
func TestOneAccount(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		// A session of eps per metre on the 1 m grid is e = eps (100 + √2)
		// = 1, charged min(e, λe²/2) = 1 at order 2 within 100 m.
		eps := 1 / (100 + math.Sqrt2)
		if c := budget.GeoIndCharge(eps, 1, 2, 100); math.Abs(c-1) > 1e-12 {
			t.Fatalf("session charge %v, want 1", c)
		}
		tok := e.createPerson(map[string]any{"id": "h", "epsilon_budget": eps, "account": map[string]any{"epsilon_budget": 2.0},
			"geoind": map[string]any{"window": "1h", "rate": eps / 30}})
		t0 := e.clock.Now()
		r := e.locate("h", tok, beijing[0], beijing[1], t0, "")
		if r.status != 200 {
			t.Fatalf("first query: %d %s", r.status, r.body)
		}
		var lr api.LocateResponse
		json.Unmarshal(r.body, &lr)
		if math.Abs(lr.Account.Charged-1) > 1e-12 || lr.Account.Spent != lr.Account.Charged || lr.Account.Budget != 2 {
			t.Errorf("first query charged the account %+v, want the session's 1 of 2", lr.Account)
		}
		// The window's later queries are the same session: already paid.
		r = e.locate("h", tok, beijing[0], beijing[1], t0.Add(time.Second), "")
		json.Unmarshal(r.body, &lr)
		if r.status != 200 || lr.Account.Charged != 0 {
			t.Errorf("second query of the session: %d, charged %v", r.status, lr.Account.Charged)
		}
		// The other half on a CIP upload (target 1, certified at most 1).
		r = e.do("POST", "/v1/people/h/sanitize?format=plt", tok, sample.PLT, nil)
		if r.status != 200 {
			t.Fatalf("upload: %d %s", r.status, r.body)
		}
		var sr api.SanitizeResponse
		json.Unmarshal(r.body, &sr)
		if sr.EpsilonCharged <= 0.5 || sr.EpsilonCharged > 1+1e-9 || math.Abs(sr.Spent-(1+sr.EpsilonCharged)) > 1e-12 || sr.Budget != 2 || sr.Unit != api.UnitAccount {
			t.Errorf("upload: charged %v, spent %v of %v (%s); want the session's 1 plus the release", sr.EpsilonCharged, sr.Spent, sr.Budget, sr.Unit)
		}
		before := e.snapshot()
		// The next release of either is refused, before anything is drawn.
		if k := exhaustedKind(t, e.do("POST", "/v1/people/h/sanitize?format=plt", tok, sample.PLT, nil)); k != "account" {
			t.Errorf("next upload refused by %q, want the account", k)
		}
		e.clock.Add(time.Hour) // a new window: a new session, which the account cannot pay
		r = e.locate("h", tok, beijing[0], beijing[1], e.clock.Now(), "")
		if k := exhaustedKind(t, r); k != "account" || r.header.Get("Retry-After") != "" {
			t.Errorf("next session refused by %q (Retry-After %q), want the account, for good", k, r.header.Get("Retry-After"))
		}
		for _, body := range []map[string]any{
			{"mechanism": "geoind", "epsilon": eps, "radius_m": 100},
			{"mechanism": "cip", "epsilon": 1, "radius_m": 100, "certificate_sha256": certDigest("x")},
		} {
			if k := exhaustedKind(t, e.charge("h", tok, newKey(), body)); k != "account" {
				t.Errorf("device %s charge refused by %q, want the account", body["mechanism"], k)
			}
		}
		if !equalState(before, e.snapshot()) {
			t.Errorf("refused releases changed the store")
		}
		var cert json.RawMessage = sr.Certificate
		l := e.ledgerOf("h", tok)
		if got := l.Charges[len(l.Charges)-1]; got.Kind != "cip" || got.Origin != "service" || got.CertificateSHA256 != certDigest(string(cert)) {
			t.Errorf("the upload's ledger line %+v does not name its certificate's SHA-256", got)
		}
		if l.Account.Spent != sr.Spent || l.Account.Budget != 2 || l.CIP.Spent != sr.EpsilonCharged || l.CIP.Budget != 2 || !l.CIP.Exhausted || !l.Exhausted {
			t.Errorf("ledger: account %+v, cip %+v, exhausted %v", l.Account, l.CIP, l.Exhausted)
		}
	})
}

// TestCharges: the device's charges endpoint charges the account with
// package budget's conversion, answers with the charge before the device
// draws, lists it in the ledger, and answers a retry from the ledger.
func TestCharges(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"id": "dv", "epsilon_budget": 0.02, "account": map[string]any{"epsilon_budget": 4.5}})
		geo := map[string]any{"mechanism": "geoind", "epsilon": 0.01, "radius_m": 100, "grid_m": 5}
		key := newKey()
		r := e.charge("dv", tok, key, geo)
		if r.status != http.StatusCreated {
			t.Fatalf("geoind charge: %d %s", r.status, r.body)
		}
		var c1 api.ChargeResponse
		json.Unmarshal(r.body, &c1)
		want := budget.GeoIndCharge(0.01, 5, 2, 100) // e = 0.01 (100 + 5√2)
		if c1.ChargeID == "" || c1.EpsilonCharged != want || c1.Spent != want || c1.Budget != 4.5 || c1.Remaining != 4.5-want || c1.Lambda != 2 || c1.RadiusM != 100 {
			t.Errorf("geoind charge: %+v, want %v of 4.5", c1, want)
		}
		// Idempotent: the same key and body is the same charge, another
		// spelling of the body too; nothing is charged again.
		before := e.snapshot()
		for _, b := range []any{geo, []byte(`{"radius_m": 100.0, "grid_m": 5e0, "epsilon": 1e-2, "mechanism": "geoind"}`)} {
			r2 := e.do("POST", "/v1/people/dv/charges", tok, b, map[string]string{"Idempotency-Key": key, "Content-Type": "application/json"})
			if r2.status != http.StatusCreated || string(r2.body) != string(r.body) || r2.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry: %d %s (first %s)", r2.status, r2.body, r.body)
			}
		}
		// The same key with another body is a typed conflict.
		r3 := e.charge("dv", tok, key, map[string]any{"mechanism": "geoind", "epsilon": 0.011, "radius_m": 100, "grid_m": 5})
		if r3.status != http.StatusUnprocessableEntity || r3.errCode(t) != api.CodeIdempotencyKey {
			t.Errorf("reused key: %d %s", r3.status, r3.body)
		}
		if !equalState(before, e.snapshot()) {
			t.Errorf("retries changed the store")
		}
		// A CIP release certified within a larger radius at a higher order.
		dig := certDigest("certificate 2")
		r = e.charge("dv", tok, newKey(), map[string]any{"mechanism": "cip", "epsilon": 0.75, "radius_m": 200, "lambda": 4, "certificate_sha256": dig})
		var c2 api.ChargeResponse
		if json.Unmarshal(r.body, &c2); r.status != http.StatusCreated || c2.EpsilonCharged != 0.75 || c2.Spent != want+0.75 || c2.ChargeID == c1.ChargeID {
			t.Errorf("cip charge: %d %s", r.status, r.body)
		}
		// Refusals name the field, and store nothing.
		before = e.snapshot()
		for _, tc := range []struct {
			body   map[string]any
			status int
			field  string
		}{
			{map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 100}, 400, "certificate_sha256"},
			{map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 50, "certificate_sha256": dig}, 422, "radius_m"},
			{map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 100, "lambda": 1.5, "certificate_sha256": dig}, 422, "radius_m"},
			{map[string]any{"mechanism": "cip", "epsilon": 0.1, "radius_m": 100, "certificate_sha256": strings.ToUpper(dig)}, 400, "certificate_sha256"},
			{map[string]any{"mechanism": "geoind", "epsilon": 0.01, "radius_m": 150}, 422, "radius_m"},
			{map[string]any{"mechanism": "geoind", "epsilon": 0.01, "radius_m": 100, "lambda": 3}, 400, "lambda"},
			{map[string]any{"mechanism": "laplace", "epsilon": 0.01, "radius_m": 100}, 400, "mechanism"},
			{map[string]any{"mechanism": "geoind", "epsilon": -1, "radius_m": 100}, 400, "epsilon"},
			{map[string]any{"mechanism": "geoind", "epsilon": 0.01}, 400, "radius_m"},
		} {
			r := e.charge("dv", tok, newKey(), tc.body)
			if f, _ := r.json(t)["error"].(map[string]any)["field"].(string); r.status != tc.status || f != tc.field {
				t.Errorf("%v: %d %s, want %d naming %s", tc.body, r.status, r.body, tc.status, tc.field)
			}
		}
		if r := e.charge("dv", tok, "", geo); r.status != 400 || !strings.Contains(string(r.body), "Idempotency-Key") {
			t.Errorf("no key: %d %s", r.status, r.body)
		}
		// Over the budget: refused before anything is drawn.
		if k := exhaustedKind(t, e.charge("dv", tok, newKey(), map[string]any{"mechanism": "cip", "epsilon": 3, "radius_m": 100, "certificate_sha256": dig})); k != "account" {
			t.Errorf("over budget refused by %q", k)
		}
		if !equalState(before, e.snapshot()) {
			t.Errorf("refused charges changed the store")
		}
		l := e.ledgerOf("dv", tok)
		if len(l.Charges) != 2 || l.Account.Spent != c2.Spent {
			t.Fatalf("ledger: %d charges, account %+v", len(l.Charges), l.Account)
		}
		g, c := l.Charges[0], l.Charges[1]
		if g.ChargeID != c1.ChargeID || g.Mechanism != "geoind" || g.Origin != "device" || g.Amount != 0.01 || g.Epsilon != want ||
			c.ChargeID != c2.ChargeID || c.Kind != "cip" || c.Origin != "device" || c.Epsilon != 0.75 || c.CertificateSHA256 != dig {
			t.Errorf("ledger charges: %+v", l.Charges)
		}
		// Device charges are not the service's geoind run: the service's
		// own session still starts afresh, charged to the same account.
		r = e.locate("dv", tok, beijing[0], beijing[1], e.clock.Now(), "")
		var lr api.LocateResponse
		if json.Unmarshal(r.body, &lr); r.status != 200 || lr.Step != 0 || lr.Account.Charged != budget.GeoIndCharge(0.02, geoind.DefaultGrid, 2, 100) {
			t.Errorf("service query after device charges: %d %s", r.status, r.body)
		}
		checkInvariants(t, e.srv.store)
	})
}

// TestChargesConcurrent: 50 concurrent charges, over loopback, on a budget
// that pays 10 of them: exactly 10 are charged, the others refused, and a
// key sent twice at once is charged once, both answers the same charge.
func TestChargesConcurrent(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"id": "race", "epsilon_budget": 0.02, "account": map[string]any{"epsilon_budget": 10.0}})
		const n = 50
		keys := make([]string, n)
		for i := range keys {
			keys[i] = newKey()
			if i%5 == 4 {
				keys[i] = keys[i-1] // ten keys sent twice at once
			}
		}
		body := map[string]any{"mechanism": "cip", "epsilon": 1.0, "radius_m": 100, "certificate_sha256": certDigest("race")}
		out := make([]response, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i] = e.on(t).charge("race", tok, keys[i], body)
			}()
		}
		close(start)
		wg.Wait()
		byKey := map[string]string{}
		ok, refused := 0, 0
		for i, r := range out {
			switch r.status {
			case http.StatusCreated:
				var c api.ChargeResponse
				json.Unmarshal(r.body, &c)
				if id, seen := byKey[keys[i]]; seen && id != c.ChargeID {
					t.Errorf("key %s answered charges %s and %s", keys[i], id, c.ChargeID)
				} else if !seen {
					ok++
				}
				byKey[keys[i]] = c.ChargeID
			case http.StatusTooManyRequests:
				refused++
			default:
				t.Errorf("charge %d: %d %s", i, r.status, r.body)
			}
		}
		l := e.ledgerOf("race", tok)
		if ok != 10 || len(l.Charges) != 10 || l.Account.Spent != 10 || l.Account.Spent > l.Account.Budget {
			t.Errorf("%d keys charged (%d refusals), ledger %d charges, spent %v of %v; want exactly 10", ok, refused, len(l.Charges), l.Account.Spent, l.Account.Budget)
		}
		checkInvariants(t, e.srv.store)
	})
}

// TestChargesCrash: the service is SIGKILLed after a charge committed and
// before its answer left; the device, which got no answer, retries with
// the same Idempotency-Key after the restart and gets the same charge,
// never a second one. Both stores.
func TestChargesCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	// In parallel with the other tests, both stores at once: the kill is
	// asked of this test's server process alone (its environment).
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		srv := launchEnv(t, d, []string{killAfterChargeEnv + "=1"})
		people := createPeople(t, srv.base, testAdmin, 1, "k", func(int) map[string]any {
			return map[string]any{"epsilon_budget": 0.02, "account": map[string]any{"epsilon_budget": 1.5}}
		})
		p := people[0]
		key := newKey()
		body := `{"mechanism": "cip", "epsilon": 1, "radius_m": 100, "certificate_sha256": "` + certDigest("crash") + `"}`
		post := func() (*http.Response, []byte, error) {
			req, _ := http.NewRequest("POST", srv.base+"/v1/people/"+p.id+"/charges", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+p.token)
			req.Header.Set("Idempotency-Key", key)
			res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				return nil, nil, err
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			return res, b, err
		}
		if res, b, err := post(); err == nil {
			t.Fatalf("the server answered %d %s instead of dying between charge and answer", res.StatusCode, b)
		}
		srv.p.cmd.Wait()
		srv.env = nil
		srv.start(t)
		res, b, err := post()
		if err != nil || res.StatusCode != http.StatusCreated || res.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry after the crash: %v %v %s", err, res, b)
		}
		var c api.ChargeResponse
		json.Unmarshal(b, &c)
		// A second charge of 1 would not fit in 1.5: had the retry charged
		// again it would have been refused; it is the first charge.
		if c.ChargeID != chargeID(1) || c.Spent != 1 {
			t.Errorf("retry: %+v, want charge %s with 1 spent", c, chargeID(1))
		}
		req, _ := http.NewRequest("GET", srv.base+"/v1/people/"+p.id+"/ledger", nil)
		req.Header.Set("Authorization", "Bearer "+p.token)
		lres, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer lres.Body.Close()
		var l api.LedgerResponse
		json.NewDecoder(lres.Body).Decode(&l)
		if len(l.Charges) != 1 || l.Account.Spent != 1 || l.Charges[0].ChargeID != c.ChargeID {
			t.Errorf("ledger after the crash and retry: %d charges, spent %v", len(l.Charges), l.Account.Spent)
		}
		srv.stop()
	})
}

// TestAccountTerms: a person of schema 1 gets, in migration 2, the
// smaller of their two old budgets in the account's currency (the geoind
// one per window converted as one session), and their configuration says
// so.
func TestAccountTerms(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	for _, tc := range []struct{ geo, cip, want float64 }{
		{0.02, 4, budget.GeoIndCharge(0.02, 1, 2, 100)}, // 2.03 < 4
		{0.05, 4, 4}, // 5.07 > 4
		{0.05, 0, budget.GeoIndCharge(0.05, 1, 2, 100)}, // no CIP releases allowed: the geoind budget
	} {
		cfg, err := e.srv.resolve(&api.CreatePersonRequest{ID: "x", EpsilonBudget: &tc.geo})
		if err != nil {
			t.Fatal(err)
		}
		cfg.CIP.Budget = tc.cip // schema 1 allowed a CIP budget of 0
		raw, _ := json.Marshal(cfg)
		terms, err := e.srv.accountTerms(string(raw), tc.geo, tc.cip)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := decodePersonConfig(terms.Config)
		if terms.Budget != tc.want || terms.SessionCharge != budget.GeoIndCharge(tc.geo, 1, 2, 100) || got == nil || got.CIP.Budget != tc.want {
			t.Errorf("geo %v, cip %v: terms %+v, want budget %v", tc.geo, tc.cip, terms, tc.want)
		}
	}
}
