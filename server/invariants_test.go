package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

// ledgerReport is what checkInvariants found.
type ledgerReport struct {
	People, Charges int
	Integrity       string
}

// checkInvariants proves, from the store alone, that the ledger is
// consistent: for every person the charges are numbered 1..seq without
// gaps; the geo-indistinguishability charges of the current window add up
// exactly to geo_spent, which is within the budget, and the predictive
// mechanism's own accounting of the stored run (Lemma 2, replaying the
// manager) agrees and is within the budget too; all geoind charges add up
// to geo_total; every charge's account epsilon (the session charge on the
// first service answer of each window, which opens geo_session, and 0 on
// the window's other answers; a CIP release's certified epsilon; a device
// charge's converted epsilon) adds up to the account's spent, within its
// budget (and the schema-1 cip_spent is no longer written); and the
// database passes its integrity check.
func checkInvariants(t testing.TB, st *store.Store) ledgerReport {
	t.Helper()
	ctx := context.Background()
	var rep ledgerReport
	var people []*store.PersonRow
	err := st.Scan(ctx, func(v *store.View) error {
		var err error
		if people, err = v.People(); err != nil {
			return err
		}
		for _, p := range people {
			charges, err := v.Charges(p.ID, 0, 1<<40, false)
			if err != nil {
				return err
			}
			var (
				n                    int64
				geoWin, geoAll, acct float64
				run                  geoind.Run
				lastSession          = int64(-1)
			)
			cfg, err := decodePersonConfig(p.Config)
			if err != nil {
				return err
			}
			session := sessionCharge(cfg)
			for _, c := range charges {
				n++
				if c.Seq != n {
					return fmt.Errorf("person %s: charge %d numbered %d", p.ID, n, c.Seq)
				}
				acct += c.Epsilon
				switch {
				case c.Origin == store.OriginCLI:
					// A tracepriv command's charge: pending or settled at a
					// positive epsilon, undone at 0.
					if (c.Settlement == store.Undone) != (c.Epsilon == 0) || c.Epsilon < 0 {
						return fmt.Errorf("person %s charge %d: a %s command charge of %v", p.ID, c.Seq, c.Settlement, c.Epsilon)
					}
				case c.Settlement != store.Settled:
					return fmt.Errorf("person %s charge %d: a %s charge of origin %s", p.ID, c.Seq, c.Settlement, c.Origin)
				case c.Origin == "device":
					if c.Epsilon <= 0 {
						return fmt.Errorf("person %s charge %d: a device charge of %v", p.ID, c.Seq, c.Epsilon)
					}
				case c.Mechanism == budget.GeoInd:
					// Each window's session is charged once, on its first
					// answer; the window's other answers cost the account 0.
					want := 0.0
					if c.Window != lastSession {
						want, lastSession = session, c.Window
					}
					if c.Epsilon != want {
						return fmt.Errorf("person %s charge %d: account epsilon %v, want %v", p.ID, c.Seq, c.Epsilon, want)
					}
					geoAll += c.Amount
					if c.Window == p.GeoWindow {
						geoWin += c.Amount
						var s geoind.Step
						if err := json.Unmarshal(c.Detail, &s); err != nil {
							return err
						}
						if s.Cost != c.Amount {
							return fmt.Errorf("person %s charge %d: amount %v, step cost %v", p.ID, c.Seq, c.Amount, s.Cost)
						}
						run = append(run, s)
					} else if c.Window > p.GeoWindow {
						return fmt.Errorf("person %s: charge in window %d after the current %d", p.ID, c.Window, p.GeoWindow)
					}
				case c.Mechanism == budget.CIP:
					if c.Epsilon != c.Amount {
						return fmt.Errorf("person %s charge %d: cip release of %v charged %v", p.ID, c.Seq, c.Amount, c.Epsilon)
					}
				}
			}
			rep.Charges += int(n)
			if n != p.Seq {
				return fmt.Errorf("person %s: %d charges, seq %d", p.ID, n, p.Seq)
			}
			if geoWin != p.GeoSpent {
				return fmt.Errorf("person %s: window charges sum to %v, geo_spent %v", p.ID, geoWin, p.GeoSpent)
			}
			if p.GeoSpent > p.GeoBudget {
				return fmt.Errorf("OVERSPEND: person %s: geo_spent %v > budget %v", p.ID, p.GeoSpent, p.GeoBudget)
			}
			if math.Abs(geoAll-p.GeoTotal) > 1e-12*math.Max(1, geoAll) {
				return fmt.Errorf("person %s: geoind charges sum to %v, geo_total %v", p.ID, geoAll, p.GeoTotal)
			}
			if math.Abs(acct-p.Spent) > 1e-12*math.Max(1, acct) || lastSession != p.GeoSession {
				return fmt.Errorf("person %s: account charges sum to %v, spent %v; last session %d, geo_session %d", p.ID, acct, p.Spent, lastSession, p.GeoSession)
			}
			if p.Spent > p.Budget*(1+1e-9) {
				return fmt.Errorf("OVERSPEND: person %s: account spent %v > budget %v", p.ID, p.Spent, p.Budget)
			}
			mech, err := cfg.Geoind.NewMechanism()
			if err != nil {
				return err
			}
			acc, err := geoind.Accounting(mech, run)
			if err != nil {
				return fmt.Errorf("person %s: stored run does not replay: %w", p.ID, err)
			}
			if acc > p.GeoBudget || math.Abs(acc-p.GeoSpent) > 1e-12*p.GeoBudget {
				return fmt.Errorf("OVERSPEND: person %s: Lemma 2 accounting %v, ledger %v, budget %v", p.ID, acc, p.GeoSpent, p.GeoBudget)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ledger invariants: %v", err)
	}
	rep.People = len(people)
	if rep.Integrity, err = st.IntegrityCheck(ctx); err != nil {
		t.Fatalf("integrity: %v", err)
	}
	return rep
}
