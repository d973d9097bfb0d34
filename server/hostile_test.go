package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/server/internal/store"
	"github.com/tracepriv/tracepriv/trace"
)

// upload sends the sample trace to sanitize with a fresh key, on ctx.
func (e *testEnv) upload(ctx context.Context, tok string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/v1/people/s/sanitize?format=plt", bytes.NewReader(sample.PLT))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Idempotency-Key", newKey())
	res, err := e.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}, err
}

// TestSanitizeSlotFreed is the review's second finding: with one sanitize
// worker, an upload whose client leaves while it computes, and an upload
// whose computation panics, each give the slot back: the next upload is
// answered. The panic is a JSON 500 that shows nothing of the panic and
// changes nothing in the store.
func TestSanitizeSlotFreed(t *testing.T) {
	t.Parallel()
	var mode sync.Map // "block" or "panic" for the next release, once
	started := make(chan struct{}, 1)
	// The log goes to a file: writes to it are safe from the server's
	// goroutines.
	logs, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	e := newEnv(t, SQLite, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
		o.SanitizeWorkers = 1
		o.release = func(ctx context.Context, ts []*trace.Trace, opt sanitize.Options) ([]*trace.Trace, *sanitize.Certificate, error) {
			if m, ok := mode.LoadAndDelete("next"); ok {
				switch m {
				case "block": // computes until its client leaves
					started <- struct{}{}
					<-ctx.Done()
					return nil, nil, ctx.Err()
				case "panic":
					panic("sanitize: an invariant failed with the secret 39.98765")
				}
			}
			return sanitize.ReleaseContext(ctx, ts, opt)
		}
	})
	tok := e.createPerson(map[string]any{"account": roomy, "id": "s", "epsilon_budget": 0.02})

	mode.Store("next", "block")
	ctx, leave := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() { _, err := e.upload(ctx, tok); left <- err }()
	<-started
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving client: %v", err)
	}
	if r, err := e.upload(context.Background(), tok); err != nil || r.status != 200 {
		t.Fatalf("the upload after a client left: %v %d %.200s", err, r.status, r.body)
	}

	mode.Store("next", "panic")
	before := e.snapshot()
	r, err := e.upload(context.Background(), tok)
	if err != nil || r.status != http.StatusInternalServerError || r.errCode(t) != api.CodeInternal {
		t.Fatalf("a panicking release: %v %d %s", err, r.status, r.body)
	}
	if strings.Contains(string(r.body), "39.98765") || strings.Contains(string(r.body), "invariant") {
		t.Errorf("the 500 shows the panic: %s", r.body)
	}
	if !equalState(before, e.snapshot()) {
		t.Errorf("a panicking release changed the store")
	}
	if l, _ := os.ReadFile(logs.Name()); !strings.Contains(string(l), "msg=panic") || strings.Contains(string(l), "39.98765") {
		t.Errorf("the log of the panic holds its value (or no panic was logged):\n%s", l)
	}
	if r, err := e.upload(context.Background(), tok); err != nil || r.status != 200 {
		t.Fatalf("the upload after a panic: %v %d %.200s", err, r.status, r.body)
	}
	checkInvariants(t, e.srv.store)
}

// TestReleaseContext: sanitize.ReleaseContext returns the context's error
// and no release when the context ends before or during the release, and
// a release cancelled before its sampling stage draws no noise.
func TestReleaseContext(t *testing.T) {
	t.Parallel()
	traces, err := trace.ReadAll(mustReader(t))
	if err != nil {
		t.Fatal(err)
	}
	prior := mustPrior(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if outs, cert, err := sanitize.ReleaseContext(ctx, traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100}); !errors.Is(err, context.Canceled) || outs != nil || cert != nil {
		t.Errorf("an ended context: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var stages []string
	opt := sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Progress: func(s string) {
		stages = append(stages, s)
		if s == "design" {
			cancel() // the client leaves while the noise is designed
		}
	}}
	outs, cert, err := sanitize.ReleaseContext(ctx, traces, opt)
	if !errors.Is(err, context.Canceled) || outs != nil || cert != nil {
		t.Errorf("a context ended during the release: %v", err)
	}
	for _, s := range stages {
		if s == "sample" {
			t.Errorf("the cancelled release went on to draw its noise (stages %v)", stages)
		}
	}
	outs, cert, err = sanitize.ReleaseContext(context.Background(), traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100})
	if err != nil || len(outs) != 1 || cert == nil {
		t.Errorf("a release to its end: %v", err)
	}
}

func mustReader(t *testing.T) trace.Reader {
	t.Helper()
	rd, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{Name: "sample", UID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

func mustPrior(t *testing.T) *prior.Prior {
	t.Helper()
	p, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTimeWindow is the review's third finding: a query a year ahead of
// the server's clock (or at 9999-12-31) is refused and the person's next
// query at the right time is answered; a retry of an answered query is
// still answered from the ledger after its time has left the window.
func TestTimeWindow(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"account": roomy, "id": "w", "epsilon_budget": 0.05})
		now := e.clock.Now()
		for _, ahead := range []time.Time{now.AddDate(1, 0, 0), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), now.Add(DefaultTimeWindow + time.Second), now.Add(-DefaultTimeWindow - time.Second)} {
			r := e.locate("w", tok, beijing[0], beijing[1], ahead, "")
			if r.status/100 != 4 || r.json(t)["error"].(map[string]any)["field"] != "time" {
				t.Errorf("a query at %v (the clock at %v): %d %s", ahead, now, r.status, r.body)
			}
		}
		key := newKey()
		if r := e.locate("w", tok, beijing[0], beijing[1], now, key); r.status != 200 {
			t.Fatalf("the next query at the clock's time: %d %s", r.status, r.body)
		}
		e.clock.Add(time.Hour)
		if r := e.locate("w", tok, beijing[0], beijing[1], now, key); r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a retry an hour later: %d %s", r.status, r.body)
		}
		if r := e.locate("w", tok, beijing[0], beijing[1], e.clock.Now(), ""); r.status != 200 {
			t.Errorf("a query an hour later: %d %s", r.status, r.body)
		}
	})
}

// TestRequestMACTimes: the request MAC tells apart times that share their
// Unix nanoseconds modulo 2^64 (about 584 years apart).
func TestRequestMACTimes(t *testing.T) {
	t.Parallel()
	p := geo.Point{Lat: beijing[0], Lon: beijing[1]}
	a := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := a.Add(time.Duration(math.MaxInt64)).Add(time.Duration(math.MaxInt64)).Add(2) // a + 2^64 ns
	if uint64(a.UnixNano()) != uint64(b.UnixNano()) {
		t.Fatalf("the times do not collide in UnixNano: %v %v", a, b)
	}
	if bytes.Equal(canonicalLocate(p, a), canonicalLocate(p, b)) {
		t.Errorf("%v and %v have the same canonical request", a, b)
	}
}

// TestStatusTable: statuses come from the domain errors, wrapped or not,
// and never from an error's text: an untyped error that reads like a
// domain error is an internal error.
func TestStatusTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	r := httpRequest()
	for i, row := range statusTable {
		t.Run(fmt.Sprintf("%d-%s", i, row.code), func(t *testing.T) {
			for _, err := range []error{row.err, fmt.Errorf("context: %w", row.err), domainErr(row.err, "", "words")} {
				if ae := e.srv.toAPIError(r, err); ae.Status != row.status || ae.Code != row.code {
					t.Errorf("%v: %d %s, want %d %s", err, ae.Status, ae.Code, row.status, row.code)
				}
			}
		})
	}
	for _, text := range []string{"geoind: query time 2026-01-01T00:00:00Z before the previous query 2026-01-01T00:01:00Z",
		"geoind: privacy budget exhausted", "EOF", store.ErrNotDurable.Error()} {
		if ae := e.srv.toAPIError(r, errors.New(text)); ae.Status != http.StatusInternalServerError {
			t.Errorf("untyped %q: %d, want 500", text, ae.Status)
		}
	}
	ae := e.srv.toAPIError(r, &store.ExhaustedError{Kind: "geoind", Budget: 1, Spent: 0.9999, Window: 3, WindowEnd: e.clock.Now().Add(90 * time.Second)})
	if ae.Status != 429 || ae.RetryAfter != 90*time.Second || ae.Details["window"] != int64(3) {
		t.Errorf("exhausted: %+v", ae)
	}
}

func httpRequest() *http.Request {
	r, _ := http.NewRequest("GET", "/", nil)
	return r
}

// TestSamePathForEveryone: a known person with a wrong token and an
// unknown person take the same path: with the store down, both get the
// same 503 (a cached known person would be refused at once); and a token
// changed in the store stops working at once, in every process.
func TestSamePathForEveryone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	alice := e.createPerson(map[string]any{"account": roomy, "id": "alice", "epsilon_budget": 0.05})
	if r := e.do("GET", "/v1/people/alice/ledger", alice, nil, nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	// Another process rotates alice's token.
	err := e.srv.store.Update(context.Background(), "alice", func(tx *store.Tx) error {
		return tx.SetTokenHash("alice", tokenHash(newToken()))
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/people/alice/ledger", alice, nil, nil); r.status != http.StatusForbidden {
		t.Errorf("a token replaced in the store still works: %d", r.status)
	}
	e.srv.store.Close()
	known := e.do("GET", "/v1/people/alice/ledger", "tpk_wrong", nil, nil)
	unknown := e.do("GET", "/v1/people/nobody/ledger", "tpk_wrong", nil, nil)
	strip := func(r response) string {
		return fmt.Sprint(r.status, " ", strings.Split(string(r.body), `"request_id"`)[0])
	}
	if strip(known) != strip(unknown) {
		t.Errorf("known person, wrong token: %s\nunknown person: %s", strip(known), strip(unknown))
	}
}

// TestRotateToken: POST /v1/people/{id}/token (admin) returns a new token;
// the old one is refused everywhere, the new one works.
func TestRotateToken(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		old := e.createPerson(map[string]any{"account": roomy, "id": "alice", "epsilon_budget": 0.05})
		bob := e.createPerson(map[string]any{"account": roomy, "id": "bob", "epsilon_budget": 0.05})
		for _, tk := range []string{"", old, bob} {
			if r := e.do("POST", "/v1/people/alice/token", tk, nil, nil); r.status != 401 && r.status != 403 {
				t.Errorf("rotation with token %q: %d", tk, r.status)
			}
		}
		if r := e.do("POST", "/v1/people/nobody/token", testAdmin, nil, nil); r.status != 404 {
			t.Errorf("rotating an unknown person: %d %s", r.status, r.body)
		}
		before := e.snapshot()
		r := e.do("POST", "/v1/people/alice/token", testAdmin, nil, nil)
		var tr api.TokenResponse
		if r.status != 200 || json.Unmarshal(r.body, &tr) != nil || tr.Token == "" || tr.Token == old || tr.ID != "alice" {
			t.Fatalf("rotation: %d %s", r.status, r.body)
		}
		if equalState(before, e.snapshot()) {
			t.Errorf("the rotation changed nothing in the store")
		}
		now := e.clock.Now()
		for _, r := range []response{e.locate("alice", old, beijing[0], beijing[1], now, ""), e.do("GET", "/v1/people/alice/ledger", old, nil, nil),
			e.do("POST", "/v1/people/alice/sanitize?format=plt", old, sample.PLT, nil)} {
			if r.status != 401 && r.status != 403 {
				t.Errorf("the old token after the rotation: %d %.200s", r.status, r.body)
			}
		}
		if r := e.locate("alice", tr.Token, beijing[0], beijing[1], now, ""); r.status != 200 {
			t.Errorf("the new token: %d %s", r.status, r.body)
		}
		if r := e.locate("bob", bob, beijing[0], beijing[1], now, ""); r.status != 200 {
			t.Errorf("bob after alice's rotation: %d %s", r.status, r.body)
		}
	})
}

// TestAdminTokenEntropy: New refuses admin tokens that cannot hold 128
// bits, and accepts random ones.
func TestAdminTokenEntropy(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"x", "fifteen-bytes!!", "0123456789abcdef", "abcdefghijklmnopqrstuvwxyz", strings.Repeat("ab", 32), "Password1!Password1!"} {
		t.Run("refused/"+tok, func(t *testing.T) {
			t.Parallel()
			o := Options{AdminToken: tok, DataDir: t.TempDir()}
			if s, err := New(context.Background(), o); err == nil {
				s.Close()
				t.Errorf("admin token %q accepted", tok)
			}
		})
	}
	for i, tok := range []string{newToken(), strings.TrimPrefix(newToken(), tokenPrefix)[:22], fmt.Sprintf("%x", tokenHash("seed"))[:32]} {
		t.Run(fmt.Sprint("accepted/", []string{"person-token", "22-base64", "32-hex"}[i]), func(t *testing.T) {
			t.Parallel()
			if err := CheckAdminToken(tok); err != nil {
				t.Errorf("admin token %q refused: %v", tok, err)
			}
		})
	}
}

// fakeListener has an address and accepts nothing.
type fakeListener struct{ addr net.Addr }

func (l fakeListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (l fakeListener) Close() error              { return nil }
func (l fakeListener) Addr() net.Addr            { return l.addr }

// TestPlainHTTPWarning: Serve without TLS on an address other machines
// can reach logs a warning; on loopback it does not. (No socket is bound:
// the listener is a fake with the address.)
func TestPlainHTTPWarning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ip   string
		warn bool
	}{{"0.0.0.0", true}, {"10.1.2.3", true}, {"127.0.0.1", false}, {"::1", false}} {
		t.Run(c.ip, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			e := newEnv(t, SQLite, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			e.srv.Serve(context.Background(), fakeListener{&net.TCPAddr{IP: net.ParseIP(c.ip), Port: 8080}}, "", "")
			if got := strings.Contains(logs.String(), "WARNING: serving plain HTTP"); got != c.warn {
				t.Errorf("warned %v: %s", got, logs.String())
			}
		})
	}
}

// TestStoreHoldsNoTrueLocation: after a location query and a trace upload
// with distinctive coordinates, no file of the store (SQLite's database,
// WAL and shared memory; the data directory of the test binary's
// PostgreSQL cluster, after a checkpoint: every test's schema, this one's
// among them) and no stored value holds any of them at full precision, as
// text or as a float64 in either byte order. (Rounded forms are not
// searched: the released points lie within metres of the true ones often
// enough that 6 or 7 decimals would match by chance.) The released (noisy)
// location is found the same way: the search sees what is stored.
func TestStoreHoldsNoTrueLocation(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		var cluster *pgtest.Cluster
		e := newEnv(t, d, func(o *Options) {
			if d != Postgres {
				return
			}
			cluster = pgtest.Shared(t)
			var err error
			if o.DB, err = cluster.NewSchema("loc"); err != nil {
				t.Fatal(err)
			}
		})
		tok := e.createPerson(map[string]any{"account": roomy, "id": "s", "epsilon_budget": 0.05})
		truth := []float64{39.987654321098, 116.312345678901}
		r := e.locate("s", tok, truth[0], truth[1], e.clock.Now(), "")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var reported api.LocateResponse
		json.Unmarshal(r.body, &reported)
		var csv strings.Builder
		csv.WriteString("uid,time,lat,lon\n")
		for i := range 40 {
			lat, lon := 39.9612345678+float64(i)*1.37e-4, 116.3412345678+float64(i)*2.91e-4
			truth = append(truth, lat, lon)
			fmt.Fprintf(&csv, "s,2024-03-01T10:%02d:00Z,%s,%s\n", i, strconv.FormatFloat(lat, 'f', -1, 64), strconv.FormatFloat(lon, 'f', -1, 64))
		}
		if r := e.do("POST", "/v1/people/s/sanitize?format=csv", tok, csv.String(), nil); r.status != 200 {
			t.Fatalf("sanitize: %d %.300s", r.status, r.body)
		}
		// Each form once: the 'f' and 'g' texts are the same for these
		// values, and every needle is a pass over every file.
		var needles [][]byte
		seen := map[string]bool{}
		for _, v := range truth {
			for _, s := range []string{strconv.FormatFloat(v, 'f', -1, 64), strconv.FormatFloat(v, 'g', -1, 64),
				string(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))), string(binary.BigEndian.AppendUint64(nil, math.Float64bits(v)))} {
				if !seen[s] {
					seen[s] = true
					needles = append(needles, []byte(s))
				}
			}
		}
		var files []string
		if d == SQLite {
			m, _ := filepath.Glob(filepath.Join(e.srv.store.Location() + "*"))
			files = m
		} else {
			if err := cluster.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			filepath.WalkDir(cluster.DataDir(), func(p string, de fs.DirEntry, err error) error {
				if err == nil && de.Type().IsRegular() {
					files = append(files, p)
				}
				return nil
			})
		}
		control := []byte(strconv.FormatFloat(reported.Lat, 'g', -1, 64))
		foundControl := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed by the cluster since the walk (other tests run)
			} else if err != nil {
				t.Fatal(err)
			}
			for _, n := range findAny(b, needles) {
				t.Errorf("%s holds a true coordinate: %q", f, n)
			}
			foundControl = foundControl || bytes.Contains(b, control)
		}
		if !foundControl {
			t.Errorf("the released latitude %s is in none of the %d files: the search does not see the store", control, len(files))
		}
		// PostgreSQL compresses large values on disk: read every stored
		// value back too.
		var stored bytes.Buffer
		e.srv.store.Scan(context.Background(), func(v *store.View) error {
			people, err := v.People()
			for _, p := range people {
				fmt.Fprint(&stored, p.Config)
				cs, _ := v.Charges(p.ID, 0, 1<<40, true)
				for _, c := range cs {
					stored.Write(c.Detail)
					stored.Write(c.Answer.Body)
				}
			}
			return err
		})
		for _, n := range findAny(stored.Bytes(), needles) {
			t.Errorf("a stored value holds a true coordinate: %q", n)
		}
		if !bytes.Contains(stored.Bytes(), control) {
			t.Errorf("the released latitude is in no stored value")
		}
	})
}

// findAny returns the needles (each at least 8 bytes long) that occur in
// b, in one pass over b instead of one per needle (the cluster's files
// are tens of MB, the needles hundreds): each 8-byte window of b is
// looked up among the needles' first 8 bytes, behind a 64-kbit filter.
func findAny(b []byte, needles [][]byte) [][]byte {
	hash := func(w uint64) uint64 { return (w * 0x9e3779b97f4a7c15) >> 48 }
	var filter [1 << 16 / 64]uint64
	first := map[uint64][]int{}
	for i, n := range needles {
		if len(n) < 8 {
			panic(fmt.Sprintf("findAny: needle %q shorter than 8 bytes", n))
		}
		w := binary.LittleEndian.Uint64(n)
		filter[hash(w)/64] |= 1 << (hash(w) % 64)
		first[w] = append(first[w], i)
	}
	found := make([]bool, len(needles))
	for i := 0; i+8 <= len(b); i++ {
		w := binary.LittleEndian.Uint64(b[i:])
		if h := hash(w); filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, j := range first[w] {
			found[j] = found[j] || bytes.HasPrefix(b[i:], needles[j])
		}
	}
	var out [][]byte
	for j, f := range found {
		if f {
			out = append(out, needles[j])
		}
	}
	return out
}

// TestFindAny: findAny finds what bytes.Contains finds, needle by needle,
// on random bytes with needles planted at the ends, overlapping, sharing
// their first 8 bytes, and absent.
func TestFindAny(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		b := make([]byte, 64+rng.IntN(400))
		for i := range b {
			b[i] = byte(rng.IntN(4)) // a small alphabet: many near misses
		}
		var needles [][]byte
		for range 1 + rng.IntN(12) {
			n := 8 + rng.IntN(10)
			switch rng.IntN(4) {
			case 0: // absent, most likely
				nd := make([]byte, n)
				for i := range nd {
					nd[i] = byte(rng.IntN(4))
				}
				needles = append(needles, nd)
			case 1: // at either end
				if rng.IntN(2) == 0 {
					needles = append(needles, bytes.Clone(b[:n]))
				} else {
					needles = append(needles, bytes.Clone(b[len(b)-n:]))
				}
			case 2: // anywhere
				i := rng.IntN(len(b) - n)
				needles = append(needles, bytes.Clone(b[i:i+n]))
			case 3: // a found needle's first 8 bytes, then a change
				i := rng.IntN(len(b) - n)
				nd := bytes.Clone(b[i : i+n])
				nd[n-1] ^= 1
				needles = append(needles, nd)
			}
		}
		var want [][]byte
		for _, n := range needles {
			if bytes.Contains(b, n) {
				want = append(want, n)
			}
		}
		if got := findAny(b, needles); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d: found %v, bytes.Contains finds %v", trial, got, want)
		}
	}
}

//go:noinline
func stackOf(lat, lon float64) []byte { return debug.Stack() }

// TestStackText: the stack trace of a panic is logged without the
// argument words of its frames (a location's float bits among them).
func TestStackText(t *testing.T) {
	t.Parallel()
	lat := 39.98765
	raw := stackOf(lat, 116.3)
	got := stackText(raw)
	if !strings.Contains(got, "stackOf(...)") || !strings.Contains(got, "hostile_test.go") {
		t.Errorf("the frames are not kept:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if !strings.HasPrefix(l, "\t") && strings.Contains(l, "0x") {
			t.Errorf("argument words remain in %q (from\n%s)", l, raw)
		}
	}
}
