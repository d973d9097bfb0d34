package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
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
		e = errf(http.StatusTooManyRequests, api.CodeRateLimited, "too many failed authentications from this address; retry later")
		e.RetryAfter = wait
	}
	s.metrics.authFailures.Inc()
	return e
}

// requireAdmin checks the admin token and the admin rate limit.
func (s *Server) requireAdmin(r *http.Request) error {
	tok, ok := bearer(r)
	if !ok {
		return s.authFailure(r, errf(http.StatusUnauthorized, api.CodeUnauthorized, "missing bearer token (Authorization: Bearer <admin token>)"))
	}
	if !s.isAdmin(tok) {
		return s.authFailure(r, errf(http.StatusForbidden, api.CodeForbidden, "this operation needs the admin token"))
	}
	return s.rateLimit("admin")
}

// denied is the answer to every failed authentication of a person.
func denied() *apiError {
	return errf(http.StatusForbidden, api.CodeForbidden, "this token does not grant access to this person")
}

// authPerson authenticates a request for person id: the person's own token
// (or, when adminOK, the admin token). It returns the person, as the store
// has them now, and the token.
//
// Whether the person exists does not show, in the answer or in its time:
// an existing person with a wrong token, an unknown person and a malformed
// id take the same path, with the same calls in the same order (the
// deterministic TestAuthSameSteps checks them, TestPersonLookupConstantTime
// times them): one store statement that returns one row of the same size for
// any id (store.Store.Credential: the token hash, or a dummy one), one
// SHA-256 of the token and constant-time comparisons, and the same 403,
// or the same 429 when their address keeps failing. Only a request whose
// token is right reads the rest of the person (configuration, budgets). The
// token's hash is read from the store on every request, so a rotated token
// stops working at once, in every process sharing the store.
func (s *Server) authPerson(r *http.Request, id string, adminOK bool) (*personInfo, string, error) {
	tok, ok := bearer(r)
	if !ok {
		return nil, "", s.authFailure(r, errf(http.StatusUnauthorized, api.CodeUnauthorized, "missing bearer token (Authorization: Bearer <the person's token>)"))
	}
	s.authStep("hash")
	h := tokenHash(tok)
	if adminOK {
		s.authStep("admin")
		if subtle.ConstantTimeCompare(h, s.adminMAC) == 1 {
			p, err := s.lookupPerson(r.Context(), id)
			if errors.Is(err, store.ErrNoPerson) {
				return nil, "", domainErr(store.ErrNoPerson, "", "no person %q", truncate(id, 64))
			}
			if err != nil {
				return nil, "", err
			}
			return p, tok, s.rateLimit("admin")
		}
	}
	s.authStep("credential")
	c, err := s.store.Credential(r.Context(), id)
	if err != nil {
		return nil, "", err
	}
	s.authStep("compare")
	exists := 0
	if c.Exists {
		exists = 1
	}
	if subtle.ConstantTimeCompare(h, c.TokenHash)&exists != 1 {
		s.authStep("deny")
		return nil, "", s.authFailure(r, denied())
	}
	// The token is right: now read the person. A person deleted or given a
	// new token between the two reads is refused as any wrong token is.
	p, err := s.lookupPerson(r.Context(), id)
	if errors.Is(err, store.ErrNoPerson) || err == nil && subtle.ConstantTimeCompare(h, p.tokenHash) != 1 {
		return nil, "", s.authFailure(r, denied())
	}
	if err != nil {
		return nil, "", err
	}
	return p, tok, s.rateLimit("person:" + id)
}

// authStep tells the test's probe (Server.authProbe, nil outside tests)
// which step authentication takes.
func (s *Server) authStep(step string) {
	if s.authProbe != nil {
		s.authProbe(step)
	}
}

// rateLimit applies the per-token limit.
func (s *Server) rateLimit(key string) error {
	if ok, wait := s.limits.allow(key); !ok {
		s.metrics.rateLimited.Inc()
		e := errf(http.StatusTooManyRequests, api.CodeRateLimited, "rate limit of %g requests per second (burst %d) exceeded; retry after the Retry-After delay", s.opt.RateLimit, s.opt.Burst)
		e.RetryAfter = wait
		return e
	}
	return nil
}

// personInfo is a person as authentication found them: the token hash
// read from the store, and what never changes once a person is created,
// the configuration and the creation time.
type personInfo struct {
	id        string
	tokenHash []byte
	cfg       *personConfig
	created   time.Time
}

// configCache keeps decoded configurations, which never change: a
// person's configuration is decoded once per process.
type configCache struct {
	mu sync.RWMutex
	m  map[string]*cachedConfig
}

type cachedConfig struct {
	created time.Time
	raw     string
	cfg     *personConfig
}

func newConfigCache() *configCache { return &configCache{m: map[string]*cachedConfig{}} }

// lookupPerson reads the person from the store (store.ErrNoPerson if
// there is none): only once the token is known to be right, or for the
// admin (see authPerson).
func (s *Server) lookupPerson(ctx context.Context, id string) (*personInfo, error) {
	s.authStep("lookup")
	p, err := s.store.Lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	s.configs.mu.RLock()
	c := s.configs.m[id]
	s.configs.mu.RUnlock()
	if c == nil || !c.created.Equal(p.Created) || c.raw != p.Config {
		cfg, err := decodePersonConfig(p.Config)
		if err != nil {
			return nil, err
		}
		c = &cachedConfig{created: p.Created, raw: p.Config, cfg: cfg}
		s.configs.mu.Lock()
		if len(s.configs.m) > 1_000_000 {
			clear(s.configs.m)
		}
		s.configs.m[id] = c
		s.configs.mu.Unlock()
	}
	return &personInfo{id: id, tokenHash: p.TokenHash, cfg: c.cfg, created: p.Created}, nil
}
