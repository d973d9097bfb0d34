package server

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

// A person's account is package budget's account kept in the service's
// store: one budget in one currency (Rényi epsilon at the person's
// cip.lambda within cip.radius_m), charged by every release of the person
// with budget's conversion (Account.Cost) and admitted by budget's rule
// (budget.Fits). The store's update checks the budget again, with the same
// slack.

// slack is the admission rule's relative tolerance as the store's own
// check takes it: the new spent must be at most budget·slack.
const slack = 1 + budget.Tolerance

// composition is what the ledger says of how charges compose.
const composition = "one account per person in one currency, Rényi epsilon at the person's order lambda within radius_m " +
	"(package budget, as the tracepriv ledger file): every release's charge adds up, geoind sessions and CIP releases, " +
	"the service's and the device's; a release is admitted only while the sum stays within the budget, which no window renews"

// account is the person's account as package budget keeps one: its
// currency from the configuration, its budget and spent from the row.
func account(p *personInfo, row *store.PersonRow) *budget.Account {
	return accountOf(row, p.cfg)
}

// sessionCharge is what one window's geoind session costs the account
// of a person configured by c: its budget per window converted at the
// person's order and radius on the session's grid. It depends only on the
// configuration, never on what a session spent.
func sessionCharge(c *personConfig) float64 {
	a := budget.Account{Lambda: c.CIP.Lambda, RadiusM: c.CIP.Radius}
	return a.Cost(budget.GeoInd, c.Geoind.Params.Epsilon, c.Geoind.Noise.Grid)
}

// admit refuses a charge of e for a release of mechanism m that the
// person's account cannot pay, before anything is drawn.
func admit(p *personInfo, row *store.PersonRow, m string, e float64) error {
	if budget.Fits(row.Spent, e, row.Budget) {
		return nil
	}
	return &store.ExhaustedError{Kind: store.BudgetAccount, Mechanism: budget.Mechanism(m), Budget: row.Budget, Spent: row.Spent, Needed: e,
		Lambda: p.cfg.CIP.Lambda, RadiusM: p.cfg.CIP.Radius}
}

// accountTerms opens the account of a person of schema 1 (migration 2):
// like budget.MigrateV1, the smaller of the two old budgets, each in the
// currency (the geoind budget of one window as the session charge), so
// that neither old budget is exceeded by a total; a CIP budget of 0 (no
// releases) leaves the geoind one. The configuration is rewritten with
// the account's budget.
func (s *Server) accountTerms(config string, geoBudget, cipBudget float64) (store.AccountTerms, error) {
	c, err := decodePersonConfig(config)
	if err != nil {
		return store.AccountTerms{}, err
	}
	t := store.AccountTerms{SessionCharge: sessionCharge(c)}
	t.Budget = t.SessionCharge
	if cipBudget > 0 {
		t.Budget = math.Min(t.Budget, cipBudget)
	}
	c.CIP.Budget = t.Budget
	b, err := json.Marshal(c)
	if err != nil {
		return store.AccountTerms{}, err
	}
	t.Config = string(b)
	return t, nil
}

// accountView is the person's account in an answer.
func accountView(p *personInfo, budget float64) api.PersonAccount {
	return api.PersonAccount{Unit: api.UnitAccount, EpsilonBudget: budget, Lambda: p.cfg.CIP.Lambda, RadiusM: p.cfg.CIP.Radius,
		SessionCharge: sessionCharge(p.cfg)}
}

// chargeReq is a parsed charge request, with the defaults filled in.
type chargeReq struct {
	mech                       string
	eps, radius, lambda, gridM float64
	cert                       string
}

// canonical is what the request MAC covers: the parsed request, so that
// another spelling of the same body is the same request.
func (c *chargeReq) canonical() []byte {
	b := append([]byte(c.mech), 0)
	for _, v := range []float64{c.eps, c.radius, c.lambda, c.gridM} {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	}
	return append(b, c.cert...)
}

// parseCharge validates a charge request against the person's account.
func parseCharge(p *personInfo, req *api.ChargeRequest) (*chargeReq, error) {
	cfg := p.cfg
	c := &chargeReq{mech: req.Mechanism, lambda: cfg.CIP.Lambda}
	switch {
	case req.Mechanism != api.MechanismGeoind && req.Mechanism != api.MechanismCIP:
		return nil, fieldErr("mechanism", "mechanism %q: want \"geoind\" or \"cip\"", truncate(req.Mechanism, 32))
	case req.Epsilon == nil:
		return nil, fieldErr("epsilon", "epsilon is required: a geoind session's epsilon per metre, or a cip release's certified epsilon")
	case !(*req.Epsilon > 0) || !finite(*req.Epsilon):
		return nil, fieldErr("epsilon", "epsilon = %v: want finite and > 0", *req.Epsilon)
	case req.RadiusM == nil:
		return nil, fieldErr("radius_m", "radius_m is required: the release's radius in metres (this person's account is kept within %g m)", cfg.CIP.Radius)
	case !(*req.RadiusM > 0) || !finite(*req.RadiusM):
		return nil, fieldErr("radius_m", "radius_m = %v: want finite and > 0 metres", *req.RadiusM)
	}
	c.eps, c.radius = *req.Epsilon, *req.RadiusM
	if h := req.CertificateSHA256; h != "" {
		if b, err := hex.DecodeString(h); err != nil || len(b) != 32 || h != hex.EncodeToString(b) {
			return nil, fieldErr("certificate_sha256", "certificate_sha256 %q: want the certificate's SHA-256 as 64 lower-case hex digits", truncate(h, 80))
		}
		c.cert = h
	}
	acct := budget.Account{Lambda: cfg.CIP.Lambda, RadiusM: cfg.CIP.Radius}
	if c.mech == api.MechanismGeoind {
		c.gridM = cfg.Geoind.Noise.Grid
		switch {
		case req.Lambda != nil:
			return nil, fieldErr("lambda", "lambda applies to cip charges: a geoind session is converted at the account's order %g", cfg.CIP.Lambda)
		case req.GridM != nil && (!(*req.GridM > 0) || !finite(*req.GridM)):
			return nil, fieldErr("grid_m", "grid_m = %v: want the session's output grid, finite and > 0 metres", *req.GridM)
		case c.radius != cfg.CIP.Radius:
			return nil, domainErr(errMechanism, "radius_m", "radius_m %g: this person's account is kept within %g m, at which a geoind session is converted; give radius_m %g",
				c.radius, cfg.CIP.Radius, cfg.CIP.Radius)
		}
		if req.GridM != nil {
			c.gridM = *req.GridM
		}
		return c, nil
	}
	switch {
	case req.GridM != nil:
		return nil, fieldErr("grid_m", "grid_m applies to geoind charges")
	case c.cert == "":
		return nil, fieldErr("certificate_sha256", "certificate_sha256 is required for a cip charge: the SHA-256 of the certificate the release will carry")
	case req.Lambda != nil && (!(*req.Lambda > 1) || !finite(*req.Lambda)):
		return nil, fieldErr("lambda", "lambda = %v: the Rényi order must be finite and > 1", *req.Lambda)
	}
	if req.Lambda != nil {
		c.lambda = *req.Lambda
	}
	if !acct.Covers(c.lambda, c.radius) {
		return nil, domainErr(errMechanism, "radius_m", "a cip release certified at order %g within %g m is not covered by this person's account, kept at order %g within %g m: certify the release at an order and a radius at least as large",
			c.lambda, c.radius, cfg.CIP.Lambda, cfg.CIP.Radius)
	}
	return c, nil
}

// handleCharge charges a release the person's device is about to draw
// (issue 33: the service charges without seeing the location). The
// charge and its answer commit in one transaction before the answer is
// sent; a retry with the same Idempotency-Key is answered from the
// ledger, never charged again.
func (s *Server) handleCharge(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var req api.ChargeRequest
	p, tok, key, ok := s.keyedRequest(w, r, id, &req)
	if !ok {
		return
	}
	c, err := parseCharge(p, &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mac := requestMAC(tok, "charge", c.canonical())
	out, replayed, err := s.keyedUpdate(r.Context(), id, key, tok, mac, func(tx *store.Tx, row *store.PersonRow) (*store.Answer, error) {
		acct := account(p, row)
		m := budget.CIP
		if c.mech == api.MechanismGeoind {
			m = budget.GeoInd
		}
		e := acct.Cost(m, c.eps, c.gridM)
		if err := admit(p, row, c.mech, e); err != nil {
			return nil, err
		}
		seq, now := row.Seq+1, s.opt.Now().UTC()
		spent := row.Spent + e
		resp := api.ChargeResponse{
			ChargeID: chargeID(seq), Mechanism: c.mech, Epsilon: c.eps, EpsilonCharged: e, Spent: spent,
			Remaining: math.Max(0, row.Budget-spent), Budget: row.Budget, Unit: api.UnitAccount,
			Lambda: acct.Lambda, RadiusM: acct.RadiusM, Seq: seq, Time: now, RequestID: requestID(r),
		}
		body, err := json.Marshal(resp)
		if err != nil {
			return nil, err
		}
		detail, err := json.Marshal(map[string]any{"lambda": c.lambda, "radius_m": c.radius, "grid_m": c.gridM})
		if err != nil {
			return nil, err
		}
		ans := store.Answer{MAC: mac, Status: http.StatusCreated, ContentType: "application/json", Body: append(body, '\n')}
		ch := &store.ChargeRow{Person: id, Seq: seq, Time: now, Mechanism: budget.Mechanism(c.mech), Amount: c.eps, Epsilon: e, Certificate: c.cert,
			RequestID: requestID(r), Key: key, Detail: detail, Answer: ans}
		if err := tx.ChargeDevice(row, ch, slack); err != nil {
			return nil, err
		}
		tx.OnCommit(func() {
			s.metrics.charged.WithLabelValues(c.mech).Add(c.eps) // the kind's own unit, as the service's answers
			s.metrics.charges.WithLabelValues(c.mech).Inc()
		})
		return &ans, nil
	})
	var body []byte
	if err == nil {
		body = out.Body
		if s.opt.afterCharge != nil {
			s.opt.afterCharge()
		}
	}
	s.writeCharged(w, r, c.mech, err, replayed, out, body)
}

// chargeID names charge seq of a person in answers and the ledger.
func chargeID(seq int64) string { return "c" + strconv.FormatInt(seq, 10) }
