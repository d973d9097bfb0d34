package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

// maxLedgerPage bounds the charges of one ledger response.
const maxLedgerPage = 10_000

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p, _, err := s.authPerson(r, id, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	after, limit := int64(0), int64(maxLedgerPage)
	for k, v := range r.URL.Query() {
		n, err := strconv.ParseInt(v[0], 10, 64)
		switch {
		case k != "after" && k != "limit":
			s.writeError(w, r, fieldErr(k, "unknown query parameter %q (after, limit)", truncate(k, 32)))
			return
		case err != nil || n < 0 || (k == "limit" && (n < 1 || n > maxLedgerPage)):
			s.writeError(w, r, fieldErr(k, "?%s=%s: want a non-negative integer (limit 1-%d)", k, truncate(v[0], 32), maxLedgerPage))
			return
		case k == "after":
			after = n
		default:
			limit = n
		}
	}
	led, err := s.ledger(r.Context(), p, after, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, led)
}

// ledger reads a person's ledger in one snapshot, released once every
// charge it shows is durable.
func (s *Server) ledger(ctx context.Context, p *personInfo, after, limit int64) (*api.LedgerResponse, error) {
	cfg := p.cfg
	var (
		row     *store.PersonRow
		charges []store.ChargeRow
		details [][]byte
		byMech  map[budget.Mechanism]float64
	)
	now := s.opt.Now()
	err := s.store.Read(ctx, p.id, func(v *store.View) error {
		var err error
		if row, err = v.Person(p.id); err != nil {
			return err
		}
		if charges, err = v.Charges(p.id, after, limit+1, false); err != nil {
			return err
		}
		if byMech, err = v.SpentByMechanism(p.id); err != nil {
			return err
		}
		if win := windowIndex(p.created, now, cfg.window(), row.GeoWindow); win == row.GeoWindow {
			details, err = v.GeoindDetails(p.id, win)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	led := &api.LedgerResponse{ID: p.id, Unit: api.UnitGeoind, Config: s.view(p), Charges: make([]api.Charge, 0, len(charges))}
	for _, c := range charges {
		led.Charges = append(led.Charges, api.Charge{ChargeID: chargeID(c.Seq), Seq: c.Seq, Time: c.Time, Kind: string(c.Mechanism), Mechanism: string(c.Mechanism),
			Origin: c.Origin, Settlement: settlementView(c.Settlement), Amount: c.Amount, Epsilon: c.Epsilon, Window: c.Window, CertificateSHA256: c.Certificate, RequestID: c.RequestID})
	}
	if int64(len(led.Charges)) > limit {
		led.Charges = led.Charges[:limit]
		n := led.Charges[limit-1].Seq
		led.NextAfter = &n
	}
	win := windowIndex(p.created, now, cfg.window(), row.GeoWindow)
	spent := row.GeoSpent
	if win != row.GeoWindow {
		spent = 0 // a new window has begun; nothing charged in it yet
	}
	led.Budget, led.Spent, led.Remaining = row.GeoBudget, spent, math.Max(0, row.GeoBudget-spent)
	led.Window, led.TotalSpent = win, row.GeoTotal
	if led.Exhausted, err = s.geoindExhausted(cfg, details, now); err != nil {
		return nil, fmt.Errorf("person %s: %w", p.id, err)
	}
	session := sessionCharge(cfg)
	if win != row.GeoSession && admit(p, row, api.MechanismGeoind, session) != nil {
		led.Exhausted = true // the next query opens a session the account cannot pay
	}
	if w := cfg.window(); w > 0 {
		start := p.created.Add(time.Duration(win) * w).UTC()
		end := start.Add(w)
		led.WindowStart, led.WindowEnd = &start, &end
	}
	remaining := math.Max(0, row.Budget-row.Spent)
	led.CIP = api.LedgerCIP{
		Unit: api.UnitCIP, Budget: row.Budget, Spent: byMech[budget.CIP], Remaining: remaining,
		Exhausted: admit(p, row, api.MechanismCIP, cfg.CIP.Epsilon) != nil, Lambda: cfg.CIP.Lambda, RadiusM: cfg.CIP.Radius,
		Composition: "charged to the person's account (see account): the certified epsilons add, with every other release's charge",
	}
	led.Account = api.LedgerAccount{
		Unit: api.UnitAccount, Budget: row.Budget, Spent: row.Spent, Remaining: remaining, Lambda: cfg.CIP.Lambda, RadiusM: cfg.CIP.Radius,
		SessionCharge: session, Composition: composition,
	}
	led.Config.Account.EpsilonBudget, led.Config.CIP.EpsilonBudget = row.Budget, row.Budget
	return led, nil
}

// geoindExhausted reports whether the person's mechanism would refuse a
// query now, after the window's run (its stored steps): the manager's own
// decision, so a remainder too small for the next step counts as spent.
func (s *Server) geoindExhausted(cfg *personConfig, details [][]byte, now time.Time) (bool, error) {
	run, err := loadRun(details, "")
	if err != nil {
		return false, err
	}
	mech, err := cfg.Geoind.NewMechanism()
	if err != nil {
		return false, err
	}
	t := now
	if n := len(run); n > 0 && t.Before(run[n-1].Time) {
		t = run[n-1].Time
	}
	_, _, err = mech.Decide(run, t)
	if geoind.IsExhausted(err) {
		return true, nil
	}
	return false, err
}

// handleHealthz answers 200 while the store can release answers, 503
// otherwise (the database does not answer, or, on SQLite, a commit failed
// to become durable and the service must be restarted).
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var v int
	err := s.store.Health(ctx)
	if err == nil {
		err = s.store.Scan(ctx, func(q *store.View) error {
			var err error
			v, err = q.SchemaVersion()
			return err
		})
	}
	if err != nil {
		s.log.Error("health check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, api.HealthResponse{Status: "unavailable", Store: string(s.store.Dialect()), SchemaVersion: v})
		return
	}
	writeJSON(w, http.StatusOK, api.HealthResponse{Status: "ok", Store: string(s.store.Dialect()), SchemaVersion: v})
}

// settlementView is a charge's settlement in a ledger line: absent once
// settled.
func settlementView(s string) string {
	if s == store.Settled {
		return ""
	}
	return s
}
