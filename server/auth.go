package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// tokenPrefix marks person tokens, so that a leaked one is recognisable.
const tokenPrefix = "tpk_"

// newToken returns a fresh person token: 256 random bits, base64url.
func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("server: crypto/rand failed: " + err.Error())
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// tokenHash is what the store keeps of a token: SHA-256. A token has 256
// random bits, so a fast unsalted hash cannot be inverted by search; the
// hash authenticates without the store holding anything that would.
func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// requestMAC binds an idempotency key to the request it was first used
// with: HMAC-SHA256 under the person's token of the operation and its
// canonical body. Keyed by the token (never stored) so that the store
// does not hold an unkeyed hash of a location, which could be inverted by
// trying every position.
func requestMAC(token, op string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(op))
	m.Write([]byte{0})
	m.Write(body)
	return m.Sum(nil)
}

// bearer returns the bearer token of a request.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// isAdmin reports whether the request carries the admin token (constant
// time over the hashes).
func (s *Server) isAdmin(tok string) bool {
	return subtle.ConstantTimeCompare(tokenHash(tok), s.adminMAC) == 1
}

// clientAddr is the client's address without the port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// authFailure counts a failed authentication against the client's address
// and returns the error to send: 401/403, or 429 when the address keeps
// failing.
func (s *Server) authFailure(r *http.Request, e *apiError) *apiError {
	if ok, wait := s.failures.allow("addr:" + clientAddr(r)); !ok {
		e = errf(http.StatusTooManyRequests, CodeRateLimited, "too many failed authentications from this address; retry later")
		e.RetryAfter = wait
	}
	s.metrics.authFailures.Inc()
	return e
}

// requireAdmin checks the admin token and the admin rate limit.
func (s *Server) requireAdmin(r *http.Request) error {
	tok, ok := bearer(r)
	if !ok {
		return s.authFailure(r, errf(http.StatusUnauthorized, CodeUnauthorized, "missing bearer token (Authorization: Bearer <admin token>)"))
	}
	if !s.isAdmin(tok) {
		return s.authFailure(r, errf(http.StatusForbidden, CodeForbidden, "this operation needs the admin token"))
	}
	return s.rateLimit("admin")
}

// access is what a request may do with a person.
type access int

const (
	accessPerson access = iota // the person's own token
	accessAdmin                // the admin token (read only)
)

// authPerson authenticates a request for person id: the person's own token
// (or, when adminOK, the admin token). Every failure for an existing
// person, an unknown person or a malformed id is the same 403, so a token
// learns nothing about other people. It returns the person and the token.
func (s *Server) authPerson(r *http.Request, id string, adminOK bool) (*personInfo, string, access, error) {
	tok, ok := bearer(r)
	if !ok {
		return nil, "", 0, s.authFailure(r, errf(http.StatusUnauthorized, CodeUnauthorized, "missing bearer token (Authorization: Bearer <the person's token>)"))
	}
	denied := errf(http.StatusForbidden, CodeForbidden, "this token does not grant access to this person")
	if adminOK && s.isAdmin(tok) {
		p, err := s.lookupPerson(r.Context(), id)
		if err != nil {
			return nil, "", 0, err
		}
		if p == nil {
			return nil, "", 0, errf(http.StatusNotFound, CodeNotFound, "no person %q", id)
		}
		return p, tok, accessAdmin, s.rateLimit("admin")
	}
	var p *personInfo
	if validID(id) == nil {
		var err error
		if p, err = s.lookupPerson(r.Context(), id); err != nil {
			return nil, "", 0, err
		}
	}
	want := dummyHash[:]
	if p != nil {
		want = p.tokenHash
	}
	if subtle.ConstantTimeCompare(tokenHash(tok), want) != 1 || p == nil {
		return nil, "", 0, s.authFailure(r, denied)
	}
	return p, tok, accessPerson, s.rateLimit("person:" + id)
}

// dummyHash is compared against when the person does not exist, so that
// the work done does not say whether they do.
var dummyHash = sha256.Sum256([]byte("tracepriv: no such person"))

// rateLimit applies the per-token limit.
func (s *Server) rateLimit(key string) error {
	if ok, wait := s.limits.allow(key); !ok {
		s.metrics.rateLimited.Inc()
		e := errf(http.StatusTooManyRequests, CodeRateLimited, "rate limit of %g requests per second (burst %d) exceeded; retry after the Retry-After delay", s.opt.RateLimit, s.opt.Burst)
		e.RetryAfter = wait
		return e
	}
	return nil
}

// personInfo is what never changes about a person once created: the
// token hash, the configuration and the creation time. It is cached.
type personInfo struct {
	id        string
	tokenHash []byte
	cfg       *personConfig
	created   time.Time
}

type personCache struct {
	mu sync.RWMutex
	m  map[string]*personInfo
}

func newPersonCache() *personCache { return &personCache{m: map[string]*personInfo{}} }

// lookupPerson returns the person (nil if there is none), from the cache
// or the store.
func (s *Server) lookupPerson(ctx context.Context, id string) (*personInfo, error) {
	s.people.mu.RLock()
	p := s.people.m[id]
	s.people.mu.RUnlock()
	if p != nil {
		return p, nil
	}
	var (
		hash    []byte
		cfgJSON string
		created int64
	)
	err := s.store.View(ctx, func(q Querier) error {
		return q.QueryRow(`SELECT token_hash, config, created_at FROM people WHERE id = ?`, id).Scan(&hash, &cfgJSON, &created)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := decodePersonConfig(cfgJSON)
	if err != nil {
		return nil, err
	}
	p = &personInfo{id: id, tokenHash: hash, cfg: cfg, created: time.Unix(0, created).UTC()}
	s.people.mu.Lock()
	if len(s.people.m) > 1_000_000 {
		clear(s.people.m)
	}
	s.people.m[id] = p
	s.people.mu.Unlock()
	return p, nil
}
