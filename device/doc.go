// Package device runs tracepriv's mechanisms on the person's own device (a
// phone app through gomobile, a browser through the WebAssembly module of
// cmd/tracepriv-wasm), so that the true location never leaves it: geoind
// sessions (planar Laplace and the predictive mechanism with its budget
// managers) and the whole-trace CIP release of package sanitize, with its
// certificate. It is a thin wrapper, not a second implementation: every
// number comes from geoind and sanitize.
//
//	s, err := device.NewSession(`{"mechanism":"pm","manager":"fixed-rate","rate":0.001,
//		"params":{"epsilon":0.023},"origin":{"lat":39.9042,"lon":116.4074},"noise":{"grid":1}}`)
//	answer, err := s.Query(39.9087, 116.3975, time.Now().UnixMilli()) // JSON: report, state, randomness
//	out, err := device.Release(plt, "plt", `{"epsilon":1,"lambda":2,"radius_m":100}`)
//
// # Plain types
//
// The exported API uses only what gomobile can bind: numbers, strings, byte
// slices, errors and a pointer to the opaque Session. Structured values
// travel as JSON in the library's own shapes: the configuration and state are
// geoind.Config and geoind.State, a query's report is geoind.Report, a release's
// certificate is sanitize.Certificate. Every answer says where its randomness
// came from ("randomness": "crypto", or "seeded:N" with "private": false),
// exactly as the command line's outputs and the certificates do.
//
// # Randomness
//
// Noise comes from crypto/rand (noise.Secure): on Android and iOS the
// operating system's generator, in a browser crypto.getRandomValues. The
// Seeded variants exist for tests that compare the device with the library
// byte for byte; what they release protects nothing, and says so.
//
// # Budget
//
// A Session keeps its own budget (geoind's accounting), but a state kept on
// the device can be cleared or rolled back by whoever holds the device. The
// person's budget across sessions and releases is the service's ledger:
// the app charges there before it draws (docs/device.md). PlanRelease
// gives a release's certificate and its digest before anything is drawn
// (the time taken is kept beside the certificate), Plan.Charge the charge
// to ask for, and Plan.Draw draws once the service has answered with a
// charge id; NewChargedSession starts a session paid by one geoind charge.
// Each charge id pays for one draw (Claim; ErrCharged for a second).
package device
