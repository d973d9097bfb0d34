package api

import (
	"encoding/json"
	"time"

	"github.com/tracepriv/tracepriv/geo"
)

// UnitAccount is the unit of a person's one account: the budget that
// bounds everything released of them. UnitGeoind is the unit of a geoind
// session within one window (the rate the window allows, inside the
// account), and UnitCIP that of a CIP release's certified epsilon (the
// account's currency, as the answers' unit fields state them).
const (
	UnitAccount = "Rényi epsilon at the person's order lambda within radius_m metres, summed over every release of every mechanism " +
		"(a geoind session of epsilon per metre on a grid of u metres costs min(e, lambda e^2/2), e = epsilon (radius_m + sqrt(2) u); docs/ledger.md)"
	UnitGeoind = "geo-indistinguishability epsilon per metre, per window (Lemma 2 accounting of the predictive mechanism)"
	UnitCIP    = "CIP Rényi epsilon at the person's order lambda and radius, summed over releases"
)

// The mechanisms a charge names (ChargeRequest.Mechanism, Charge.Kind).
const (
	MechanismGeoind = "geoind"
	MechanismCIP    = "cip"
)

// CreatePersonRequest is the body of POST /v1/people (admin token). Only
// ID and EpsilonBudget are required: a nil pointer, an empty string or a
// nil part takes the server's default, which the answer shows.
type CreatePersonRequest struct {
	// ID is 1-128 characters of A-Z a-z 0-9 . _ -, starting with a letter
	// or digit.
	ID string `json:"id"`
	// EpsilonBudget is the geo-indistinguishability budget of one window's
	// session, in epsilon per metre (UnitGeoind): a rate within the
	// account, whose budget is Account.EpsilonBudget.
	EpsilonBudget *float64       `json:"epsilon_budget"`
	Geoind        *GeoindRequest `json:"geoind,omitempty"`
	CIP           *CIPRequest    `json:"cip,omitempty"`
	// Account sets the person's one budget (nil: CIP.EpsilonBudget, which
	// was the CIP budget before accounts, or the default of 4).
	Account *AccountRequest `json:"account,omitempty"`
}

// AccountRequest sets a person's account: EpsilonBudget, in UnitAccount at
// the order cip.lambda within cip.radius_m, bounds the total of every
// release of the person, for ever (no window renews it).
type AccountRequest struct {
	EpsilonBudget *float64 `json:"epsilon_budget"`
}

// GeoindRequest configures a person's predictive mechanism.
type GeoindRequest struct {
	Mechanism string `json:"mechanism,omitempty"` // "pm" (default) or "im"
	Manager   string `json:"manager,omitempty"`   // "fixed-rate" (default) or "fixed-utility"
	// Rate (fixed-rate) is the expected epsilon per metre per query;
	// Accuracy (fixed-utility) the accuracy in metres.
	Rate      *float64   `json:"rate,omitempty"`
	Accuracy  *float64   `json:"accuracy_m,omitempty"`
	Predictor string     `json:"predictor,omitempty"` // "parrot" (default) or "linear"
	Origin    *geo.Point `json:"origin,omitempty"`    // public origin; default the prior's
	Grid      *float64   `json:"grid_m,omitempty"`
	// Window is the budget window as a duration ("24h"); "" or "none" is
	// one window for ever.
	Window      string   `json:"window,omitempty"`
	Confidence  *float64 `json:"confidence,omitempty"`
	Eta         *float64 `json:"eta,omitempty"`
	Gamma       *float64 `json:"gamma,omitempty"`
	PR0         *float64 `json:"pr0,omitempty"`
	MaxSpeedKmh *float64 `json:"max_speed_kmh,omitempty"`
}

// CIPRequest configures a person's CIP releases and the currency of their
// account (Lambda, Radius); EpsilonBudget is the account's budget under
// its name before accounts (AccountRequest).
type CIPRequest struct {
	EpsilonBudget *float64   `json:"epsilon_budget,omitempty"` // UnitCIP
	Epsilon       *float64   `json:"epsilon,omitempty"`        // default target of one release
	Lambda        *float64   `json:"lambda,omitempty"`         // the Rényi order, > 1
	Radius        *float64   `json:"radius_m,omitempty"`
	Origin        *geo.Point `json:"origin,omitempty"`
	// Prior is a prior family file (tracepriv fit); nil: the bundled one.
	Prior json.RawMessage `json:"prior,omitempty"`
}

// Person is the wire form of a person's configuration as the server
// resolved it (defaults filled in), in the answer to their creation and in
// their ledger.
type Person struct {
	ID            string       `json:"id"`
	CreatedAt     time.Time    `json:"created_at"`
	Unit          string       `json:"unit"` // UnitGeoind
	EpsilonBudget float64      `json:"epsilon_budget"`
	Geoind        PersonGeoind `json:"geoind"`
	CIP           PersonCIP    `json:"cip"`
	// Account is the person's one budget.
	Account PersonAccount `json:"account"`
}

// PersonAccount is a person's account: one budget, in Unit (UnitAccount)
// at order Lambda within RadiusM, bounding every release of the person.
// SessionCharge is what one window's geoind session costs it.
type PersonAccount struct {
	Unit          string  `json:"unit"`
	EpsilonBudget float64 `json:"epsilon_budget"`
	Lambda        float64 `json:"lambda"`
	RadiusM       float64 `json:"radius_m"`
	SessionCharge float64 `json:"geoind_session_charge"`
}

// PersonGeoind is a person's predictive mechanism.
type PersonGeoind struct {
	Mechanism string `json:"mechanism"`
	Manager   string `json:"manager"`
	// Rate is set for the fixed-rate manager, Accuracy for the
	// fixed-utility one.
	Rate        float64   `json:"rate,omitempty"`
	Accuracy    float64   `json:"accuracy_m,omitempty"`
	Predictor   string    `json:"predictor"`
	Origin      geo.Point `json:"origin"`
	Grid        float64   `json:"grid_m"`
	Window      string    `json:"window"` // a duration, or "none"
	Confidence  float64   `json:"confidence"`
	Eta         float64   `json:"eta"`
	Gamma       float64   `json:"gamma"`
	PR0         float64   `json:"pr0"`
	MaxSpeedKmh float64   `json:"max_speed_kmh"`
	// SessionConfig is the geoind.Config a session on the person's device
	// runs (device.NewChargedSession, the module's newSession): exactly
	// the service's parameters, so that one charge of mechanism "geoind"
	// pays for one window's session (docs/device.md).
	SessionConfig json.RawMessage `json:"session_config"`
}

// PersonCIP is a person's CIP release parameters; EpsilonBudget is their
// account's budget.
type PersonCIP struct {
	Unit          string    `json:"unit"` // UnitCIP
	EpsilonBudget float64   `json:"epsilon_budget"`
	Epsilon       float64   `json:"epsilon"`
	Lambda        float64   `json:"lambda"`
	Radius        float64   `json:"radius_m"`
	Origin        geo.Point `json:"origin"`
	Prior         string    `json:"prior"` // "bundled" or "custom"
}

// CreatePersonResponse is the answer (201) to POST /v1/people.
type CreatePersonResponse struct {
	Person
	// Token is the person's bearer token, shown once: the server keeps
	// only its hash.
	Token string `json:"token"`
}

// TokenResponse is the answer to POST /v1/people/{id}/token: the person's
// new token, shown once.
type TokenResponse struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// LocateRequest is the body of POST /v1/people/{id}/locate (the person's
// token, and an Idempotency-Key header: a fresh random value per query,
// the same value when retrying it).
type LocateRequest struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
	// Time is the time of the fix, within the server's time window around
	// its clock; a window's queries come in time order.
	Time time.Time `json:"time"`
}

// LocateResponse is the answer to a location query.
type LocateResponse struct {
	// Lat and Lon are the released location.
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
	// EpsilonCharged is this answer's charge; Spent, Remaining and Budget
	// are the window's after it, in Unit (UnitGeoind).
	EpsilonCharged float64 `json:"epsilon_charged"`
	Spent          float64 `json:"spent"`
	Remaining      float64 `json:"remaining"`
	Budget         float64 `json:"budget"`
	Unit           string  `json:"unit"`
	Window         int64   `json:"window"`
	// Step is the answer's index in the window's run; Hard says that
	// fresh noise was drawn, Mode how the answer was made ("test",
	// "noise" or "predict").
	Step int    `json:"step"`
	Hard bool   `json:"hard"`
	Mode string `json:"mode"`
	// AccuracyM is the α(confidence) bound in metres (0 when the test was
	// skipped).
	AccuracyM float64   `json:"accuracy_m"`
	Time      time.Time `json:"time"`
	// Seq is the charge's number in the person's ledger, RequestID the
	// request that was charged (a replay returns the original's).
	Seq       int64  `json:"seq"`
	RequestID string `json:"request_id"`
	// Account is the person's account after the answer: the window's
	// first answer carries the session's charge, later ones charge 0.
	Account AccountState `json:"account"`
}

// AccountState is a person's account after a charge, in Unit
// (UnitAccount): Charged is what the charge cost it.
type AccountState struct {
	Charged   float64 `json:"charged"`
	Spent     float64 `json:"spent"`
	Remaining float64 `json:"remaining"`
	Budget    float64 `json:"budget"`
	Unit      string  `json:"unit"`
}

// SanitizeResponse is the answer to a trace upload (POST
// /v1/people/{id}/sanitize): the sanitised trace, its certificate, and the
// CIP charge.
type SanitizeResponse struct {
	// Format is the format of Trace: the upload's, or the one asked for
	// with ?output=. Trace is the file's text as a JSON string, or, for
	// GeoJSON, the GeoJSON object itself.
	Format string          `json:"format"`
	Trace  json.RawMessage `json:"trace"`
	// Certificate is the release's sanitize certificate, as tracepriv
	// sanitize writes it.
	Certificate json.RawMessage `json:"certificate"`
	// EpsilonCharged is the certified epsilon_max of the release (of
	// EpsilonKind "exact" or "upper_bound"), charged to the person's
	// account; Spent, Remaining and Budget are the account's after it, in
	// Unit (UnitAccount: every mechanism's charges).
	EpsilonCharged float64 `json:"epsilon_charged"`
	EpsilonKind    string  `json:"epsilon_kind"`
	EpsilonTarget  float64 `json:"epsilon_target"`
	Lambda         float64 `json:"lambda"`
	RadiusM        float64 `json:"radius_m"`
	Spent          float64 `json:"spent"`
	Remaining      float64 `json:"remaining"`
	Budget         float64 `json:"budget"`
	Unit           string  `json:"unit"`
	Points         int     `json:"points"`
	Traces         int     `json:"traces"`
	SkippedRows    int     `json:"skipped_rows"`
	RMSNoiseM      float64 `json:"rms_noise_m"`
	Seq            int64   `json:"seq"`
	RequestID      string  `json:"request_id"`
	// Original is the upload as read (after the dirty-input policy), as
	// GeoJSON, for drawing it beside the release. It is derived from the
	// request again on every answer, replays included, and never stored.
	Original json.RawMessage `json:"original,omitempty"`
}

// LedgerResponse is a person's ledger (GET /v1/people/{id}/ledger): the
// budgets, what is spent and left, and every charge.
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
	// Exhausted says that what is left of the window's budget cannot pay
	// the mechanism's next step now: every query gets 429 until the window
	// ends (Retry-After says when) or for good without windows.
	Exhausted bool `json:"exhausted"`
	// TotalSpent is the geo-indistinguishability epsilon per metre spent
	// over every window (each window's session is charged to Account).
	TotalSpent float64   `json:"total_spent"`
	CIP        LedgerCIP `json:"cip"`
	// Account is the person's one budget: what bounds everything released
	// of them, every window and mechanism, the service's and the device's.
	Account LedgerAccount `json:"account"`
	Config  Person        `json:"config"`
	Charges []Charge      `json:"charges"`
	// NextAfter is set when the charges were cut at limit: ask again with
	// ?after=NextAfter.
	NextAfter *int64 `json:"next_after,omitempty"`
}

// LedgerCIP is the person's CIP releases: Spent what they cost the
// account, Budget and Remaining the account's (the one budget they share
// with geoind).
type LedgerCIP struct {
	Unit      string  `json:"unit"`
	Budget    float64 `json:"budget"`
	Spent     float64 `json:"spent"`
	Remaining float64 `json:"remaining"`
	// Exhausted says that what is left of the account cannot pay a release
	// at the person's default target epsilon.
	Exhausted   bool    `json:"exhausted"`
	Lambda      float64 `json:"lambda"`
	RadiusM     float64 `json:"radius_m"`
	Composition string  `json:"composition"`
}

// LedgerAccount is the person's account (UnitAccount).
type LedgerAccount struct {
	Unit      string  `json:"unit"`
	Budget    float64 `json:"budget"`
	Spent     float64 `json:"spent"`
	Remaining float64 `json:"remaining"`
	Lambda    float64 `json:"lambda"`
	RadiusM   float64 `json:"radius_m"`
	// SessionCharge is what one window's geoind session costs.
	SessionCharge float64 `json:"geoind_session_charge"`
	Composition   string  `json:"composition"`
}

// Charge is the wire form of one line of a person's ledger (what
// budget.Charge is in a ledger file).
type Charge struct {
	// ChargeID names the charge (its answer's charge_id); Seq numbers it.
	ChargeID string    `json:"charge_id"`
	Seq      int64     `json:"seq"`
	Time     time.Time `json:"time"`
	// Kind, also Mechanism, is "geoind" (a location query or a geoind
	// session, Amount in UnitGeoind) or "cip" (a release, Amount its
	// certified epsilon).
	Kind      string `json:"kind"`
	Mechanism string `json:"mechanism"`
	// Origin is "service" (this service drew the release), "device"
	// (drawn elsewhere, charged by POST /v1/people/{id}/charges) or "cli"
	// (drawn by a tracepriv command whose --ledger is this service's
	// database).
	Origin string `json:"origin"`
	// Settlement is "pending" for a command's charge made before its
	// release was drawn (at the release's upper bound, counted in the
	// account) and "undone" for one whose release did not land (epsilon
	// 0); absent once settled.
	Settlement string  `json:"settlement,omitempty"`
	Amount     float64 `json:"amount"`
	// Epsilon is what the charge cost the account (UnitAccount).
	Epsilon           float64 `json:"epsilon"`
	Window            int64   `json:"window"`
	CertificateSHA256 string  `json:"certificate_sha256,omitempty"`
	RequestID         string  `json:"request_id"`
}

// ChargeRequest is the body of POST /v1/people/{id}/charges (the person's
// token and an Idempotency-Key header): a release the device is about to
// draw, charged before it draws.
type ChargeRequest struct {
	// Mechanism is "geoind" (one session of Epsilon per metre on a grid of
	// GridM metres) or "cip" (a release certified at Epsilon, Rényi at
	// order Lambda within RadiusM).
	Mechanism string   `json:"mechanism"`
	Epsilon   *float64 `json:"epsilon"`
	// RadiusM is the release's radius: for cip at least the account's,
	// for geoind the account's (the session is converted at it).
	RadiusM *float64 `json:"radius_m"`
	// Lambda is a cip release's order (default and minimum the
	// account's); GridM a geoind session's output grid (default the
	// person's geoind grid_m).
	Lambda *float64 `json:"lambda,omitempty"`
	GridM  *float64 `json:"grid_m,omitempty"`
	// CertificateSHA256 is the SHA-256 (64 hex digits) of the release's
	// certificate: required for cip, optional for geoind.
	CertificateSHA256 string `json:"certificate_sha256,omitempty"`
}

// ChargeResponse is the answer (201) to a charge: durable before it is
// sent; the device may draw once it has it. A retry with the same
// Idempotency-Key and body gets the same answer (the same ChargeID).
type ChargeResponse struct {
	ChargeID  string  `json:"charge_id"`
	Mechanism string  `json:"mechanism"`
	Epsilon   float64 `json:"epsilon"`
	// EpsilonCharged is what the release cost the account; Spent,
	// Remaining and Budget are the account's after it, in Unit
	// (UnitAccount) at order Lambda within RadiusM.
	EpsilonCharged float64   `json:"epsilon_charged"`
	Spent          float64   `json:"spent"`
	Remaining      float64   `json:"remaining"`
	Budget         float64   `json:"budget"`
	Unit           string    `json:"unit"`
	Lambda         float64   `json:"lambda"`
	RadiusM        float64   `json:"radius_m"`
	Seq            int64     `json:"seq"`
	Time           time.Time `json:"time"`
	RequestID      string    `json:"request_id"`
}

// HealthResponse is the body of GET /healthz: 200 with Status "ok" while
// the store can release answers, 503 with "unavailable" otherwise.
type HealthResponse struct {
	Status        string `json:"status"`
	Store         string `json:"store"` // "sqlite" or "postgres"
	SchemaVersion int    `json:"schema_version"`
}
