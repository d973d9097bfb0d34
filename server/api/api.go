package api

import (
	"encoding/json"
	"time"

	"github.com/tracepriv/tracepriv/geo"
)

// UnitGeoind and UnitCIP name the units of the two budgets, as the
// answers' unit fields state them.
const (
	UnitGeoind = "geo-indistinguishability epsilon per metre, per window (Lemma 2 accounting of the predictive mechanism)"
	UnitCIP    = "CIP Rényi epsilon at the person's order lambda and radius, summed over releases"
)

// CreatePersonRequest is the body of POST /v1/people (admin token). Only
// ID and EpsilonBudget are required: a nil pointer, an empty string or a
// nil part takes the server's default, which the answer shows.
type CreatePersonRequest struct {
	// ID is 1-128 characters of A-Z a-z 0-9 . _ -, starting with a letter
	// or digit.
	ID string `json:"id"`
	// EpsilonBudget is the geo-indistinguishability budget per window, in
	// epsilon per metre (UnitGeoind).
	EpsilonBudget *float64       `json:"epsilon_budget"`
	Geoind        *GeoindRequest `json:"geoind,omitempty"`
	CIP           *CIPRequest    `json:"cip,omitempty"`
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

// CIPRequest configures a person's CIP budget and releases.
type CIPRequest struct {
	EpsilonBudget *float64   `json:"epsilon_budget,omitempty"` // UnitCIP
	Epsilon       *float64   `json:"epsilon,omitempty"`        // default target of one release
	Lambda        *float64   `json:"lambda,omitempty"`         // the Rényi order, > 1
	Radius        *float64   `json:"radius_m,omitempty"`
	Origin        *geo.Point `json:"origin,omitempty"`
	// Prior is a prior family file (tracepriv fit); nil: the bundled one.
	Prior json.RawMessage `json:"prior,omitempty"`
}

// Person is a person's configuration as the server resolved it (defaults
// filled in), in the answer to their creation and in their ledger.
type Person struct {
	ID            string       `json:"id"`
	CreatedAt     time.Time    `json:"created_at"`
	Unit          string       `json:"unit"` // UnitGeoind
	EpsilonBudget float64      `json:"epsilon_budget"`
	Geoind        PersonGeoind `json:"geoind"`
	CIP           PersonCIP    `json:"cip"`
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
}

// PersonCIP is a person's CIP budget and release parameters.
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
	// EpsilonKind "exact" or "upper_bound"), charged to the CIP budget;
	// Spent, Remaining and Budget are the budget's after it, in Unit
	// (UnitCIP).
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
	// TotalSpent is the geo-indistinguishability epsilon spent over every
	// window: the guarantee of the person's whole history (windows compose
	// by addition).
	TotalSpent float64   `json:"total_spent"`
	CIP        LedgerCIP `json:"cip"`
	Config     Person    `json:"config"`
	Charges    []Charge  `json:"charges"`
	// NextAfter is set when the charges were cut at limit: ask again with
	// ?after=NextAfter.
	NextAfter *int64 `json:"next_after,omitempty"`
}

// LedgerCIP is the person's CIP budget.
type LedgerCIP struct {
	Unit      string  `json:"unit"`
	Budget    float64 `json:"budget"`
	Spent     float64 `json:"spent"`
	Remaining float64 `json:"remaining"`
	// Exhausted says that what is left cannot pay a release at the
	// person's default target epsilon.
	Exhausted   bool    `json:"exhausted"`
	Lambda      float64 `json:"lambda"`
	RadiusM     float64 `json:"radius_m"`
	Composition string  `json:"composition"`
}

// Charge is one line of a ledger.
type Charge struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Kind is "geoind" (a location query, in UnitGeoind) or "cip" (a
	// release, in UnitCIP).
	Kind      string  `json:"kind"`
	Amount    float64 `json:"amount"`
	Window    int64   `json:"window"`
	RequestID string  `json:"request_id"`
}

// HealthResponse is the body of GET /healthz: 200 with Status "ok" while
// the store can release answers, 503 with "unavailable" otherwise.
type HealthResponse struct {
	Status        string `json:"status"`
	Store         string `json:"store"` // "sqlite" or "postgres"
	SchemaVersion int    `json:"schema_version"`
}
