package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/server"
	"github.com/tracepriv/tracepriv/server/api"
)

const (
	testAdmin  = "webtest-admin-token-0123456789abcdef"
	testPerson = "alice"
	// accuracyM is the person's fixed-utility accuracy: with the independent mechanism every
	// answer costs exactly geoind.CN(0.9)/accuracyM and reports this accuracy radius.
	accuracyM = 400
	// answersPaid is how many answers the window's budget pays for (it holds half an answer more,
	// so the next one is refused).
	answersPaid = 3
)

// windowStart is the server's clock, fixed: the person is created then, so the budget's window
// runs from it for an hour and a spent budget renews in exactly 1 h.
var windowStart = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)

// service is the real tracepriv service (package server: the API, the ledger in SQLite in a
// temporary directory, the embedded page) on a loopback httptest server, with one person
// created through the API. The page talks to it through front, which forwards every request
// unchanged and records the exchange, and can lose answers on their way back as a failing
// proxy would: the server has then committed, and the page's retry must get the stored answer.
type service struct {
	t     *testing.T
	srv   *server.Server
	ts    *httptest.Server
	token string
	// budget is the person's online budget per window and charge the cost of one answer.
	budget, charge float64
	upload         []byte // the trace file the tests upload (PLT)

	mu          sync.Mutex
	loseLocates int // the answers of this many next locate calls are replaced by a 503
	exchanges   []exchange
}

// exchange is one request of the page and what it got.
type exchange struct {
	Method, Path, RawQuery        string
	Authorization, IdempotencyKey string
	Body                          []byte
	// Status is what the page received, ServerStatus what the server answered (they differ when
	// the front lost the answer), Response the server's body, Replayed whether the server
	// answered from its ledger (Idempotent-Replayed).
	Status, ServerStatus int
	Response             []byte
	Replayed             bool
}

func newService(t *testing.T) *service {
	t.Helper()
	return newServiceWeb(t, nil)
}

// newServiceWeb is newService with page as the server's web page (nil: the default).
func newServiceWeb(t *testing.T, page http.Handler) *service {
	t.Helper()
	srv, err := server.New(context.Background(), server.Options{
		DataDir:    t.TempDir(),
		AdminToken: testAdmin,
		Now:        func() time.Time { return windowStart },
		Web:        page,
	})
	if err != nil {
		t.Fatal(err)
	}
	upload, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	charge := geoind.CN(0.9) / accuracyM
	s := &service{t: t, srv: srv, budget: (answersPaid + 0.5) * charge, charge: charge, upload: upload}
	s.ts = httptest.NewServer(http.HandlerFunc(s.front)) // 127.0.0.1 only
	t.Cleanup(func() {
		s.ts.Close()
		srv.Close()
	})
	var created struct{ Token string }
	s.call("POST", "/v1/people", testAdmin, map[string]any{
		"id": testPerson, "epsilon_budget": s.budget,
		"geoind": map[string]any{"mechanism": "im", "manager": "fixed-utility", "accuracy_m": accuracyM, "window": "1h"},
		// The person's one account (issue 31): every window's session is
		// charged to it (3.45 here), so it pays the sessions these tests
		// open and their trace releases.
		"cip": map[string]any{"epsilon_budget": 20},
	}, http.StatusCreated, &created)
	s.token = created.Token
	return s
}

// front forwards a request to the real handler and records the exchange.
func (s *service) front(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	s.srv.Handler().ServeHTTP(rec, r)
	res := rec.Result()
	ex := exchange{
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), IdempotencyKey: r.Header.Get("Idempotency-Key"), Body: body,
		Status: res.StatusCode, ServerStatus: res.StatusCode, Response: rec.Body.Bytes(),
		Replayed: res.Header.Get("Idempotent-Replayed") == "true",
	}
	s.mu.Lock()
	lose := r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/locate") && s.loseLocates > 0
	if lose {
		s.loseLocates--
		ex.Status = http.StatusServiceUnavailable
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		s.exchanges = append(s.exchanges, ex)
	}
	s.mu.Unlock()
	if lose {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"code":"unavailable","message":"the proxy lost the answer"}}`)
		return
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	w.Write(rec.Body.Bytes())
}

// call sends one request to the service from the test (not through the page's front), checks
// the status and decodes the answer into out.
func (s *service) call(method, path, token string, body any, want int, out any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != want {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, want)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			s.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// ledger reads the person's ledger from the server.
func (s *service) ledger() api.LedgerResponse {
	s.t.Helper()
	var l api.LedgerResponse
	s.call("GET", "/v1/people/"+testPerson+"/ledger", s.token, nil, http.StatusOK, &l)
	return l
}

// chargesOf returns the ledger's charges of one kind.
func (s *service) chargesOf(kind string) []api.Charge {
	var out []api.Charge
	for _, c := range s.ledger().Charges {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// requestsTo returns the recorded exchanges of method whose path ends in suffix.
func (s *service) requestsTo(method, suffix string) []exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []exchange
	for _, e := range s.exchanges {
		if e.Method == method && strings.HasSuffix(e.Path, suffix) {
			out = append(out, e)
		}
	}
	return out
}

// all returns every recorded API exchange.
func (s *service) all() []exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]exchange{}, s.exchanges...)
}

// decode decodes a recorded JSON answer.
func decode[T any](t *testing.T, e exchange) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Response, &v); err != nil {
		t.Fatalf("%s %s answered %d with %.200q: %v", e.Method, e.Path, e.ServerStatus, e.Response, err)
	}
	return v
}
