package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/server"
	"github.com/tracepriv/tracepriv/server/api"
)

// Embedding the service: an admin creates a person, whose app asks where
// they are; a retry with the same Idempotency-Key gets the stored answer
// and is not charged again.
func Example() {
	dir, err := os.MkdirTemp("", "tracepriv-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := server.New(ctx, server.Options{DataDir: dir, AdminToken: "admin-token-for-the-example-0123456789"})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	call := func(method, path, token, key, body string, out any) int {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			panic(err)
		}
		return resp.StatusCode
	}
	var person struct{ Token string }
	fmt.Println(call("POST", "/v1/people", "admin-token-for-the-example-0123456789", "", `{"id": "alice", "epsilon_budget": 0.02}`, &person))

	// The time of the fix: now (the server accepts times within
	// DefaultTimeWindow of its clock).
	fix := fmt.Sprintf(`{"lat": 39.9, "lon": 116.3, "time": %q}`, time.Now().UTC().Format(time.RFC3339))
	var a, b api.LocateResponse
	fmt.Println(call("POST", "/v1/people/alice/locate", person.Token, "fix-1", fix, &a))
	fmt.Println(call("POST", "/v1/people/alice/locate", person.Token, "fix-1", fix, &b))
	fmt.Println("same answer:", a.Lat == b.Lat && a.Lon == b.Lon)

	var ledger api.LedgerResponse
	call("GET", "/v1/people/alice/ledger", person.Token, "", "", &ledger)
	fmt.Println("charged once:", ledger.Spent == a.EpsilonCharged)
	// Output:
	// 201
	// 200
	// 200
	// same answer: true
	// charged once: true
}
