package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/tracepriv/tracepriv/server"
	"github.com/tracepriv/tracepriv/server/api"
)

// call sends body (JSON) to the API and decodes a 2xx answer into out, or
// returns the API's error as an *api.Error.
func call(method, url, token, key string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key) // the same key when retrying
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e api.ErrorResponse
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == nil {
			return fmt.Errorf("%s %s: status %d", method, url, resp.StatusCode)
		}
		return e.Error
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// A Go client of the HTTP API: an admin creates a person, whose app asks
// where they are; a query without an Idempotency-Key is refused with a
// code the client branches on.
func Example() {
	base, admin, stop := startService()
	defer stop()

	budget := 0.02 // epsilon per metre per window (api.UnitGeoind)
	var alice api.CreatePersonResponse
	if err := call("POST", base+"/v1/people", admin, "", api.CreatePersonRequest{ID: "alice", EpsilonBudget: &budget}, &alice); err != nil {
		panic(err)
	}
	fmt.Println("created:", alice.ID, alice.Geoind.Mechanism, alice.Geoind.Manager, "prior", alice.CIP.Prior)

	fix := api.LocateRequest{Lat: 39.9841, Lon: 116.3185, Time: time.Now()}
	var ans api.LocateResponse
	if err := call("POST", base+"/v1/people/alice/locate", alice.Token, "fix-1", fix, &ans); err != nil {
		panic(err)
	}
	fmt.Println("answered: seq", ans.Seq, "charged within budget:", ans.EpsilonCharged <= ans.Budget, "unit:", ans.Unit == api.UnitGeoind)

	var e *api.Error
	if err := call("POST", base+"/v1/people/alice/locate", alice.Token, "", fix, &ans); errors.As(err, &e) {
		fmt.Println("refused:", e.Code, e.Code == api.CodeBadRequest)
	}
	// Output:
	// created: alice pm fixed-rate prior bundled
	// answered: seq 1 charged within budget: true unit: true
	// refused: bad_request true
}

// startService runs the service on a loopback port for the example: its
// URL, the admin token, and how to stop it.
func startService() (base, admin string, stop func()) {
	dir, err := os.MkdirTemp("", "tracepriv-api-example")
	if err != nil {
		panic(err)
	}
	admin = "admin-token-for-the-example-0123456789"
	s, err := server.New(context.Background(), server.Options{DataDir: dir, AdminToken: admin})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(s.Handler())
	return ts.URL, admin, func() {
		ts.Close()
		s.Close()
		os.RemoveAll(dir)
	}
}
