// Package budget keeps each person's privacy budget across releases in a
// durable ledger file, so that releasing the same person again — another
// sanitize run, another geoind session at a new state path — is charged
// against what was already spent instead of starting afresh.
//
// A release charges each person before it writes anything:
//
//	f, err := budget.Open("ledger.json", 10*time.Second) // waits up to 10 s for the lock
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	err = f.Charge(budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: 3,
//		Epsilon: map[string]float64{"alice": 1.2, "bob": 0.8}})
//	var refused *budget.RefusedError
//	if errors.As(err, &refused) {
//		return fmt.Errorf("nothing released: %w", err) // names each person over budget
//	}
//	if err != nil {
//		return err
//	}
//	// Charged and durable: now write the release.
//
// # Composition rule
//
// Basic sequential composition: the epsilons charged to one person under
// one mechanism kind add up, and a release is admitted only while the sum
// stays within the person's budget B. For CIP (package sanitize) a charge
// is the certificate's per-person Rényi epsilon_max at order lambda within
// radius r: releases of one person at the same order add, the rule the
// sanitize certificate states ("releasing the same person again
// composes: the epsilons add"; docs/robust-cip.md). The exact joint loss
// of two releases is their stacked certificate (docs/cip-math.md, section
// 5); docs/ledger.md says what the sum does and does not cover. A person's CIP account is fixed at the
// order and radius of its first charge; a later release at an order at
// least as high and a radius at least as large is covered (Rényi
// divergence does not decrease with the order, and a guarantee within a
// larger radius holds within a smaller one) and is summed at the account's
// order and radius; a lower order or a smaller radius is refused. For
// geo-indistinguishability (package geoind) a charge is the session's
// budget ε per metre, and sessions compose by addition (the metric
// privacy of both releases is (ε₁+ε₂)·d). The two units differ, so each
// person has one account, hence one budget, per mechanism kind.
//
// Sums are compared with the budget with a relative tolerance of 1e-9
// (Tolerance), so that the rounding of decimal inputs (three charges of
// 0.1 within a budget of 0.3) does not refuse a release.
//
// # Budgets
//
// The budget B is given with every run. The ledger records the budget an
// account was opened with; a run with a smaller B applies the smaller one
// to that run; a run with a larger B is refused unless Request.RaiseBudget
// is set, and the raise is recorded in the account.
//
// # Crash safety and concurrency
//
// Open takes an exclusive lock on FILE.lock (flock on Unix), held until
// Close, so concurrent processes serialise: check, charge and release
// happen under one lock, and two processes cannot both spend the last of
// a budget. Charge writes the whole ledger atomically and durably
// (temporary file, fsync, rename, directory fsync) before it returns: a
// caller writes its release only after Charge succeeded, so a crash can
// leave a charge without its release (over-counting, never
// under-counting). If writing the release then fails, the charge stays.
//
// A ledger that does not parse, or whose records are inconsistent, is
// refused with an error naming the file. A missing ledger is a new, empty
// one: deleting the file forgets what was spent, so keep it with your
// backups. See docs/ledger.md.
package budget
