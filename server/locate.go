package server

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
)

// locateRequest is the body of POST /v1/people/{id}/locate. Pointers tell
// a missing field from a zero.
type locateRequest struct {
	Lat  *float64 `json:"lat"`
	Lon  *float64 `json:"lon"`
	Time *string  `json:"time"`
}

// LocateResponse is the answer to a location query.
type LocateResponse struct {
	Lat            float64   `json:"lat"`
	Lon            float64   `json:"lon"`
	EpsilonCharged float64   `json:"epsilon_charged"`
	Spent          float64   `json:"spent"`
	Remaining      float64   `json:"remaining"`
	Budget         float64   `json:"budget"`
	Unit           string    `json:"unit"`
	Window         int64     `json:"window"`
	Step           int       `json:"step"`
	Hard           bool      `json:"hard"`
	Mode           string    `json:"mode"`
	AccuracyM      float64   `json:"accuracy_m"`
	Time           time.Time `json:"time"`
	Seq            int64     `json:"seq"`
	RequestID      string    `json:"request_id"`
}

// maxKeyLen bounds an Idempotency-Key.
const maxKeyLen = 255

// idempotencyKey reads the Idempotency-Key header: required is whether a
// missing key is an error.
func idempotencyKey(r *http.Request, required bool) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		if required {
			return "", errf(http.StatusBadRequest, CodeBadRequest, "the Idempotency-Key header is required: a fresh random value per query (a UUID), the same value when retrying it")
		}
		return "", nil
	}
	if len(k) > maxKeyLen {
		return "", errf(http.StatusBadRequest, CodeBadRequest, "Idempotency-Key longer than %d characters", maxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return "", errf(http.StatusBadRequest, CodeBadRequest, "Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return k, nil
}

// parseLocate validates a location query.
func parseLocate(req *locateRequest) (geo.Point, time.Time, error) {
	switch {
	case req.Lat == nil:
		return geo.Point{}, time.Time{}, fieldErr("lat", "lat is required (decimal degrees, WGS84)")
	case req.Lon == nil:
		return geo.Point{}, time.Time{}, fieldErr("lon", "lon is required (decimal degrees, WGS84)")
	case req.Time == nil:
		return geo.Point{}, time.Time{}, fieldErr("time", "time is required (RFC 3339, e.g. 2008-10-24T02:10:00Z)")
	}
	lat, lon := *req.Lat, *req.Lon
	if !finite(lat) || lat < -90 || lat > 90 {
		return geo.Point{}, time.Time{}, fieldErr("lat", "lat = %v: want a latitude in [-90, 90]", lat)
	}
	if !finite(lon) || lon < -180 || lon > 180 {
		return geo.Point{}, time.Time{}, fieldErr("lon", "lon = %v: want a longitude in [-180, 180]", lon)
	}
	t, err := time.Parse(time.RFC3339Nano, *req.Time)
	if err != nil {
		return geo.Point{}, time.Time{}, fieldErr("time", "time %q: want RFC 3339 with a zone, e.g. 2008-10-24T02:10:00Z", truncate(*req.Time, 64))
	}
	if t.Year() < 1900 || t.Year() > 9999 {
		return geo.Point{}, time.Time{}, fieldErr("time", "time %q: year out of range", truncate(*req.Time, 64))
	}
	return geo.Point{Lat: lat, Lon: lon}, t.UTC(), nil
}

// canonicalLocate is what the request MAC covers: the parsed query, so
// that a retry with other whitespace or number spelling is the same
// request.
func canonicalLocate(p geo.Point, t time.Time) []byte {
	b := make([]byte, 0, 24)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Lat))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Lon))
	return binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
}

// newTag returns a random non-zero state tag.
func newTag() int64 {
	var b [8]byte
	rand.Read(b[:])
	v := int64(binary.BigEndian.Uint64(b[:]) >> 1)
	if v == 0 {
		v = 1
	}
	return v
}

// windowIndex is the budget window containing now: windows of length w
// from the person's creation. It never goes back before the stored
// window, so a clock set back cannot reopen a spent window's budget.
func windowIndex(created, now time.Time, w time.Duration, stored int64) int64 {
	if w <= 0 {
		return max(0, stored)
	}
	k := int64(0)
	if d := now.Sub(created); d > 0 {
		k = int64(d / w)
	}
	return max(k, stored)
}

// personRow is the mutable part of a person, read under the person's
// lock.
type personRow struct {
	geoBudget, geoSpent, geoTotal float64
	geoWindow                     int64
	cipBudget, cipSpent           float64
	seq, tag                      int64
}

// lockPerson reads the person's row, locking it until the transaction
// ends (FOR UPDATE on PostgreSQL; SQLite's writer is already exclusive),
// and then the charge stored under the idempotency key, if any.
//
// On PostgreSQL the charge is read by a second statement, after the lock:
// under READ COMMITTED a statement that waited for a row lock re-reads the
// locked row but joins other tables from its own earlier snapshot, so a
// join would miss the charge the lock holder just committed under the
// same key.
func lockPerson(tx *Tx, id, key string) (*personRow, *storedAnswer, error) {
	q := `SELECT geo_budget, geo_spent, geo_total, geo_window, cip_budget, cip_spent, seq, tag FROM people WHERE id = ?`
	if tx.Dialect() == Postgres {
		q += ` FOR UPDATE`
	}
	var p personRow
	err := tx.QueryRow(q, id).Scan(&p.geoBudget, &p.geoSpent, &p.geoTotal, &p.geoWindow, &p.cipBudget, &p.cipSpent, &p.seq, &p.tag)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, errf(http.StatusForbidden, CodeForbidden, "this token does not grant access to this person")
	}
	if err != nil {
		return nil, nil, err
	}
	var a storedAnswer
	err = tx.QueryRow(`SELECT body_mac, status, content_type, response FROM charges WHERE person_id = ? AND idem_key = ?`, id, key).
		Scan(&a.mac, &a.status, &a.contentType, &a.response)
	if errors.Is(err, sql.ErrNoRows) {
		return &p, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return &p, &a, nil
}

// storedAnswer is a charge found by its idempotency key.
type storedAnswer struct {
	mac         []byte
	status      int
	contentType string
	response    []byte
}

// replay checks a stored answer against the retried request.
func replay(a *storedAnswer, mac []byte) (*storedAnswer, error) {
	if !bytes.Equal(a.mac, mac) {
		return nil, errf(http.StatusUnprocessableEntity, CodeIdempotencyKey,
			"this Idempotency-Key was already used with a different request; use a new key for a new query")
	}
	return a, nil
}

// charge is one row of the ledger to insert.
type charge struct {
	person, kind, requestID, key string
	seq, win, created            int64
	amount                       float64
	mac                          []byte
	detail                       []byte
	status                       int
	contentType                  string
	response                     []byte
}

func insertCharge(tx *Tx, c *charge) error {
	_, err := tx.Exec(`INSERT INTO charges (person_id, seq, created_at, kind, win, amount, request_id, idem_key, body_mac, detail, status, content_type, response)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.person, c.seq, c.created, c.kind, c.win, c.amount, c.requestID, c.key, c.mac, string(c.detail), c.status, c.contentType, c.response)
	return err
}

// loadRun reads the person's run in window win from the ledger.
func loadRun(tx *Tx, id string, win int64) (geoind.Run, error) {
	rows, err := tx.Query(`SELECT detail FROM charges WHERE person_id = ? AND kind = 'geoind' AND win = ? ORDER BY seq`, id, win)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var run geoind.Run
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		var st geoind.Step
		if err := json.Unmarshal([]byte(d), &st); err != nil {
			return nil, fmt.Errorf("stored step of %s: %w", id, err)
		}
		run = append(run, st)
	}
	return run, rows.Err()
}

// handleLocate answers one location query with the person's mechanism.
func (s *Server) handleLocate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p, tok, _, err := s.authPerson(r, id, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	key, err := idempotencyKey(r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req locateRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	pt, t, err := parseLocate(&req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mac := requestMAC(tok, "locate", canonicalLocate(pt, t))
	var out *storedAnswer
	replayed := false
	err = s.store.Update(r.Context(), func(tx *Tx) error {
		row, a, err := lockPerson(tx, id, key)
		if err != nil {
			return err
		}
		if a != nil {
			out, err = replay(a, mac)
			replayed = err == nil
			return err
		}
		out, err = s.locate(tx, p, row, pt, t, key, mac, requestID(r))
		return err
	})
	var body []byte
	if err == nil {
		body = out.response
	}
	s.writeCharged(w, r, "geoind", err, replayed, out, body)
}

// writeCharged writes the outcome of a request that spends budget kind:
// its error (counting a refusal for an exhausted budget), or body, the
// stored answer out's response (possibly with more fields), marked when it
// is a replay.
func (s *Server) writeCharged(w http.ResponseWriter, r *http.Request, kind string, err error, replayed bool, out *storedAnswer, body []byte) {
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Code == CodeBudgetExhausted {
			s.metrics.exhausted.WithLabelValues(kind).Inc()
		}
		s.writeError(w, r, err)
		return
	}
	if replayed {
		s.metrics.replays.Inc()
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, out.status, out.contentType, body)
}

// locate runs one step of the person's mechanism inside the person's
// transaction and stores its charge and answer there.
func (s *Server) locate(tx *Tx, p *personInfo, row *personRow, pt geo.Point, t time.Time, key string, mac []byte, reqID string) (*storedAnswer, error) {
	cfg := p.cfg
	now := s.opt.Now()
	if d := geo.Haversine(pt, geo.Point{Lat: cfg.Geoind.Origin.Lat, Lon: cfg.Geoind.Origin.Lon}); d > MaxOriginDistanceM {
		e := errf(http.StatusUnprocessableEntity, CodeUnprocessable,
			"the location is %.0f km from this person's public origin (%.4f, %.4f); the tangent plane represents only %g km around it: create the person with geoind.origin near where they are",
			d/1000, cfg.Geoind.Origin.Lat, cfg.Geoind.Origin.Lon, MaxOriginDistanceM/1000)
		e.Field = "lat"
		return nil, e
	}
	win := windowIndex(p.created, now, cfg.window(), row.geoWindow)
	base := row.geoSpent
	if win != row.geoWindow {
		base = 0
	}
	sess := s.sessions.take(p.id, row.tag, win)
	if sess == nil {
		var run geoind.Run
		if win == row.geoWindow {
			var err error
			if run, err = loadRun(tx, p.id, win); err != nil {
				return nil, err
			}
		}
		var err error
		sess, err = geoind.Resume(geoind.State{Version: geoind.StateVersion, Config: cfg.Geoind, Run: run, Spent: run.Spent()}, nil)
		if err != nil {
			return nil, fmt.Errorf("person %s: stored run: %w", p.id, err)
		}
		if got := sess.State().Spent; got != base {
			return nil, fmt.Errorf("person %s: the run of window %d accounts for %v, the ledger total is %v", p.id, win, got, base)
		}
	}
	rep, err := sess.Query(pt, t)
	if err != nil {
		// The session is unchanged on error; keep it cached.
		s.sessions.put(p.id, row.tag, win, sess)
		budget := cfg.Geoind.Params.Epsilon
		switch {
		case geoind.IsExhausted(err):
			e := errf(http.StatusTooManyRequests, CodeBudgetExhausted, "the geo-indistinguishability budget of this window is spent (%.6g of %.6g epsilon per metre)", base, budget)
			e.Details = map[string]any{"kind": "geoind", "budget": budget, "spent": base, "remaining": math.Max(0, budget-base), "window": win}
			if w := cfg.window(); w > 0 {
				next := p.created.Add(time.Duration(win+1) * w)
				e.RetryAfter = max(time.Second, next.Sub(now))
				e.Details["window_end"] = next.UTC()
			}
			return nil, e
		case strings.Contains(err.Error(), "before the previous query"):
			e := errf(http.StatusUnprocessableEntity, CodeUnprocessable, "time %s is before this person's previous query in this window; queries must come in time order", t.Format(time.RFC3339Nano))
			e.Field = "time"
			return nil, e
		}
		var pe *geoind.ParamError
		if errors.As(err, &pe) {
			e := errf(http.StatusUnprocessableEntity, CodeUnprocessable, "%v", err)
			e.Field = "lat"
			return nil, e
		}
		return nil, err
	}
	spent := base + rep.Cost
	if spent != rep.Spent || spent > row.geoBudget {
		// The manager keeps every run within its budget (Theorem 3); the
		// ledger checks it independently and refuses to release otherwise.
		return nil, fmt.Errorf("person %s: step would take the ledger to %v (session says %v) of %v", p.id, spent, rep.Spent, row.geoBudget)
	}
	st := sess.State().Run[rep.Step]
	detail, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	seq := row.seq + 1
	resp := LocateResponse{
		Lat: rep.Lat, Lon: rep.Lon, EpsilonCharged: rep.Cost, Spent: spent, Remaining: math.Max(0, row.geoBudget-spent),
		Budget: row.geoBudget, Unit: UnitGeoind, Window: win, Step: rep.Step, Hard: rep.Hard, Mode: rep.Mode.String(),
		AccuracyM: rep.Accuracy, Time: t, Seq: seq, RequestID: reqID,
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	c := &charge{person: p.id, kind: "geoind", requestID: reqID, key: key, seq: seq, win: win, created: now.UnixNano(),
		amount: rep.Cost, mac: mac, detail: detail, status: http.StatusOK, contentType: "application/json", response: body}
	if err := insertCharge(tx, c); err != nil {
		return nil, err
	}
	tag := newTag()
	// The conditional update is the ledger's own check: it matches only
	// the row version read above and only within the budget.
	res, err := tx.Exec(`UPDATE people SET geo_spent = ?, geo_window = ?, geo_total = geo_total + ?, seq = ?, tag = ?
		WHERE id = ? AND tag = ? AND seq = ? AND ? <= geo_budget`,
		spent, win, rep.Cost, seq, tag, p.id, row.tag, row.seq, spent)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n != 1 {
		return nil, fmt.Errorf("person %s: ledger row changed under the lock", p.id)
	}
	tx.OnCommit(func() {
		s.sessions.put(p.id, tag, win, sess)
		s.metrics.charged.WithLabelValues("geoind").Add(rep.Cost)
		s.metrics.charges.WithLabelValues("geoind").Inc()
	})
	return &storedAnswer{status: http.StatusOK, contentType: "application/json", response: body}, nil
}

// sessionCache keeps each person's mechanism session between queries, keyed
// by the row's tag: an entry is used only if the person's stored tag is
// the one it was saved under, so a rolled-back write (whose tag never
// committed) or another process's write makes it stale, and it is rebuilt
// from the ledger.
type sessionCache struct {
	mu    sync.Mutex
	m     map[string]cachedSession
	limit int
}

type cachedSession struct {
	tag, win int64
	sess     *geoind.Session
}

func newSessionCache(limit int) *sessionCache {
	return &sessionCache{m: map[string]cachedSession{}, limit: limit}
}

// take removes and returns the session saved under tag and window, or nil.
func (c *sessionCache) take(id string, tag, win int64) *geoind.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok {
		return nil
	}
	delete(c.m, id)
	if e.tag != tag || e.win != win {
		return nil
	}
	return e.sess
}

func (c *sessionCache) put(id string, tag, win int64, s *geoind.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.limit {
		for k := range c.m { // evict an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[id] = cachedSession{tag: tag, win: win, sess: s}
}

// formatFloat is strconv's shortest exact form.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
