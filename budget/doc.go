// Package budget keeps each person's privacy budget across releases and
// mechanisms in a durable ledger file: one account per person (uid), in
// one currency, so that releasing the same person again — another
// sanitize run, a geoind session at a new state path — is charged against
// what was already spent instead of starting afresh.
//
// Every release follows one admission policy, Admission: check before
// anything is drawn, charge a pending upper bound immediately before
// drawing, settle it to the certified epsilon when the release has landed,
// undo it when nothing landed. The policy runs on a Store: a ledger file
// (File), or the database of the tracepriv service (server.LedgerDB), so
// that a person released both by the service and by the commands keeps
// one account; both admit with CheckRequest and settle with Settled.
// OpenStore is the one rule by which a command (tracepriv's, the
// pipeline's) turns its --ledger value into a Store:
//
//	f, err := budget.Open("ledger.json", 10*time.Second) // waits up to 10 s for the lock
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	adm := budget.NewAdmission(f, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: 3, Release: "run 1"})
//	target := map[string]float64{"alice": 1, "bob": 1} // the most each can be certified
//	if err := adm.Check(target); err != nil {
//		return fmt.Errorf("nothing released: %w", err) // a *RefusedError names each person over budget
//	}
//	if err := adm.Charge("", target); err != nil { // pending, durable
//		return err
//	}
//	cert, err := release() // draw and write
//	if err != nil {
//		adm.Undo("") // nothing landed
//		return err
//	}
//	return adm.Settle("", cert) // the certified epsilons
//
// # Currency and composition
//
// An account has a Rényi order λ and a radius r, fixed when it is opened;
// its budget, its spent and every charge are Rényi divergences of order λ
// between hypotheses on the person's secret locations within r metres (the
// CIP loss). A CIP charge is the certificate's epsilon_max at an order and
// radius at least the account's. A geoind session of ε per metre on a grid
// of u metres is charged GeoIndCharge: min(e, λe²/2) with e = ε(r + √2u),
// since it is pure e-DP between traces within r (Bun and Steinke 2016);
// that bounds its CIP loss for basic secrets (one location) under priors
// with one stationary time kernel, not for places or the route. The charges
// of one person add up, and a release is admitted only while the sum stays
// within the person's budget. docs/ledger.md derives the currency and says
// what the sum does and does not cover.
//
// Sums are compared with the budget with a relative tolerance of 1e-9
// (Tolerance), so that the rounding of decimal inputs (three charges of
// 0.1 within a budget of 0.3) does not refuse a release.
//
// # Budgets
//
// A budget is set for a person by the first request that gives one, and
// from then on enforced in every request, with or without a budget. A
// request with a smaller budget applies it to that request; a larger one
// is refused unless Request.RaiseBudget is set, and the raise is recorded.
//
// # Crash safety and concurrency
//
// Open takes an exclusive lock on FILE.lock (flock on Unix), held until
// Close, so concurrent processes serialise and two cannot both spend the
// last of a budget. Every change writes the whole ledger atomically and
// durably (temporary file, fsync, rename, directory fsync) before it
// returns. A crash between a charge and its settlement leaves the pending
// upper bound charged (over-counting, never under-counting), which the
// next run of the same release settles or undoes (Admission.Pending).
//
// A ledger that does not parse, or whose records are inconsistent, is
// refused with an error naming the file. A missing ledger is a new, empty
// one: deleting the file forgets what was spent, so keep it with your
// backups. DefaultPath is the ledger used when none is named. A version-1
// ledger (one account per person and mechanism) is migrated on open
// (MigrateV1, Migrate). See docs/ledger.md.
package budget
