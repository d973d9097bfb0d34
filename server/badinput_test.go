package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server/api"
)

// TestBadInput sends malformed, oversized, out-of-range, unauthorised and
// replayed requests: each gets a clear 4xx JSON error and changes nothing
// in the store.
func TestBadInput(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, func(o *Options) { o.MaxUploadBytes = 256 << 10 })
		alice := e.createPerson(map[string]any{"account": roomy, "id": "alice", "epsilon_budget": 0.05})
		bob := e.createPerson(map[string]any{"account": roomy, "id": "bob", "epsilon_budget": 0.05})
		t0 := e.clock.Now()
		usedKey := newKey()
		if r := e.locate("alice", alice, beijing[0], beijing[1], t0, usedKey); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		good := `{"lat": 39.9841, "lon": 116.3185, "time": "2026-01-01T00:01:00Z"}`
		jsonHdr := func(key string) map[string]string {
			return map[string]string{"Content-Type": "application/json", "Idempotency-Key": key}
		}
		huge := `{"lat": 39.9841, "lon": 116.3185, "time": "2026-01-01T00:01:00Z", "pad": "` + strings.Repeat("x", 1<<20) + `"}`
		cases := []struct {
			name         string
			method, path string
			token        string
			body         string
			hdr          map[string]string
			status       int
			code         api.Code
		}{
			{"truncated JSON", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9,`, jsonHdr(newKey()), 400, api.CodeBadJSON},
			{"not an object", "POST", "/v1/people/alice/locate", alice, `[1, 2]`, jsonHdr(newKey()), 400, api.CodeBadJSON},
			{"empty body", "POST", "/v1/people/alice/locate", alice, ``, jsonHdr(newKey()), 400, api.CodeBadJSON},
			{"trailing data", "POST", "/v1/people/alice/locate", alice, good + good, jsonHdr(newKey()), 400, api.CodeBadJSON},
			{"unknown field", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": 116.3, "time": "2026-01-01T00:01:00Z", "accuracy": 5}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"NaN literal", "POST", "/v1/people/alice/locate", alice, `{"lat": NaN, "lon": 116.3, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeBadJSON},
			{"NaN string", "POST", "/v1/people/alice/locate", alice, `{"lat": "NaN", "lon": 116.3, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"Infinity", "POST", "/v1/people/alice/locate", alice, `{"lat": Infinity, "lon": 116.3, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeBadJSON},
			{"1e999", "POST", "/v1/people/alice/locate", alice, `{"lat": 1e999, "lon": 116.3, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"lat 91", "POST", "/v1/people/alice/locate", alice, `{"lat": 91, "lon": 116.3, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"lon -180.5", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": -180.5, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"missing time", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": 116.3}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"missing lat", "POST", "/v1/people/alice/locate", alice, `{"lon": 116.3, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"time not RFC 3339", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": 116.3, "time": "yesterday"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"time without zone", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": 116.3, "time": "2008-10-24T02:11:00"}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"time as number", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": 116.3, "time": 1224814260}`, jsonHdr(newKey()), 400, api.CodeInvalidField},
			{"huge body", "POST", "/v1/people/alice/locate", alice, huge, jsonHdr(newKey()), 413, api.CodeTooLarge},
			{"text/plain", "POST", "/v1/people/alice/locate", alice, good, map[string]string{"Content-Type": "text/plain", "Idempotency-Key": newKey()}, 415, api.CodeUnsupportedMedia},
			{"a form's body (curl -d's type)", "POST", "/v1/people/alice/locate", alice, `lat=39.9&lon=116.3`, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Idempotency-Key": newKey()}, 400, api.CodeBadJSON},
			{"no Idempotency-Key", "POST", "/v1/people/alice/locate", alice, good, map[string]string{"Content-Type": "application/json"}, 400, api.CodeBadRequest},
			{"Idempotency-Key too long", "POST", "/v1/people/alice/locate", alice, good, jsonHdr(strings.Repeat("k", 300)), 400, api.CodeBadRequest},
			{"Idempotency-Key with a space", "POST", "/v1/people/alice/locate", alice, good, jsonHdr("a b"), 400, api.CodeBadRequest},
			{"replayed key, other body", "POST", "/v1/people/alice/locate", alice, good, jsonHdr(usedKey), 422, api.CodeIdempotencyKey},
			{"far from the origin", "POST", "/v1/people/alice/locate", alice, `{"lat": 48.8566, "lon": 2.3522, "time": "2026-01-01T00:01:00Z"}`, jsonHdr(newKey()), 422, api.CodeUnprocessable},
			{"time before the previous query", "POST", "/v1/people/alice/locate", alice, `{"lat": 39.9, "lon": 116.3, "time": "2025-12-31T23:59:00Z"}`, jsonHdr(newKey()), 422, api.CodeUnprocessable},
			{"no token", "POST", "/v1/people/alice/locate", "", good, jsonHdr(newKey()), 401, api.CodeUnauthorized},
			{"Basic auth", "POST", "/v1/people/alice/locate", "", good, map[string]string{"Authorization": "Basic YWxpY2U6eA==", "Content-Type": "application/json", "Idempotency-Key": newKey()}, 401, api.CodeUnauthorized},
			{"other person's token", "POST", "/v1/people/alice/locate", bob, good, jsonHdr(newKey()), 403, api.CodeForbidden},
			{"wrong token", "POST", "/v1/people/alice/locate", alice + "x", good, jsonHdr(newKey()), 403, api.CodeForbidden},
			{"unknown person", "POST", "/v1/people/carol/locate", alice, good, jsonHdr(newKey()), 403, api.CodeForbidden},
			{"malformed person id", "POST", "/v1/people/..%2f/locate", alice, good, jsonHdr(newKey()), 403, api.CodeForbidden},
			{"admin token cannot spend", "POST", "/v1/people/alice/locate", testAdmin, good, jsonHdr(newKey()), 403, api.CodeForbidden},
			{"cross-origin browser request", "POST", "/v1/people/alice/locate", alice, good, map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json", "Idempotency-Key": newKey()}, 403, api.CodeForbidden},
			{"cross-site fetch", "POST", "/v1/people/alice/locate", alice, good, map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json", "Idempotency-Key": newKey()}, 403, api.CodeForbidden},
			{"GET on locate", "GET", "/v1/people/alice/locate", alice, ``, nil, 405, api.CodeMethod},
			{"unknown operation", "POST", "/v1/people/alice/teleport", alice, good, jsonHdr(newKey()), 404, api.CodeNotFound},
			{"other person's ledger", "GET", "/v1/people/alice/ledger", bob, ``, nil, 403, api.CodeForbidden},
			{"ledger bad limit", "GET", "/v1/people/alice/ledger?limit=-1", alice, ``, nil, 400, api.CodeInvalidField},
			{"ledger unknown parameter", "GET", "/v1/people/alice/ledger?spent=0", alice, ``, nil, 400, api.CodeInvalidField},
			{"sanitize without a format", "POST", "/v1/people/alice/sanitize", alice, string(sample.PLT), nil, 415, api.CodeUnsupportedMedia},
			{"sanitize unknown format", "POST", "/v1/people/alice/sanitize?format=kml", alice, string(sample.PLT), nil, 400, api.CodeInvalidField},
			{"sanitize garbage PLT", "POST", "/v1/people/alice/sanitize?format=plt", alice, "not a trace\n", nil, 400, api.CodeBadRequest},
			{"sanitize broken GeoJSON", "POST", "/v1/people/alice/sanitize", alice, `{"type": "FeatureCollection", "features": [`, map[string]string{"Content-Type": "application/geo+json"}, 400, api.CodeBadRequest},
			{"sanitize too large", "POST", "/v1/people/alice/sanitize?format=csv", alice, "uid,time,lat,lon\n" + strings.Repeat("a,2026-01-01T00:01:00Z,39.9,116.3\n", 10000), nil, 413, api.CodeTooLarge},
			{"sanitize bad epsilon", "POST", "/v1/people/alice/sanitize?format=plt&epsilon=-1", alice, string(sample.PLT), nil, 400, api.CodeInvalidField},
			{"sanitize unknown parameter", "POST", "/v1/people/alice/sanitize?format=plt&seed=1", alice, string(sample.PLT), nil, 400, api.CodeInvalidField},
			{"sanitize other person's token", "POST", "/v1/people/alice/sanitize?format=plt", bob, string(sample.PLT), nil, 403, api.CodeForbidden},
			{"create: no admin", "POST", "/v1/people", alice, `{"id": "x", "epsilon_budget": 1}`, nil, 403, api.CodeForbidden},
			{"create: missing budget", "POST", "/v1/people", testAdmin, `{"id": "x"}`, nil, 400, api.CodeInvalidField},
			{"create: negative budget", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": -1}`, nil, 400, api.CodeInvalidField},
			{"create: budget as string", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": "1"}`, nil, 400, api.CodeInvalidField},
			{"create: bad id", "POST", "/v1/people", testAdmin, `{"id": "a b", "epsilon_budget": 1}`, nil, 400, api.CodeInvalidField},
			{"create: unknown field", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": 1, "spent": 0}`, nil, 400, api.CodeInvalidField},
			{"create: rate above budget", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": 0.01, "geoind": {"rate": 0.1}}`, nil, 400, api.CodeInvalidField},
			{"create: bad window", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": 0.01, "geoind": {"window": "soon"}}`, nil, 400, api.CodeInvalidField},
			{"create: bad lambda", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": 0.01, "cip": {"lambda": 1}}`, nil, 400, api.CodeInvalidField},
			{"create: bad prior", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": 0.01, "cip": {"prior": {"version": 2, "kernel": "nope"}}}`, nil, 400, api.CodeInvalidField},
			{"create: origin off the Earth", "POST", "/v1/people", testAdmin, `{"id": "x", "epsilon_budget": 0.01, "geoind": {"origin": {"lat": 95, "lon": 0}}}`, nil, 400, api.CodeInvalidField},
			{"create: existing id", "POST", "/v1/people", testAdmin, `{"id": "bob", "epsilon_budget": 1}`, nil, 409, api.CodeConflict},
		}
		before := e.snapshot()
		// Each case is a subtest (pick one with -run 'TestBadInput/sqlite/cases/lat_91');
		// they run in parallel, since none changes the store, and the
		// group ends when every case has.
		t.Run("cases", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					e := e.on(t)
					hdr := map[string]string{}
					for k, v := range c.hdr {
						hdr[k] = v
					}
					if c.hdr == nil && c.method == "POST" && strings.HasPrefix(c.body, "{") && !strings.Contains(c.path, "sanitize") {
						hdr["Content-Type"] = "application/json"
					}
					r := e.do(c.method, c.path, c.token, c.body, hdr)
					if r.status != c.status {
						t.Fatalf("status %d, want %d: %s", r.status, c.status, truncate(string(r.body), 300))
					}
					if code := r.errCode(t); code != c.code {
						t.Errorf("code %q, want %q: %s", code, c.code, r.body)
					}
					// A bad prior reads as its field and the prior's own
					// parameter error, with context added once.
					if strings.Contains(c.body, `"prior"`) {
						msg, _ := r.json(t)["error"].(map[string]any)["message"].(string)
						if want := `cip.prior: kernel = "nope": must be one of`; !strings.HasPrefix(msg, want) || strings.Contains(msg, "prior: prior") {
							t.Errorf("message %q, want it to start %q", msg, want)
						}
					}
					if c.status == 401 || c.status == 403 {
						if strings.Contains(string(r.body), "bob") && c.token == bob {
							t.Errorf("the error names another person: %s", r.body)
						}
					}
				})
			}
		})
		if after := e.snapshot(); !equalState(before, after) {
			t.Errorf("bad requests changed the store:\nbefore %v\nafter  %v", before, after)
		}
		checkInvariants(t, e.srv.store)
	})
}

// TestForbiddenSaysNothing: a wrong token gets the same answer whether the
// person exists or not.
func TestForbiddenSaysNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	alice := e.createPerson(map[string]any{"account": roomy, "id": "alice", "epsilon_budget": 0.05})
	e.createPerson(map[string]any{"account": roomy, "id": "bob", "epsilon_budget": 0.05})
	strip := func(b []byte) string {
		s := string(b)
		if i := strings.Index(s, `"request_id"`); i >= 0 {
			s = s[:i]
		}
		return s
	}
	a := e.do("GET", "/v1/people/bob/ledger", alice, nil, nil)
	b := e.do("GET", "/v1/people/nobody/ledger", alice, nil, nil)
	if a.status != 403 || b.status != 403 || strip(a.body) != strip(b.body) {
		t.Errorf("existing %d %s vs missing %d %s", a.status, a.body, b.status, b.body)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, func(o *Options) { o.RateLimit, o.Burst = 1, 5 })
	// The buckets refill on the test's clock, which stands still: how long
	// the requests take on this machine does not matter.
	e.srv.limits.now, e.srv.failures.now = e.clock.Now, e.clock.Now
	tok := e.createPerson(map[string]any{"account": roomy, "id": "r", "epsilon_budget": 0.05})
	var limited response
	n := 0
	for range 20 {
		r := e.do("GET", "/v1/people/r/ledger", tok, nil, nil)
		if r.status == http.StatusTooManyRequests {
			limited = r
			break
		}
		n++
	}
	if n != 5 || limited.status != 429 || limited.errCode(t) != api.CodeRateLimited || limited.header.Get("Retry-After") == "" {
		t.Errorf("%d requests before 429 (want the burst, 5); %d %v %s", n, limited.status, limited.header, limited.body)
	}
	// Another person's token has its own bucket.
	tok2 := e.createPerson(map[string]any{"account": roomy, "id": "r2", "epsilon_budget": 0.05})
	if r := e.do("GET", "/v1/people/r2/ledger", tok2, nil, nil); r.status != 200 {
		t.Errorf("other token limited: %d", r.status)
	}
	// Repeated wrong tokens from one address are slowed down too.
	codes := map[int]int{}
	for range 20 {
		codes[e.do("GET", "/v1/people/r/ledger", "wrong", nil, nil).status]++
	}
	if codes[429] == 0 {
		t.Errorf("wrong tokens never limited: %v", codes)
	}
}
