package budget_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tracepriv/tracepriv/budget"
)

// The admission policy of one release: check, charge pending before
// drawing, settle to the certified epsilon once the files have landed. A
// geoind session of the same person is charged in the same account.
func ExampleAdmission() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	f, err := budget.Open(filepath.Join(dir, "ledger.json"), time.Second)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	adm := budget.NewAdmission(f, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: 2, Release: "run 1"})
	target := map[string]float64{"alice": 1}
	if err := adm.Check(target); err != nil {
		panic(err)
	}
	if err := adm.Charge("", target); err != nil { // immediately before drawing
		panic(err)
	}
	// ... draw and write the release; its certificate says 0.93 ...
	if err := adm.Settle("", map[string]float64{"alice": 0.93}); err != nil {
		panic(err)
	}
	// A geoind session of 0.005 per metre on a 1 m grid, in the same currency.
	err = f.Charge(budget.Request{Mechanism: budget.GeoInd, GridM: 1, Epsilon: map[string]float64{"alice": 0.005}})
	fmt.Println(err)
	a := f.Ledger().Account("alice")
	fmt.Printf("spent %.4f of %g (cip %.2f, geoind %.4f)\n", a.Spent, *a.Budget, f.Ledger().Spent("alice", budget.CIP), f.Ledger().Spent("alice", budget.GeoInd))
	// A second session would take alice over her budget.
	err = f.Charge(budget.Request{Mechanism: budget.GeoInd, GridM: 1, Epsilon: map[string]float64{"alice": 0.01}})
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// spent 1.1871 of 2 (cip 0.93, geoind 0.2571)
	// true
}

// A store other than the ledger file (the service's database) keeps an
// account's order, radius, budget and spent itself, and charges and admits
// with the account's conversion and the one admission rule.
func ExampleAccount_Cost() {
	b := 4.0
	a := budget.Account{UID: "alice", Lambda: 2, RadiusM: 100, Budget: &b, Spent: 2.5}
	session := a.Cost(budget.GeoInd, 0.01, 1) // a geoind session of 0.01 per metre on a 1 m grid
	fmt.Printf("session %.4f, fits %v\n", session, budget.Fits(a.Spent, session, *a.Budget))
	fmt.Println("cip within 50 m covered:", a.Covers(2, 50))
	// Output:
	// session 1.0141, fits true
	// cip within 50 m covered: false
}
