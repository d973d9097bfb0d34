package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// LedgerResponse is a person's ledger: the budgets, what is spent and
// left, and every charge.
type LedgerResponse struct {
	ID string `json:"id"`
	// Unit, Budget, Spent and Remaining are the geo-indistinguishability
	// budget of the current window (epsilon per metre).
	Unit      string  `json:"unit"`
	Budget    float64 `json:"budget"`
	Spent     float64 `json:"spent"`
	Remaining float64 `json:"remaining"`
	// Window is the current window's index (0 when the budget has no
	// window), WindowStart and WindowEnd its bounds.
	Window      int64      `json:"window"`
	WindowStart *time.Time `json:"window_start,omitempty"`
	WindowEnd   *time.Time `json:"window_end,omitempty"`
	// TotalSpent is the geo-indistinguishability epsilon spent over every
	// window: the guarantee of the person's whole history (windows compose
	// by addition).
	TotalSpent float64    `json:"total_spent"`
	CIP        LedgerCIP  `json:"cip"`
	Config     personView `json:"config"`
	Charges    []Charge   `json:"charges"`
	// NextAfter is set when the charges were cut at limit: ask again with
	// ?after=NextAfter.
	NextAfter *int64 `json:"next_after,omitempty"`
}

// LedgerCIP is the person's CIP budget.
type LedgerCIP struct {
	Unit        string  `json:"unit"`
	Budget      float64 `json:"budget"`
	Spent       float64 `json:"spent"`
	Remaining   float64 `json:"remaining"`
	Lambda      float64 `json:"lambda"`
	RadiusM     float64 `json:"radius_m"`
	Composition string  `json:"composition"`
}

// Charge is one line of a ledger.
type Charge struct {
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Amount    float64   `json:"amount"`
	Window    int64     `json:"window"`
	RequestID string    `json:"request_id"`
}

// maxLedgerPage bounds the charges of one ledger response.
const maxLedgerPage = 10_000

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p, _, _, err := s.authPerson(r, id, true)
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

// ledger reads a person's ledger in one snapshot.
func (s *Server) ledger(ctx context.Context, p *personInfo, after, limit int64) (*LedgerResponse, error) {
	cfg := p.cfg
	var row personRow
	led := &LedgerResponse{ID: p.id, Unit: UnitGeoind, Config: s.view(p), Charges: []Charge{}}
	err := s.store.Snapshot(ctx, func(q Querier) error {
		err := q.QueryRow(`SELECT geo_budget, geo_spent, geo_total, geo_window, cip_budget, cip_spent, seq FROM people WHERE id = ?`, p.id).
			Scan(&row.geoBudget, &row.geoSpent, &row.geoTotal, &row.geoWindow, &row.cipBudget, &row.cipSpent, &row.seq)
		if err != nil {
			return err
		}
		rows, err := q.Query(`SELECT seq, created_at, kind, amount, win, request_id FROM charges WHERE person_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
			p.id, after, limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c Charge
			var at int64
			if err := rows.Scan(&c.Seq, &at, &c.Kind, &c.Amount, &c.Window, &c.RequestID); err != nil {
				return err
			}
			c.Time = time.Unix(0, at).UTC()
			led.Charges = append(led.Charges, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if int64(len(led.Charges)) > limit {
		led.Charges = led.Charges[:limit]
		n := led.Charges[limit-1].Seq
		led.NextAfter = &n
	}
	win := windowIndex(p.created, s.opt.Now(), cfg.window(), row.geoWindow)
	spent := row.geoSpent
	if win != row.geoWindow {
		spent = 0 // a new window has begun; nothing charged in it yet
	}
	led.Budget, led.Spent, led.Remaining = row.geoBudget, spent, math.Max(0, row.geoBudget-spent)
	led.Window, led.TotalSpent = win, row.geoTotal
	if w := cfg.window(); w > 0 {
		start := p.created.Add(time.Duration(win) * w).UTC()
		end := start.Add(w)
		led.WindowStart, led.WindowEnd = &start, &end
	}
	led.CIP = LedgerCIP{
		Unit: UnitCIP, Budget: row.cipBudget, Spent: row.cipSpent, Remaining: math.Max(0, row.cipBudget-row.cipSpent),
		Lambda: cfg.CIP.Lambda, RadiusM: cfg.CIP.Radius,
		Composition: "RDP composition at the single order lambda (accountant.RDPAccountant): the certified epsilons add",
	}
	return led, nil
}

// HealthResponse is the body of /healthz.
type HealthResponse struct {
	Status        string `json:"status"`
	Store         string `json:"store"`
	SchemaVersion int    `json:"schema_version"`
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var v int
	err := s.store.View(ctx, func(q Querier) error {
		return q.QueryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	})
	if err != nil {
		s.log.Error("health check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, HealthResponse{Status: "unavailable", Store: string(s.store.Dialect()), SchemaVersion: v})
		return
	}
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok", Store: string(s.store.Dialect()), SchemaVersion: v})
}
