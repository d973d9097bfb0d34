package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/server"
)

// TestPlainTextWarning: plain HTTP on an address other machines can
// reach is warned about, loopback is not (the decision serve makes after
// binding; tests bind loopback only).
func TestPlainTextWarning(t *testing.T) {
	for _, c := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:8080", false}, {"[::1]:8080", false}, {"localhost:8080", false},
		{"0.0.0.0:8080", true}, {"[::]:8080", true}, {"192.168.1.4:443", true},
	} {
		t.Run(c.addr, func(t *testing.T) {
			a, err := net.ResolveTCPAddr("tcp", c.addr)
			if err != nil {
				t.Fatal(err)
			}
			w := server.PlainTextWarning(a)
			if (w != "") != c.warn || c.warn && !strings.Contains(w, "--tls-cert") {
				t.Errorf("warning %q", w)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a server goroutine and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestServeRefusesBadSetup(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "")
	if _, _, err := run(t, "serve", "--data", dir); err == nil || !strings.Contains(err.Error(), "TRACEPRIV_ADMIN_TOKEN") {
		t.Errorf("without an admin token: %v", err)
	}
	// An admin token that cannot hold 128 bits refuses the start.
	for _, weak := range []string{"x", "fifteen-bytes!!", "abcdefghijklmnopqrstuvwxyz", strings.Repeat("ab", 20)} {
		t.Setenv("TRACEPRIV_ADMIN_TOKEN", weak)
		if _, _, err := run(t, "serve", "--data", dir, "--check"); err == nil || !strings.Contains(err.Error(), "128") && !strings.Contains(err.Error(), "not random") {
			t.Errorf("admin token %q: %v, want a refusal", weak, err)
		}
	}
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "an-admin-token-for-the-test-only")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "--data"},
		{[]string{"serve", "--data", dir, "--tls-cert", "c.pem"}, "--tls-key"},
		{[]string{"serve", "--data", dir, "--tls-cert", "nope.pem", "--tls-key", "nope.key"}, "nope.pem"},
		{[]string{"serve", "--data", dir, "--seed", "1"}, "crypto/rand"},
		{[]string{"serve", "--data", dir, "--db", "mysql://x"}, "postgres://"},
		{[]string{"serve", "--data", dir, "--log-format", "xml"}, "--log-format"},
		{[]string{"serve", "--data", dir, "--addr", "127.0.0.1:99999"}, "--addr"},
		{[]string{"serve", "--data", dir, "--time-window", "0.5s"}, "time window"},
		{[]string{"serve", "--data", dir, "--tiles", "tiles.example.org/{z}/{x}/{y}.png"}, "--tiles"},
		{[]string{"serve", "--data", dir, "--tiles", "https://tiles.example.org/{z}/{x}.png"}, "{y}"},
	} {
		// Subtests in turn: the test sets the environment (t.Setenv).
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			if _, _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
			}
		})
	}
}

// TestServeLimitFlags: a limit given as 0 or less (once read as the
// default, or as "refuse every upload") and an address that is not
// HOST:PORT are bad flags, refused before the store opens; the defaults
// pass --check (the control).
func TestServeLimitFlags(t *testing.T) {
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "serve-test-admin-token-0123456789")
	dir := t.TempDir()
	base := []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--check", "--json", "-q"}
	for _, bad := range [][]string{
		{"--burst", "0"}, {"--rate-limit", "0"}, {"--rate-limit", "NaN"}, {"--max-upload", "-1"},
		{"--max-points", "0"}, {"--time-window", "0s"}, {"--addr", "nonsense"},
	} {
		status, body, _ := runErrJSON(t, append(slices.Clone(base), bad...)...)
		if status != 1 || body.Error.Code != cli.CodeInvalidFlag || !strings.Contains(body.Error.Message, bad[0]) {
			t.Errorf("%v: status %d, %+v; want invalid_flag naming %s", bad, status, body, bad[0])
		}
	}
	if status, _, out := runErrJSON(t, base...); status != 0 {
		t.Errorf("the defaults: status %d, %s", status, out)
	}
}

// TestServe runs tracepriv serve on a free loopback port: it says where it
// listens, answers, creates a person, and logs neither token.
func TestServe(t *testing.T) {
	admin := "serve-test-admin-token-0123456789"
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", admin)
	var stdout, stderr syncBuffer
	root := newRootCmd(&stdout, &stderr)
	root.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	// No deadline: how fast serve starts on a busy machine is not what is
	// tested (a serve that never listens fails at go test's -timeout).
	var base string
	for base == "" {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped before listening: %v\nstdout: %q\n%s", err, stdout.String(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	r, err := http.Get(base + "/healthz")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, r)
	}
	r.Body.Close()
	req, _ := http.NewRequest("POST", base+"/v1/people", strings.NewReader(`{"id": "alice", "epsilon_budget": 0.023}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	r, err = http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v %v", err, r)
	}
	var created struct{ Token string }
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	json.Unmarshal(b, &created)
	cancel()
	if err := <-done; err != nil { // a serve that does not stop fails at go test's -timeout
		t.Errorf("serve returned %v after a clean stop", err)
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"msg":"request"`) {
		t.Errorf("no request log lines: %s", logs)
	}
	if created.Token == "" || strings.Contains(logs, created.Token) || strings.Contains(logs, admin) {
		t.Errorf("a token appears in the logs")
	}
}

// TestServeTiles: serve --tiles URL serves a page that draws that tile server (the URL in
// the page) and whose policy allows images from that host and no other; without --tiles the
// page's policy names no other host.
func TestServeTiles(t *testing.T) {
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "serve-tiles-admin-token-0123456789")
	for _, tiles := range []string{"", "http://127.0.0.1:8081/t/{z}/{x}/{y}.png"} {
		var stdout, stderr syncBuffer
		root := newRootCmd(&stdout, &stderr)
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}
		if tiles != "" {
			args = append(args, "--tiles", tiles)
		}
		root.SetArgs(args)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- root.ExecuteContext(ctx) }()
		re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
		var base string
		for base == "" {
			if m := re.FindStringSubmatch(stdout.String()); m != nil {
				base = m[1]
				break
			}
			select {
			case err := <-done:
				t.Fatalf("serve stopped before listening: %v\n%s", err, stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		r, err := http.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(r.Body)
		r.Body.Close()
		csp := r.Header.Get("Content-Security-Policy")
		hosts := regexp.MustCompile(`https?://[^\s;]+`).FindAllString(csp, -1)
		if tiles == "" && len(hosts) != 0 {
			t.Errorf("without --tiles the policy names %v", hosts)
		}
		if tiles != "" && (len(hosts) != 1 || hosts[0] != "http://127.0.0.1:8081" || !strings.Contains(string(page), tiles)) {
			t.Errorf("--tiles %s: the policy names %v; the page carries it: %v", tiles, hosts, strings.Contains(string(page), tiles))
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v after a clean stop", err)
		}
	}
}

// TestServeCheck: serve --check creates and migrates the store, checks it
// and the address, reports, and exits without serving; a second check
// finds what the first left (and nothing more).
func TestServeCheck(t *testing.T) {
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "serve-check-admin-token-0123456789")
	dir := t.TempDir()
	for i := range 2 {
		stdout, _, err := run(t, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--check", "--json")
		if err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
		var c serveCheck
		if err := json.Unmarshal([]byte(stdout), &c); err != nil {
			t.Fatalf("check %d: %v: %s", i, err, stdout)
		}
		if c.Check != "ok" || c.Store != "sqlite" || c.SchemaVersion < 1 || c.People != 0 || c.Charges != 0 ||
			!strings.Contains(c.Integrity, "ok") || !strings.HasPrefix(c.URL, "http://127.0.0.1:") || c.Location != filepath.Join(dir, "tracepriv.db") {
			t.Errorf("check %d: %+v", i, c)
		}
	}
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", "")
	if _, _, err := run(t, "serve", "--data", dir, "--check"); err == nil || !strings.Contains(err.Error(), "TRACEPRIV_ADMIN_TOKEN") {
		t.Errorf("--check without an admin token: %v", err)
	}
}
