// Package server is the tracepriv online service behind "tracepriv serve":
// people with per-person privacy budgets, online obfuscation of location
// fixes with the predictive mechanism of package geoind (IM or PM, the
// mechanism's state kept server-side), CIP trace sanitisation with package
// sanitize, and each person's ledger, over HTTP/JSON (versioned paths, an
// OpenAPI document at /openapi.json), with /healthz, Prometheus /metrics
// and the web page of package web at /.
//
// An embedding program opens the service over its store (SQLite in a
// directory, or PostgreSQL) and serves it until its context ends, or
// mounts its handler in a server of its own:
//
//	s, err := server.New(ctx, server.Options{
//		DataDir:    "tracepriv-data", // SQLite there; or DB: "postgres://..."
//		AdminToken: os.Getenv("TRACEPRIV_ADMIN_TOKEN"),
//	})
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	ln, err := net.Listen("tcp", "127.0.0.1:8080")
//	if err != nil {
//		return err
//	}
//	return s.Serve(ctx, ln, "", "") // TLS with a certificate and key file; or use s.Handler()
//
// Server.Check reports on the store. A Go program that calls the API over
// HTTP imports package server/api instead: the JSON bodies of requests,
// answers and errors (api.LocateResponse, api.LedgerResponse,
// api.ErrorResponse with its api.Code), without the server.
//
// # One account per person
//
// A person has one account, package budget's account kept in the store:
// one budget (account.epsilon_budget) in one currency, Rényi epsilon at
// the person's cip.lambda within cip.radius_m. Every release of the
// person is charged to it with budget's conversion (budget.Account.Cost)
// and admitted by budget's rule (budget.Fits), before anything is drawn:
//
//   - a geoind session: each window's session of epsilon_budget per metre
//     is charged budget.GeoIndCharge by its first answer. Within the
//     session each answer costs its step in the predictive mechanism's
//     accounting (Lemma 2: ε_θ, plus ε_N when fresh noise was drawn), and
//     the manager never lets a session exceed epsilon_budget, so each
//     session is epsilon_budget·d_∞-private (Theorem 3). A window is a
//     rate within the account: a new window is a new session, charged to
//     the account, never a fresh budget.
//   - a CIP release: its certificate's epsilon_max.
//   - a release the person's device draws (POST /v1/people/{id}/charges,
//     issue 33): its mechanism's conversion, charged before the device
//     draws, the service seeing no location.
//
// The charges add up; no window renews the account.
//
// # The ledger is the truth
//
// Every answer is decided, charged and stored in one transaction of the
// ledger (its SQL store, package server/internal/store), serialised per person, and sent
// only after that transaction committed durably; anything read from the
// ledger (a replayed answer, the ledger itself) is sent only once the
// charges it shows are durable. So: a durable charge for every answer, no
// budget exceeded by concurrent requests, a retried Idempotency-Key
// answered from the ledger (never a fresh sample nor a second charge),
// nothing stored for a request that fails, and error texts that say only
// what is known. Statuses come from typed errors mapped in one table
// (errors.go). Nothing deletes a person or resets a budget; a person's
// token can be rotated. The proof sketch, the threat model and measured
// numbers are in docs/serve.md.
package server
