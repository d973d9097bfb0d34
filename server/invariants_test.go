package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/geoind"
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
// to geo_total; the CIP charges add up exactly to cip_spent, within the
// CIP budget; and the database passes its integrity check.
func checkInvariants(t testing.TB, st *Store) ledgerReport {
	t.Helper()
	ctx := context.Background()
	var rep ledgerReport
	type person struct {
		id                            string
		cfg                           string
		geoBudget, geoSpent, geoTotal float64
		cipBudget, cipSpent           float64
		win, seq                      int64
	}
	var people []person
	err := st.Snapshot(ctx, func(q Querier) error {
		rows, err := q.Query(`SELECT id, config, geo_budget, geo_spent, geo_total, geo_window, cip_budget, cip_spent, seq FROM people ORDER BY id`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p person
			if err := rows.Scan(&p.id, &p.cfg, &p.geoBudget, &p.geoSpent, &p.geoTotal, &p.win, &p.cipBudget, &p.cipSpent, &p.seq); err != nil {
				return err
			}
			people = append(people, p)
		}
		rows.Close()
		for _, p := range people {
			rows, err := q.Query(`SELECT seq, kind, win, amount, detail FROM charges WHERE person_id = ? ORDER BY seq`, p.id)
			if err != nil {
				return err
			}
			var (
				n                   int64
				geoWin, geoAll, cip float64
				run                 geoind.Run
			)
			for rows.Next() {
				var (
					seq, win int64
					kind     string
					amt      float64
					detail   string
				)
				if err := rows.Scan(&seq, &kind, &win, &amt, &detail); err != nil {
					rows.Close()
					return err
				}
				n++
				if seq != n {
					return fmt.Errorf("person %s: charge %d numbered %d", p.id, n, seq)
				}
				switch kind {
				case "geoind":
					geoAll += amt
					if win == p.win {
						geoWin += amt
						var s geoind.Step
						if err := json.Unmarshal([]byte(detail), &s); err != nil {
							return err
						}
						if s.Cost != amt {
							return fmt.Errorf("person %s charge %d: amount %v, step cost %v", p.id, seq, amt, s.Cost)
						}
						run = append(run, s)
					} else if win > p.win {
						return fmt.Errorf("person %s: charge in window %d after the current %d", p.id, win, p.win)
					}
				case "cip":
					cip += amt
				}
			}
			rows.Close()
			rep.Charges += int(n)
			if n != p.seq {
				return fmt.Errorf("person %s: %d charges, seq %d", p.id, n, p.seq)
			}
			if geoWin != p.geoSpent {
				return fmt.Errorf("person %s: window charges sum to %v, geo_spent %v", p.id, geoWin, p.geoSpent)
			}
			if p.geoSpent > p.geoBudget {
				return fmt.Errorf("OVERSPEND: person %s: geo_spent %v > budget %v", p.id, p.geoSpent, p.geoBudget)
			}
			if math.Abs(geoAll-p.geoTotal) > 1e-12*math.Max(1, geoAll) {
				return fmt.Errorf("person %s: geoind charges sum to %v, geo_total %v", p.id, geoAll, p.geoTotal)
			}
			if cip != p.cipSpent || p.cipSpent > p.cipBudget {
				return fmt.Errorf("person %s: cip charges %v, cip_spent %v, budget %v", p.id, cip, p.cipSpent, p.cipBudget)
			}
			cfg, err := decodePersonConfig(p.cfg)
			if err != nil {
				return err
			}
			mech, err := cfg.Geoind.NewMechanism()
			if err != nil {
				return err
			}
			acc, err := geoind.Accounting(mech, run)
			if err != nil {
				return fmt.Errorf("person %s: stored run does not replay: %w", p.id, err)
			}
			if acc > p.geoBudget || math.Abs(acc-p.geoSpent) > 1e-12*p.geoBudget {
				return fmt.Errorf("OVERSPEND: person %s: Lemma 2 accounting %v, ledger %v, budget %v", p.id, acc, p.geoSpent, p.geoBudget)
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
