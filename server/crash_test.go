package server

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/server/internal/store"
)

// serveEnv, set to "1" in a process's environment, makes this test binary
// a server instead of a test run (TestMain calls serveMain): the crash test
// and the load benchmark start their server as a separate process they can
// SIGKILL, os/exec's pattern (a test re-running its own binary), so no
// compiler is needed at test time.
const serveEnv = "TRACEPRIV_SERVER_TEST_SERVE"

// killAfterChargeEnv, set to "1", makes the server process SIGKILL itself
// after a charge committed and before its answer is written.
const killAfterChargeEnv = "TRACEPRIV_SERVER_TEST_KILL_AFTER_CHARGE"

// serveMain is the server process: what "tracepriv serve" runs (New, a
// loopback listener, Serve until SIGINT or SIGTERM, then Close), with the
// command's flags that the tests use. The admin token comes from
// TRACEPRIV_ADMIN_TOKEN, as for the command. It returns the exit code.
func serveMain(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	data := fs.String("data", "", "data directory (SQLite)")
	db := fs.String("db", "", "PostgreSQL URL")
	rate := fs.Float64("rate-limit", DefaultRateLimit, "requests per second per token")
	burst := fs.Int("burst", DefaultBurst, "burst per token")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "serve: --log-level %q: %v\n", *logLevel, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt := Options{
		DataDir: *data, DB: *db, AdminToken: os.Getenv("TRACEPRIV_ADMIN_TOKEN"), RateLimit: *rate, Burst: *burst,
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
	if os.Getenv(killAfterChargeEnv) == "1" {
		// SIGKILL between a charge's durable commit and its answer.
		opt.afterCharge = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	}
	srv, err := New(ctx, opt)
	if err != nil {
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		return 1
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "serve: --addr %s: %v\n", *addr, err)
		return 1
	}
	if err := srv.Serve(ctx, ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		return 1
	}
	return 0
}

// freePort returns a loopback port that was free a moment ago, below the
// kernel's ephemeral range (ip_local_port_range): no listener on port 0
// and no outgoing connection is given such a port, so between a SIGKILL
// and the restart nothing else takes it (not the load's own connections,
// not another test's server), and the crash test runs in parallel with the
// others. A port is handed out once per test binary.
func freePort(t testing.TB) int {
	t.Helper()
	low := 32768 // Linux's default range starts here
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				low = n
			}
		}
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := 10000 + rand.IntN(low-10000)
		if portsUsed[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // taken
		}
		ln.Close()
		portsUsed[p] = true
		return p
	}
	t.Fatalf("no free loopback port between 10000 and %d (the ephemeral range's start)", low)
	return 0
}

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{}
)

// process is one run of the server process.
type process struct {
	cmd *exec.Cmd
}

// startServe starts this test binary as a server process (serveMain) with
// the given flags and extra environment (the process's own: tests that set
// it run in parallel with others that start servers).
func startServe(t testing.TB, args, env []string, logf *os.File) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--log-level", "warn"}, args...)...)
	cmd.Env = append(append(os.Environ(), serveEnv+"=1", "TRACEPRIV_ADMIN_TOKEN="+testAdmin), env...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &process{cmd: cmd}
}

// waitHealthy polls /healthz until the server answers, or the server exits,
// or the test binary's deadline (go test -timeout) is a minute away: how
// fast a server starts on a busy machine is not what the tests check, and a
// fixed 60 s could run out under load.
func waitHealthy(t testing.TB, base string, p *process) {
	t.Helper()
	c := &http.Client{Timeout: time.Second}
	var deadline time.Time // zero: no deadline
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			deadline = d.Add(-min(time.Until(d)/10, time.Minute))
		}
	}
	for deadline.IsZero() || time.Now().Before(deadline) {
		if r, err := c.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		if zombie(p.cmd.Process.Pid) {
			p.cmd.Wait()
			t.Fatalf("server exited before it was healthy: %v", p.cmd.ProcessState)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("server at %s not healthy by the test deadline (go test -timeout)", base)
}

// zombie reports whether the child pid has exited and awaits its reaping
// (Linux /proc: state Z). Nothing reaps a server process until the test
// kills or stops it, so its ProcessState stays nil after an early exit.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// served is a server process on a loopback port over a store of one kind,
// which a test can kill and start again on the same store.
type served struct {
	base, dir, dbURL string
	args             []string
	env              []string // the process's extra environment, for each start
	logf             *os.File
	p                *process
}

// launch starts a server process (serveMain) over a fresh store of kind d
// (SQLite in a temporary directory, or a new database of the test
// cluster) with extra flags, and waits until it is healthy. The process
// is killed at the end of the test if it still runs.
func launch(t testing.TB, d Dialect, extra ...string) *served {
	t.Helper()
	return launchEnv(t, d, nil, extra...)
}

// launchEnv is launch with env added to the process's environment.
func launchEnv(t testing.TB, d Dialect, env []string, extra ...string) *served {
	t.Helper()
	s := &served{dir: t.TempDir(), env: env}
	port := freePort(t)
	s.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	s.args = append([]string{"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--data", s.dir, "--rate-limit", "1000000", "--burst", "1000000"}, extra...)
	if d == Postgres {
		s.dbURL = postgresURL(t)
		s.args = append(s.args, "--db", s.dbURL)
	}
	var err error
	if s.logf, err = os.Create(filepath.Join(s.dir, "serve.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.p != nil && s.p.cmd.ProcessState == nil {
			s.kill()
		}
		s.logf.Close()
	})
	s.start(t)
	return s
}

// start starts the process and waits until it is healthy.
func (s *served) start(t testing.TB) {
	t.Helper()
	s.p = startServe(t, s.args, s.env, s.logf)
	waitHealthy(t, s.base, s.p)
}

// kill sends SIGKILL and reaps the process.
func (s *served) kill() {
	s.p.cmd.Process.Signal(os.Kill)
	s.p.cmd.Wait()
}

// stop stops the process gracefully (SIGINT: it finishes what is queued).
func (s *served) stop() {
	s.p.cmd.Process.Signal(os.Interrupt)
	s.p.cmd.Wait()
}

// crashKills is the number of SIGKILLs per store; TRACEPRIV_CRASH_KILLS
// raises it (the benchmark run uses 10).
func crashKills() int {
	if n, err := strconv.Atoi(os.Getenv("TRACEPRIV_CRASH_KILLS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// TestCrash starts the service as a process of its own (this test binary
// re-run as a server, serveMain, running New and Serve as tracepriv serve
// does), drives it with
// concurrent clients that retry (same key, same body) through crashes,
// kills it with SIGKILL repeatedly under load and restarts it, then proves
// from the clients' records and the store: every answer a client received
// has its committed charge with the very same stored answer (no answer
// without a charge, no committed charge lost); no person is beyond their
// cap; the ledger's sums and the mechanism's own accounting agree; the
// database passes its integrity check.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	// In parallel with the other tests and both stores at once: its server's
	// port is below the ephemeral range (freePort), so nothing else takes it
	// between a SIGKILL and the restart.
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		kills := crashKills()
		srv := launch(t, d)
		base := srv.base
		people := createPeople(t, base, testAdmin, 60, "c", func(i int) map[string]any {
			if i%2 == 0 { // spent within the run: the cap is reached under crashes
				return map[string]any{"account": roomy, "epsilon_budget": 0.02, "geoind": map[string]any{"rate": 0.02 / 25}}
			}
			return map[string]any{"account": roomy, "epsilon_budget": 1.0, "geoind": map[string]any{"rate": 1e-3, "mechanism": "im"}}
		})

		capped := 30 // the people with even numbers
		ctx, stop := context.WithCancel(context.Background())
		var exhausted atomic.Int64
		resc := make(chan *loadResult, 1)
		go func() {
			resc <- runLoad(ctx, loadConfig{base: base, clients: 24, people: people, dur: time.Hour, retry: true, exhausted: &exhausted})
		}()
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		var restarts []time.Duration
		for k := 0; k < kills; k++ {
			time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
			srv.kill()
			t0 := time.Now()
			srv.start(t)
			restarts = append(restarts, time.Since(t0))
		}
		// The load goes on until every capped person has reached their cap,
		// however long that takes on this machine (the test's timeout is
		// the guard).
		for exhausted.Load() < int64(capped) {
			select {
			case res := <-resc:
				t.Fatalf("the load stopped before every cap was reached: %v", res)
			case <-time.After(20 * time.Millisecond):
			}
		}
		stop()
		res := <-resc
		// One last SIGKILL, then the store is checked as the crash left it.
		srv.kill()

		st, err := store.Open(context.Background(), srv.dir, srv.dbURL, store.Options{})
		if err != nil {
			t.Fatalf("reopening the store after the crashes: %v", err)
		}
		defer st.Close()
		rep := checkInvariants(t, st)
		stored := map[string][]byte{}
		err = st.Scan(context.Background(), func(v *store.View) error {
			for _, p := range people {
				charges, err := v.Charges(p.id, 0, 1<<40, true)
				if err != nil {
					return err
				}
				for _, c := range charges {
					stored[p.id+"\x00"+c.Key] = c.Answer.Body
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		uncharged, differ := 0, 0
		for _, a := range res.answers {
			b, ok := stored[a.person+"\x00"+a.key]
			switch {
			case !ok:
				uncharged++
			case string(b) != string(a.body):
				differ++
			}
		}
		t.Logf("%s: %d SIGKILLs (restart to healthy: %v); clients: %v", d, kills, restarts, res)
		t.Logf("%s: store: %d people, %d charges, %d answers received, %d charged without the answer reaching a client (a crash in between), %s",
			d, rep.People, rep.Charges, len(res.answers), rep.Charges-len(res.answers), rep.Integrity)
		if uncharged != 0 {
			t.Errorf("%d answers reached a client without a committed charge", uncharged)
		}
		if differ != 0 {
			t.Errorf("%d answers differ from the stored answer of their key", differ)
		}
		if res.errors != 0 {
			t.Errorf("%d client errors (after retries): %v", res.errors, res.errorSamples)
		}
		if rep.Charges < len(res.answers) {
			t.Errorf("lost committed charges: %d charges for %d answers", rep.Charges, len(res.answers))
		}
		if res.exhausted != int64(capped) {
			t.Errorf("%d people reached their cap, want the %d with small budgets", res.exhausted, capped)
		}
	})
}
