package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

// configVersion is the version of the person configuration the store
// keeps (people.config).
const configVersion = 1

// Defaults of a person's configuration (docs/serve.md).
const (
	// defaultRateFraction: the fixed-rate manager's rate is epsilon_budget
	// times this, so that about 30 queries spend a window's budget (the
	// CLI's default).
	defaultRateFraction = 1.0 / 30
	defaultAccuracyM    = 3000.0 // fixed-utility accuracy α(0.9) in metres
	defaultPR0          = 0.5
	// defaultCIPBudget is the person's account budget (their one budget,
	// Rényi at their order) when the request sets none: four releases at
	// the default target, or fewer with geoind sessions.
	defaultCIPBudget  = 4.0
	defaultCIPEpsilon = 1.0
	defaultCIPLambda  = 2.0
	defaultCIPRadiusM = 100.0
)

// personConfig is a person's resolved configuration, stored as JSON and
// never changed after creation.
type personConfig struct {
	Version int `json:"version"`
	// Geoind is the predictive mechanism's configuration; its
	// Params.Epsilon is the budget per window, in epsilon per metre.
	Geoind geoind.Config `json:"geoind"`
	// WindowSeconds is the budget window (0: one window for ever).
	WindowSeconds int64     `json:"window_s"`
	CIP           cipConfig `json:"cip"`
}

// cipConfig is the person's account budget and CIP release parameters:
// Budget is the account's (every mechanism's) budget, at order Lambda
// within Radius, the account's currency.
type cipConfig struct {
	Budget  float64    `json:"epsilon_budget"`
	Epsilon float64    `json:"epsilon"`
	Lambda  float64    `json:"lambda"`
	Radius  float64    `json:"radius_m"`
	Origin  *geo.Point `json:"origin,omitempty"`
	// Prior is the person's prior family; nil means the bundled one.
	Prior *prior.Prior `json:"prior,omitempty"`
}

func (c *personConfig) window() time.Duration { return time.Duration(c.WindowSeconds) * time.Second }

func decodePersonConfig(s string) (*personConfig, error) {
	var c personConfig
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("stored person configuration: %w", err)
	}
	if c.Version != configVersion {
		return nil, fmt.Errorf("stored person configuration version %d, want %d", c.Version, configVersion)
	}
	return &c, nil
}

func (s *Server) view(p *personInfo) api.Person {
	c := p.cfg
	g := c.Geoind
	win := "none"
	if c.WindowSeconds > 0 {
		win = c.window().String()
	}
	gv := api.PersonGeoind{
		Mechanism: string(g.Mechanism), Manager: string(g.Manager), Predictor: string(g.Predictor), Origin: g.Origin,
		Grid: g.Noise.Grid, Window: win, Confidence: g.Params.Confidence, Eta: g.Params.Eta,
		Gamma: g.Params.Gamma, PR0: g.Params.PR0, MaxSpeedKmh: g.Params.MaxSpeed * 3.6,
	}
	// The device's session runs the service's own configuration, byte for
	// byte (a marshalled geoind.Config cannot fail).
	gv.SessionConfig, _ = json.Marshal(g)
	if g.Manager == geoind.ManagerFixedRate {
		gv.Rate = g.Rate
	} else {
		gv.Accuracy = g.Accuracy
	}
	prior := "bundled"
	if c.CIP.Prior != nil {
		prior = "custom"
	}
	return api.Person{
		ID: p.id, CreatedAt: p.created, Unit: api.UnitGeoind, EpsilonBudget: g.Params.Epsilon, Geoind: gv,
		CIP: api.PersonCIP{Unit: api.UnitCIP, EpsilonBudget: c.CIP.Budget, Epsilon: c.CIP.Epsilon, Lambda: c.CIP.Lambda,
			Radius: c.CIP.Radius, Origin: s.cipOrigin(c), Prior: prior},
		Account: accountView(p, c.CIP.Budget),
	}
}

// cipOrigin is the public origin of the person's CIP releases.
func (s *Server) cipOrigin(c *personConfig) geo.Point {
	if c.CIP.Origin != nil {
		return *c.CIP.Origin
	}
	p := c.CIP.Prior
	if p == nil {
		p = s.prior
	}
	return geo.Point{Lat: p.Origin.Lat, Lon: p.Origin.Lon}
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func validID(id string) error {
	if !idPattern.MatchString(id) {
		return fieldErr("id", "person id %q: want 1-128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit", truncate(id, 64))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func pick(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// resolve validates a creation request and fills in the defaults.
func (s *Server) resolve(req *api.CreatePersonRequest) (*personConfig, error) {
	if err := validID(req.ID); err != nil {
		return nil, err
	}
	if req.EpsilonBudget == nil {
		return nil, fieldErr("epsilon_budget", "epsilon_budget is required: the geo-indistinguishability budget of one window's session in epsilon per metre (ln(10)/100 = 0.0230 protects within 100 m at level ln 10); each session is charged to the person's account (account.epsilon_budget)")
	}
	eps := *req.EpsilonBudget
	if !(eps > 0) || !finite(eps) {
		return nil, fieldErr("epsilon_budget", "epsilon_budget = %v: want finite and > 0 (epsilon per metre)", eps)
	}
	g := req.Geoind
	if g == nil {
		g = &api.GeoindRequest{}
	}
	c := req.CIP
	if c == nil {
		c = &api.CIPRequest{}
	}
	cfg := &personConfig{Version: configVersion}

	// CIP first: the prior's origin is the default origin of both.
	cc := cipConfig{
		Budget: pick(c.EpsilonBudget, defaultCIPBudget), Epsilon: pick(c.Epsilon, defaultCIPEpsilon),
		Lambda: pick(c.Lambda, defaultCIPLambda), Radius: pick(c.Radius, defaultCIPRadiusM), Origin: c.Origin,
	}
	budgetField := "cip.epsilon_budget"
	if a := req.Account; a != nil && a.EpsilonBudget != nil {
		// One budget: account.epsilon_budget, or cip.epsilon_budget (its
		// name before accounts), not two different ones.
		if c.EpsilonBudget != nil && *c.EpsilonBudget != *a.EpsilonBudget {
			return nil, fieldErr("cip.epsilon_budget", "cip.epsilon_budget %v and account.epsilon_budget %v: a person has one budget, for every mechanism; give account.epsilon_budget only", *c.EpsilonBudget, *a.EpsilonBudget)
		}
		cc.Budget, budgetField = *a.EpsilonBudget, "account.epsilon_budget"
	}
	switch {
	case !(cc.Budget > 0) || !finite(cc.Budget):
		return nil, fieldErr(budgetField, "%s = %v: want finite and > 0: the person's one budget, Rényi epsilon at order cip.lambda within cip.radius_m, bounding every release", budgetField, cc.Budget)
	case !(cc.Epsilon > 0) || !finite(cc.Epsilon):
		return nil, fieldErr("cip.epsilon", "cip.epsilon = %v: want finite and > 0 (the default target of one release)", cc.Epsilon)
	case !(cc.Lambda > 1) || !finite(cc.Lambda):
		return nil, fieldErr("cip.lambda", "cip.lambda = %v: the Rényi order must be finite and > 1", cc.Lambda)
	case !(cc.Radius > 0) || !finite(cc.Radius):
		return nil, fieldErr("cip.radius_m", "cip.radius_m = %v: want finite and > 0 metres", cc.Radius)
	}
	if len(bytes.TrimSpace(c.Prior)) > 0 && string(bytes.TrimSpace(c.Prior)) != "null" {
		pr, err := prior.Read(bytes.NewReader(c.Prior))
		if err != nil {
			return nil, fieldErr("cip.prior", "cip.prior: %v", err)
		}
		cc.Prior = pr
	}
	prior := cc.Prior
	if prior == nil {
		prior = s.prior
	}
	if o := cc.Origin; o != nil {
		if err := checkLatLon(*o); err != nil {
			return nil, fieldErr("cip.origin", "cip.origin: %v", err)
		}
	} else if prior.Origin == nil {
		return nil, fieldErr("cip.origin", "the prior records no public origin: give cip.origin (a public point such as the city centre, chosen without looking at the data)")
	}
	cfg.CIP = cc

	origin := g.Origin
	if origin == nil {
		if prior.Origin != nil {
			origin = &geo.Point{Lat: prior.Origin.Lat, Lon: prior.Origin.Lon}
		} else {
			origin = cc.Origin
		}
	}
	if err := checkLatLon(*origin); err != nil {
		return nil, fieldErr("geoind.origin", "geoind.origin: %v", err)
	}
	if g.Window != "" && g.Window != "none" && g.Window != "0" {
		d, err := time.ParseDuration(g.Window)
		if err != nil || d < time.Second || d > 100*365*24*time.Hour || d%time.Second != 0 {
			return nil, fieldErr("geoind.window", "geoind.window %q: want a duration of whole seconds from 1s to 100 years, such as \"24h\", or \"none\"", g.Window)
		}
		cfg.WindowSeconds = int64(d / time.Second)
	}
	mech, mgr := geoind.MechanismKind(g.Mechanism), geoind.ManagerKind(g.Manager)
	if mech == "" {
		mech = geoind.MechanismPredictive
	}
	if mgr == "" {
		mgr = geoind.ManagerFixedRate
	}
	gc := geoind.Config{
		Mechanism: mech, Manager: mgr, Predictor: geoind.PredictorKind(g.Predictor),
		Params: geoind.Params{
			Epsilon: eps, Confidence: pick(g.Confidence, 0.9), Eta: pick(g.Eta, 0.5), Gamma: pick(g.Gamma, 0.8),
			PR0: pick(g.PR0, defaultPR0), MaxSpeed: pick(g.MaxSpeedKmh, 0) / 3.6,
		},
		Origin: *origin,
		Noise:  geoind.PlanarLaplace{Grid: pick(g.Grid, geoind.DefaultGrid)},
	}
	if gc.Predictor == "" {
		gc.Predictor = geoind.PredictorParrot
	}
	switch mgr {
	case geoind.ManagerFixedRate:
		if g.Accuracy != nil {
			return nil, fieldErr("geoind.accuracy_m", "geoind.accuracy_m applies to the fixed-utility manager only")
		}
		gc.Rate = pick(g.Rate, eps*defaultRateFraction)
	case geoind.ManagerFixedUtility:
		if g.Rate != nil {
			return nil, fieldErr("geoind.rate", "geoind.rate applies to the fixed-rate manager only")
		}
		gc.Accuracy = pick(g.Accuracy, defaultAccuracyM)
	}
	if err := gc.Validate(); err != nil {
		var pe *param.Error
		if errors.As(err, &pe) {
			name := "geoind." + pe.Name
			switch pe.Name {
			case "epsilon":
				name = "epsilon_budget"
			case "grid":
				name = "geoind.grid_m"
			case "accuracy":
				name = "geoind.accuracy_m"
			case "max_speed":
				name = "geoind.max_speed_kmh"
			}
			return nil, fieldErr(name, "%s: %v", name, err)
		}
		return nil, fieldErr("geoind", "geoind: %v", err)
	}
	cfg.Geoind = gc
	return cfg, nil
}

func checkLatLon(o geo.Point) error {
	if !finite(o.Lat) || !finite(o.Lon) || o.Lat < -90 || o.Lat > 90 || o.Lon < -180 || o.Lon > 180 {
		return fmt.Errorf("(%v, %v) is not a WGS84 position", o.Lat, o.Lon)
	}
	return nil
}

func (s *Server) handleCreatePerson(w http.ResponseWriter, r *http.Request) {
	if err := s.requireAdmin(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	var req api.CreatePersonRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg, err := s.resolve(&req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tok := newToken()
	now := time.Unix(0, s.opt.Now().UnixNano()).UTC()
	err = s.store.Update(r.Context(), req.ID, func(tx *store.Tx) error {
		return tx.CreatePerson(&store.PersonRow{ID: req.ID, TokenHash: tokenHash(tok), Created: now, Config: string(cfgJSON),
			Budget: cfg.CIP.Budget, GeoBudget: cfg.Geoind.Params.Epsilon, CIPBudget: cfg.CIP.Budget, Tag: newTag()})
	})
	if errors.Is(err, store.ErrExists) {
		err = domainErr(store.ErrExists, "id", "person %q already exists; a budget cannot be reset or recreated", req.ID)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.metrics.people.Inc()
	p := &personInfo{id: req.ID, tokenHash: tokenHash(tok), cfg: cfg, created: now}
	s.log.Info("person created", "request_id", requestID(r), "person", req.ID)
	writeJSON(w, http.StatusCreated, api.CreatePersonResponse{Person: s.view(p), Token: tok})
}

// handleRotateToken gives a person a new token (admin only). The old one
// stops working when the answer is sent: the store keeps only the new
// hash, and every request reads it.
func (s *Server) handleRotateToken(w http.ResponseWriter, r *http.Request) {
	if err := s.requireAdmin(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	tok := newToken()
	err := s.store.Update(r.Context(), id, func(tx *store.Tx) error { return tx.SetTokenHash(id, tokenHash(tok)) })
	if errors.Is(err, store.ErrNoPerson) {
		err = domainErr(store.ErrNoPerson, "", "no person %q", truncate(id, 64))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.Info("token rotated", "request_id", requestID(r), "person", id)
	writeJSON(w, http.StatusOK, api.TokenResponse{ID: id, Token: tok})
}

// decodeJSON reads a JSON body strictly: within the size limit, of
// content type JSON (or none), one object, no unknown fields, nothing
// after it.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSONType(ct) {
		return errf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia, "Content-Type %q: want application/json", truncate(ct, 64))
	}
	body := http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, s.opt.MaxBodyBytes)
	}
	if _, err := dec.Token(); err == nil {
		return errf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON: data after the object")
	} else if !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return jsonError(err, s.opt.MaxBodyBytes)
		}
		return errf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON after the object: %v", err)
	}
	return nil
}

// isJSONType reports whether a request's Content-Type may carry a JSON
// body: application/json, or application/x-www-form-urlencoded, which
// curl -d sends unless told otherwise; the body is decoded strictly as
// JSON either way (a form's a=b is malformed JSON). Accepting the form type
// opens nothing to cross-site forms: every API call needs a bearer token,
// which a form cannot send.
func isJSONType(ct string) bool {
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	return mt == "application/json" || mt == "application/x-www-form-urlencoded"
}

// jsonError words a decoding error.
func jsonError(err error, limit int64) error {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return errf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "request body larger than %d bytes", limit)
	case errors.As(err, &se):
		return errf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		f := te.Field
		if f == "" {
			return errf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON: expected an object, got %s", te.Value)
		}
		return fieldErr(f, "field %q: expected %v, got JSON %s", f, te.Type, te.Value)
	case errors.Is(err, io.EOF):
		return errf(http.StatusBadRequest, api.CodeBadJSON, "empty body: expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON: unexpected end of input")
	}
	if f, ok := jsondoc.UnknownField(err); ok {
		return fieldErr(f, "unknown field %q", f)
	}
	return errf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON: %v", err)
}
