// Package api is the wire format of the tracepriv service's HTTP API (package
// server, "tracepriv serve"): the JSON bodies of its requests, answers and
// errors, the error codes and the units of the person's account and of a
// geoind session within it, for a Go program
// that calls the API over HTTP without linking the server, its store or its
// mechanisms.
//
// A client sends requests as JSON, decodes a 2xx answer into the type of
// the operation and any other status into an ErrorResponse, whose Error
// carries a Code to branch on:
//
//	body, _ := json.Marshal(api.LocateRequest{Lat: 39.9841, Lon: 116.3185, Time: time.Now()})
//	req, _ := http.NewRequest("POST", base+"/v1/people/alice/locate", bytes.NewReader(body))
//	req.Header.Set("Authorization", "Bearer "+token)
//	req.Header.Set("Content-Type", "application/json")
//	req.Header.Set("Idempotency-Key", key) // the same key when retrying this query
//	resp, err := http.DefaultClient.Do(req)
//	...
//	if resp.StatusCode != http.StatusOK {
//		var e api.ErrorResponse
//		json.NewDecoder(resp.Body).Decode(&e)
//		if e.Error.Code == api.CodeBudgetExhausted { ... } // details["kind"]: "geoind" (Retry-After: the next window) or "account" (for good)
//	}
//	var ans api.LocateResponse
//	json.NewDecoder(resp.Body).Decode(&ans)
//
// The operations, with each field's meaning and range, are in the OpenAPI
// document the server serves at /openapi.json (server.OpenAPI); the
// server's tests check that document against these types and against what
// the server sends. The guarantees behind the numbers (what a charge buys,
// how the ledger composes) are in package server's documentation and
// docs/serve.md.
//
// The package imports only the standard library and package geo, so a
// client built on it stays small.
package api
