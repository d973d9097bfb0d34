package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/ledger"
)

// locateRequest is the body of POST /v1/people/{id}/locate. Pointers tell
// a missing field from a zero.
type locateRequest struct {
	Lat  *float64 `json:"lat"`
	Lon  *float64 `json:"lon"`
	Time *string  `json:"time"`
}

// maxKeyLen bounds an Idempotency-Key.
const maxKeyLen = 255

// idempotencyKey reads the Idempotency-Key header: required is whether a
// missing key is an error.
func idempotencyKey(r *http.Request, required bool) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		if required {
			return "", errf(http.StatusBadRequest, api.CodeBadRequest, "the Idempotency-Key header is required: a fresh random value per query (a UUID), the same value when retrying it")
		}
		return "", nil
	}
	if len(k) > maxKeyLen {
		return "", errf(http.StatusBadRequest, api.CodeBadRequest, "Idempotency-Key longer than %d characters", maxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return "", errf(http.StatusBadRequest, api.CodeBadRequest, "Idempotency-Key must be printable ASCII without spaces")
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
// request. The time is its Unix nanoseconds where they are defined (years
// 1678 to 2262, the form earlier builds stored), else its seconds and
// nanoseconds after a marker byte, so that distinct times never share a
// MAC.
func canonicalLocate(p geo.Point, t time.Time) []byte {
	b := make([]byte, 0, 33)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Lat))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Lon))
	if t.Year() > 1678 && t.Year() < 2262 {
		return binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
	}
	b = append(b, 0xff)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
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

// checkToken verifies, inside the person's transaction, that the token
// still is theirs: a token rotated after the request was authenticated
// spends nothing.
func checkToken(p *ledger.Person, tok string) error {
	if subtle.ConstantTimeCompare(tokenHash(tok), p.TokenHash) != 1 {
		return ledger.ErrWrongToken
	}
	return nil
}

// replay checks a stored answer against the retried request.
func replay(a *ledger.Answer, mac []byte) (*ledger.Answer, error) {
	if !bytes.Equal(a.MAC, mac) {
		return nil, ledger.ErrReplayMismatch
	}
	return a, nil
}

// loadRun reads the person's run in window win from the ledger.
func loadRun(details [][]byte, id string) (geoind.Run, error) {
	run := make(geoind.Run, 0, len(details))
	for _, d := range details {
		var st geoind.Step
		if err := json.Unmarshal(d, &st); err != nil {
			return nil, fmt.Errorf("stored step of %s: %w", id, err)
		}
		run = append(run, st)
	}
	return run, nil
}

// keyedUpdate runs a keyed release in one transaction: it locks the
// person and the Idempotency-Key, checks the token, and answers a retry
// from the ledger (replayed) or asks fresh for a new, charged answer.
func (s *Server) keyedUpdate(ctx context.Context, id, key, tok string, mac []byte, fresh func(tx *ledger.Tx, row *ledger.Person) (*ledger.Answer, error)) (out *ledger.Answer, replayed bool, err error) {
	err = s.store.Update(ctx, id, func(tx *ledger.Tx) error {
		row, a, err := tx.LockPerson(id, key)
		if err != nil {
			return err
		}
		if err := checkToken(row, tok); err != nil {
			return err
		}
		if a != nil {
			out, err = replay(a, mac)
			replayed = err == nil
			return err
		}
		out, err = fresh(tx, row)
		return err
	})
	return out, replayed, err
}

// keyedRequest is the start of a person's keyed release request: the
// person's token, the required Idempotency-Key and the JSON body into v.
// On an error it has answered, and ok is false.
func (s *Server) keyedRequest(w http.ResponseWriter, r *http.Request, id string, v any) (p *personInfo, tok, key string, ok bool) {
	p, tok, err := s.authPerson(r, id, false)
	if err == nil {
		key, err = idempotencyKey(r, true)
	}
	if err == nil {
		err = s.decodeJSON(w, r, v)
	}
	if err != nil {
		s.writeError(w, r, err)
		return nil, "", "", false
	}
	return p, tok, key, true
}

// handleLocate answers one location query with the person's mechanism.
func (s *Server) handleLocate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var req locateRequest
	p, tok, key, ok := s.keyedRequest(w, r, id, &req)
	if !ok {
		return
	}
	pt, t, err := parseLocate(&req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mac := requestMAC(tok, "locate", canonicalLocate(pt, t))
	out, replayed, err := s.keyedUpdate(r.Context(), id, key, tok, mac, func(tx *ledger.Tx, row *ledger.Person) (*ledger.Answer, error) {
		return s.locate(tx, p, row, pt, t, key, mac, requestID(r))
	})
	var body []byte
	if err == nil {
		body = out.Body
	}
	s.writeCharged(w, r, "geoind", err, replayed, out, body)
}

// writeCharged writes the outcome of a request that spends budget kind:
// its error (counting a refusal for an exhausted budget), or body, the
// stored answer out's response (possibly with more fields), marked when it
// is a replay. out was read or written in a transaction that Update or
// Read confirmed durable.
func (s *Server) writeCharged(w http.ResponseWriter, r *http.Request, kind string, err error, replayed bool, out *ledger.Answer, body []byte) {
	if err != nil {
		if errors.Is(err, ledger.ErrBudgetExhausted) {
			s.metrics.exhausted.WithLabelValues(kind).Inc()
		}
		s.writeError(w, r, err)
		return
	}
	if replayed {
		s.metrics.replays.Inc()
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, out.Status, out.ContentType, body)
}

// locate runs one step of the person's mechanism inside the person's
// transaction and stores its charge and answer there.
func (s *Server) locate(tx *ledger.Tx, p *personInfo, row *ledger.Person, pt geo.Point, t time.Time, key string, mac []byte, reqID string) (*ledger.Answer, error) {
	cfg := p.cfg
	now := s.opt.Now()
	if d := t.Sub(now); d > s.opt.TimeWindow || d < -s.opt.TimeWindow {
		side := "after"
		if d < 0 {
			side, d = "before", -d
		}
		return nil, domainErr(errClockWindow, "time",
			"time %s is %s %s the server's clock (%s): this server accepts query times within %v of its clock; send the time of the fix from a synchronised clock",
			t.Format(time.RFC3339Nano), d.Round(time.Second), side, now.UTC().Format(time.RFC3339), s.opt.TimeWindow)
	}
	// The one distance rule of geoind sessions (geoind sanitize applies
	// the same through Session.Query), checked before anything is drawn.
	origin := geo.Point{Lat: cfg.Geoind.Origin.Lat, Lon: cfg.Geoind.Origin.Lon}
	if geoind.CheckOriginDistance(origin, pt) != nil {
		return nil, domainErr(errFarFromOrigin, "lat",
			"the location is %.0f km from this person's public origin (%.4f, %.4f); the tangent plane represents only %g km around it: create the person with geoind.origin near where they are",
			geo.Haversine(pt, origin)/1000, origin.Lat, origin.Lon, geoind.MaxOriginDistance/1000)
	}
	win := windowIndex(p.created, now, cfg.window(), row.GeoWindow)
	base := row.GeoSpent
	if win != row.GeoWindow {
		base = 0
	}
	// A window's session is charged to the person's account by its first
	// answer, before anything is drawn: a new window is a new session, a
	// rate within the account, never a fresh budget.
	charge := 0.0
	if win != row.GeoSession {
		charge = sessionCharge(cfg)
		if err := admit(p, row, api.MechanismGeoind, charge); err != nil {
			return nil, err
		}
	}
	cs := s.sessions.take(p.id, row.Tag, win)
	if cs == nil {
		var run geoind.Run
		if win == row.GeoWindow {
			details, err := tx.GeoindDetails(p.id, win)
			if err != nil {
				return nil, err
			}
			if run, err = loadRun(details, p.id); err != nil {
				return nil, err
			}
		}
		sess, err := geoind.Resume(geoind.State{Version: geoind.StateVersion, Config: cfg.Geoind, Run: run, Spent: run.Spent()}, nil)
		if err != nil {
			return nil, fmt.Errorf("person %s: stored run: %w", p.id, err)
		}
		if got := sess.State().Spent; got != base {
			return nil, fmt.Errorf("person %s: the run of window %d accounts for %v, the ledger total is %v", p.id, win, got, base)
		}
		cs = &cachedSession{tag: row.Tag, win: win, sess: sess}
		if len(run) > 0 {
			cs.last = run[len(run)-1].Time
		}
	}
	if t.Before(cs.last) {
		// The session is unchanged; keep it cached.
		s.sessions.put(p.id, cs)
		return nil, domainErr(errOutOfOrder, "time", "time %s is before this person's previous query in this window (%s); queries must come in time order",
			t.Format(time.RFC3339Nano), cs.last.UTC().Format(time.RFC3339Nano))
	}
	rep, err := cs.sess.Query(pt, t)
	if err != nil {
		s.sessions.put(p.id, cs)
		budget := cfg.Geoind.Params.Epsilon
		var pe *param.Error
		switch {
		case geoind.IsExhausted(err):
			e := &ledger.ExhaustedError{Kind: "geoind", Budget: budget, Spent: base, Window: win}
			if w := cfg.window(); w > 0 {
				e.WindowEnd = p.created.Add(time.Duration(win+1) * w)
			}
			return nil, e
		case errors.As(err, &pe):
			return nil, domainErr(errMechanism, "lat", "%v", err)
		}
		return nil, err
	}
	spent := base + rep.Cost
	if spent != rep.Spent || spent > row.GeoBudget {
		// The manager keeps every run within its budget (Theorem 3); the
		// ledger checks it independently and refuses to release otherwise.
		return nil, fmt.Errorf("person %s: step would take the ledger to %v (session says %v) of %v", p.id, spent, rep.Spent, row.GeoBudget)
	}
	st := cs.sess.State().Run[rep.Step]
	detail, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	seq := row.Seq + 1
	resp := api.LocateResponse{
		Lat: rep.Lat, Lon: rep.Lon, EpsilonCharged: rep.Cost, Spent: spent, Remaining: math.Max(0, row.GeoBudget-spent),
		Budget: row.GeoBudget, Unit: api.UnitGeoind, Window: win, Step: rep.Step, Hard: rep.Hard, Mode: rep.Mode.String(),
		AccuracyM: rep.Accuracy, Time: t, Seq: seq, RequestID: reqID,
		Account: api.AccountState{Charged: charge, Spent: row.Spent + charge, Remaining: math.Max(0, row.Budget-row.Spent-charge),
			Budget: row.Budget, Unit: api.UnitAccount},
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	ans := ledger.Answer{MAC: mac, Status: http.StatusOK, ContentType: "application/json", Body: body}
	tag := newTag()
	c := &ledger.Charge{Person: p.id, Seq: seq, Time: now, Window: win, Amount: rep.Cost, Epsilon: charge, RequestID: reqID, Key: key, Detail: detail, Answer: ans}
	if err := tx.ChargeGeoind(row, c, spent, tag, slack); err != nil {
		return nil, err
	}
	next := &cachedSession{tag: tag, win: win, sess: cs.sess, last: t}
	tx.OnCommit(func() {
		s.sessions.put(p.id, next)
		s.metrics.charged.WithLabelValues("geoind").Add(rep.Cost)
		s.metrics.charges.WithLabelValues("geoind").Inc()
	})
	return &ans, nil
}

// sessionCache keeps each person's mechanism session between queries, keyed
// by the row's tag: an entry is used only if the person's stored tag is
// the one it was saved under, so a rolled-back write (whose tag never
// committed) or another process's write makes it stale, and it is rebuilt
// from the ledger.
type sessionCache struct {
	mu    sync.Mutex
	m     map[string]*cachedSession
	limit int
}

// cachedSession is a person's session in window win under tag, and the
// time of its last query.
type cachedSession struct {
	tag, win int64
	sess     *geoind.Session
	last     time.Time
}

func newSessionCache(limit int) *sessionCache {
	return &sessionCache{m: map[string]*cachedSession{}, limit: limit}
}

// take removes and returns the session saved under tag and window, or nil.
func (c *sessionCache) take(id string, tag, win int64) *cachedSession {
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
	return e
}

func (c *sessionCache) put(id string, e *cachedSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.limit {
		for k := range c.m { // evict an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[id] = e
}

// formatFloat is strconv's shortest exact form.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
