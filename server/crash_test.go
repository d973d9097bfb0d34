package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/server/internal/ledger"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// tracepriv builds the real command once per test binary.
func tracepriv(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tracepriv-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tracepriv")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/tracepriv/tracepriv/cmd/tracepriv").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// process is one run of tracepriv serve.
type process struct {
	cmd *exec.Cmd
}

func startServe(t testing.TB, bin string, args []string, logf *os.File) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "TRACEPRIV_ADMIN_TOKEN="+testAdmin)
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &process{cmd: cmd}
}

// waitHealthy polls /healthz until the server answers.
func waitHealthy(t testing.TB, base string, p *process) {
	t.Helper()
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := c.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		if p.cmd.ProcessState != nil {
			t.Fatalf("server exited: %v", p.cmd.ProcessState)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("server at %s not healthy after 60 s", base)
}

// served is a tracepriv serve process on a loopback port over a store of
// one kind, which a test can kill and start again on the same store.
type served struct {
	base, dir, dbURL string
	bin              string
	args             []string
	logf             *os.File
	p                *process
}

// launch starts tracepriv serve (built once) over a fresh store of kind d
// (SQLite in a temporary directory, or a new database of the test
// cluster) with extra flags, and waits until it is healthy. The process
// is killed at the end of the test if it still runs.
func launch(t testing.TB, d Dialect, extra ...string) *served {
	t.Helper()
	s := &served{bin: tracepriv(t), dir: t.TempDir()}
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
	s.p = startServe(t, s.bin, s.args, s.logf)
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

// TestCrash starts the real tracepriv serve binary, drives it with
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
	forEachStore(t, func(t *testing.T, d Dialect) {
		kills := crashKills()
		srv := launch(t, d)
		base := srv.base
		people := createPeople(t, base, testAdmin, 60, "c", func(i int) map[string]any {
			if i%2 == 0 { // spent within the run: the cap is reached under crashes
				return map[string]any{"epsilon_budget": 0.02, "geoind": map[string]any{"rate": 0.02 / 25}}
			}
			return map[string]any{"epsilon_budget": 1.0, "geoind": map[string]any{"rate": 1e-3, "mechanism": "im"}}
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

		st, err := ledger.Open(context.Background(), srv.dir, srv.dbURL, ledger.Options{})
		if err != nil {
			t.Fatalf("reopening the store after the crashes: %v", err)
		}
		defer st.Close()
		rep := checkInvariants(t, st)
		stored := map[string][]byte{}
		err = st.Scan(context.Background(), func(v *ledger.View) error {
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
