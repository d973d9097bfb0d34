//go:build !js

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/server/wasm"
)

// pageCSP is the policy the test page runs under: what an on-device page
// needs, and no more (compiling WebAssembly needs 'wasm-unsafe-eval').
const pageCSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'"

// browser is a headless Chromium on a page served with the module of
// package server/wasm (its real handler and loader) at /wasm/, and the same
// files with a module altered by one byte at /bad/wasm/.
type browser struct {
	ctx context.Context
	url string
	pid int // the browser process, whose descendants run the page
}

func chromium(t testing.TB) string {
	if p := os.Getenv("TRACEPRIV_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (install Debian's chromium, or set TRACEPRIV_CHROMIUM): the module's browser tests skip")
	return ""
}

// newBrowser serves the page and starts Chromium on it. The module served
// is the embedded one, which must be the one the sources build
// (server/wasm's TestModuleUpToDate): otherwise the comparison with the
// library would compare other code.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	exe := chromium(t)
	built, err := os.ReadFile(module(t))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(built); hex.EncodeToString(sum[:]) != wasm.Digest() {
		t.Fatalf("server/wasm embeds a module other than the sources build (SHA-256 %s, built %x): run go generate ./server/wasm", wasm.Digest(), sum)
	}
	cases, err := os.ReadFile(filepath.Join("testdata", "cases.js"))
	if err != nil {
		t.Fatal(err)
	}
	real := wasm.Handler()
	mux := http.NewServeMux()
	mux.Handle("GET /wasm/", real)
	// The same loader and runtime, and the module with one byte changed.
	mux.HandleFunc("GET /bad/wasm/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/tracepriv.wasm") {
			bad := slices.Clone(built)
			bad[len(bad)/2] ^= 1
			w.Header().Set("Content-Type", "application/wasm")
			w.Write(bad)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/bad")
		real.ServeHTTP(w, r2)
	})
	page := func(prefix string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", pageCSP)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><title>tracepriv on the device</title>
<script src="%s/wasm/loader.js" integrity="%s"></script><script src="/cases.js"></script>`, prefix, wasm.Integrity("loader.js"))
		}
	}
	mux.HandleFunc("GET /{$}", page(""))
	mux.HandleFunc("GET /bad/{$}", page("/bad"))
	mux.HandleFunc("GET /cases.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(cases)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-default-apps", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to start its sandbox as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	// What goes wrong in the page is logged: a script error, a refused
	// resource.
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Logf("page exception: %s", ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			for _, a := range ev.Args {
				t.Logf("page console.%s: %s", ev.Type, a.Value)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return &browser{ctx: ctx, url: srv.URL, pid: chromedp.FromContext(ctx).Browser.Process().Pid}
}

// stepContext bounds one browser step by the test binary's deadline (go
// test -timeout) less a margin to say which step hung (a tenth of the time
// left, at most a minute), not by a fixed time: how fast Chromium answers on
// a busy machine is not what these tests check (webtest's stepContext).
// Without a deadline (a benchmark, -timeout 0) a step waits as long as it takes.
func (b *browser) stepContext(t testing.TB) (context.Context, context.CancelFunc) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return context.WithDeadline(b.ctx, d.Add(-min(time.Until(d)/10, time.Minute)))
		}
	}
	return context.WithCancel(b.ctx)
}

// eval evaluates the promise expr in the page, returning its value (a
// string).
func (b *browser) eval(t testing.TB, expr string) (string, error) {
	t.Helper()
	ctx, cancel := b.stepContext(t)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
}

// open navigates to path, where the loader is.
func (b *browser) open(t testing.TB, path string) {
	t.Helper()
	ctx, cancel := b.stepContext(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(b.url+path)); err != nil {
		t.Fatal(err)
	}
}

// run loads the module through the loader (once per page) and runs the
// cases in the page. cpu is the CPU time the browser's processes spent
// meanwhile (from /proc): on a shared machine the wall time counts the
// waits for a core as well.
func (b *browser) run(t testing.TB, in input) (got output, cpu time.Duration) {
	t.Helper()
	inJSON, _ := json.Marshal(in)
	ctx, cancel := b.stepContext(t)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`traceprivLoad().then(() => "ok")`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("loading the module in Chromium: %v", err)
	}
	before := treeCPU(b.pid)
	res, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(runCases(globalThis.tracepriv, `+string(inJSON)+`))`))
	cpu = treeCPU(b.pid) - before
	if err != nil {
		t.Fatalf("running the cases in Chromium: %v", err)
	}
	if err := json.Unmarshal([]byte(res), &got); err != nil {
		t.Fatalf("the page's output: %v: %.300s", err, res)
	}
	return got, cpu
}

// treeCPU is the user and system CPU time of process pid and all its
// descendants, from /proc (in USER_HZ = 100 ticks a second); 0 where
// /proc cannot be read.
func treeCPU(pid int) time.Duration {
	parent := map[int]int{}
	ticks := map[int]int64{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime(14) stime(15); comm may hold spaces.
		end := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 13 {
			continue
		}
		var p, pp int
		var ut, st int64
		fmt.Sscan(strings.Fields(string(b))[0], &p)
		fmt.Sscan(f[1], &pp)
		fmt.Sscan(f[11], &ut)
		fmt.Sscan(f[12], &st)
		parent[p], ticks[p] = pp, ut+st
	}
	var total int64
	for p, tk := range ticks {
		for q := p; q > 1; q = parent[q] {
			if q == pid {
				total += tk
				break
			}
		}
	}
	return time.Duration(total) * 10 * time.Millisecond
}

// TestChromiumSameAsNative loads the module in headless Chromium through
// the served loader (digests checked by the browser), runs the seeded
// cases and checks them against the library natively, as in Node.js; the
// crypto cases draw from the browser's crypto.getRandomValues and say so.
// It logs the times the benchmark rows quote. A module altered by one byte
// is refused by the browser before it runs (the negative control of the
// pinned digest).
func TestChromiumSameAsNative(t *testing.T) {
	if testing.Short() {
		t.Skip("Chromium: full suite only (Node.js checks the same module in -short)")
	}
	t.Parallel() // Chromium does the work: overlap it with the other module tests
	n := walkFull
	in, want := sharedCases(t, n)
	b := newBrowser(t)
	b.open(t, "/")
	got, cpu := b.run(t, in)
	compare(t, "chromium", in, got, want())
	q := slices.Clone(got.Sessions[0].MS)
	slices.Sort(q)
	t.Logf("chromium: %d queries (pm, fixed-rate): median %.2f ms, max %.2f ms; the bundled trace's release %.0f ms; the %d-point walk's %.0f ms (wall times; the browser used %s of CPU in all)",
		len(q), q[len(q)/2], q[len(q)-1], got.Releases[0].MS, n, got.Releases[1].MS, cpu)

	b.open(t, "/bad/")
	res, err := b.eval(t, `traceprivLoad().then(() => "loaded", (e) => "refused: " + e.message + "; API defined: " + (typeof globalThis.tracepriv))`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res, "refused") || !strings.HasSuffix(res, "API defined: undefined") {
		t.Errorf("a module altered by one byte: %s, want it refused before it runs", res)
	}
	t.Logf("altered module: %s", res)
}

// BenchmarkChromium measures a query and a 10,000-point release on the
// device: the module in headless Chromium, crypto randomness, a fresh
// session per run. It reports a query's mean wall time over a session of
// 60 answered queries, the release's wall time, and the CPU time
// Chromium's processes spent on each (on a loaded machine, the wall time
// includes waiting for a core).
func BenchmarkChromium(b *testing.B) {
	all := cases(b, 10_000)
	queriesIn := input{Sessions: []sessionCase{{pmBench, nil, queries(60, 39.98, 116.31)}}, Releases: []releaseCase{}}
	releaseIn := input{Sessions: []sessionCase{}, Releases: []releaseCase{{all.Releases[1].Trace, "plt", cipOptions, nil, false}}}
	br := newBrowser(b)
	br.open(b, "/")
	var qWall, qCPU, rWall, rCPU []float64
	for b.Loop() {
		got, cpu := br.run(b, queriesIn)
		ss := got.Sessions[0]
		for _, a := range ss.Answers {
			if !strings.HasPrefix(a, `{"report"`) {
				b.Fatalf("a benchmark query was not answered: %s", a)
			}
		}
		// The mean over the session, its start included: the page's clock
		// counts in steps of 0.1 ms.
		qWall = append(qWall, ss.TotalMS/float64(len(ss.Answers)))
		qCPU = append(qCPU, cpu.Seconds()*1000/float64(len(ss.Answers)))
		got, cpu = br.run(b, releaseIn)
		if strings.Contains(got.Releases[0].Answer, `"error"`) {
			b.Fatal(got.Releases[0].Answer)
		}
		rWall = append(rWall, got.Releases[0].MS/1000)
		rCPU = append(rCPU, cpu.Seconds())
	}
	// The page's first release also designs the prior family's envelope
	// (cip caches it for the module's life).
	b.ReportMetric(rWall[0], "s/first-release-10k")
	b.ReportMetric(rCPU[0], "cpu-s/first-release-10k")
	med := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	b.ReportMetric(med(qWall), "ms/query")
	b.ReportMetric(med(qCPU), "cpu-ms/query")
	b.ReportMetric(med(rWall), "s/release-10k")
	b.ReportMetric(med(rCPU), "cpu-s/release-10k")
}

// BenchmarkChromiumPlanned measures what the on-device page does for a
// trace release (issue 33, charge before draw): planRelease (the
// certificate and its digest, from the trace's timestamps: sanitize.Prepare)
// and draw (from that design), for the 10,000-point walk, in headless Chromium with crypto
// randomness; the charge's round trip to the service is not included. The
// first run also designs the envelope; the metrics are medians over the
// runs after it when there are any.
func BenchmarkChromiumPlanned(b *testing.B) {
	all := cases(b, 10_000)
	in := input{Sessions: []sessionCase{}, Releases: []releaseCase{{all.Releases[1].Trace, "plt", cipOptions, nil, true}}}
	br := newBrowser(b)
	br.open(b, "/")
	var plan, draw, wall, cpus []float64
	for b.Loop() {
		got, cpu := br.run(b, in)
		r := got.Releases[0]
		var a struct {
			Error  string `json:"error"`
			Digest string `json:"certificate_sha256"`
		}
		if err := json.Unmarshal([]byte(r.Answer), &a); err != nil || a.Error != "" || a.Digest != r.PlannedSHA256 {
			b.Fatalf("a planned release: %v %s (digest %s, planned %s)", err, a.Error, a.Digest, r.PlannedSHA256)
		}
		plan, draw, wall, cpus = append(plan, r.PlanMS/1000), append(draw, r.DrawMS/1000), append(wall, r.MS/1000), append(cpus, cpu.Seconds())
	}
	b.ReportMetric(wall[0], "s/first-planned-release-10k")
	b.ReportMetric(cpus[0], "cpu-s/first-planned-release-10k")
	if len(wall) > 1 {
		plan, draw, wall, cpus = plan[1:], draw[1:], wall[1:], cpus[1:]
	}
	med := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	b.ReportMetric(med(plan), "s/plan-10k")
	b.ReportMetric(med(draw), "s/draw-10k")
	b.ReportMetric(med(wall), "s/planned-release-10k")
	b.ReportMetric(med(cpus), "cpu-s/planned-release-10k")
}

// BenchmarkChromiumStoredDesign measures a page's first planned release
// of the 10,000-point walk (what a person's first release after opening
// the page costs), in a fresh page each time (a fresh module, nothing
// cached): without a stored envelope design, and with the one an earlier
// page stored given back first (useDesign, which proves it again, then
// planRelease and draw), alternately.
func BenchmarkChromiumStoredDesign(b *testing.B) {
	all := cases(b, 10_000)
	release := []releaseCase{{all.Releases[1].Trace, "plt", cipOptions, nil, true}}
	br := newBrowser(b)
	br.open(b, "/")
	got, _ := br.run(b, input{Sessions: []sessionCase{}, Releases: release})
	stored := []storedDesign{{got.Releases[0].DesignKey, got.Releases[0].Design}}
	if stored[0].Doc == "" {
		b.Fatalf("the plan gave no envelope design: %.300s", got.Releases[0].Answer)
	}
	var coldWall, coldCPU, warmWall, warmCPU, useMS []float64
	for b.Loop() {
		for _, designs := range [][]storedDesign{nil, stored} {
			br.open(b, "/")
			got, cpu := br.run(b, input{Sessions: []sessionCase{}, Releases: release, Designs: designs})
			r := got.Releases[0]
			var a struct {
				Error  string `json:"error"`
				Digest string `json:"certificate_sha256"`
			}
			if err := json.Unmarshal([]byte(r.Answer), &a); err != nil || a.Error != "" || a.Digest != r.PlannedSHA256 {
				b.Fatalf("a planned release: %v %s", err, a.Error)
			}
			if designs == nil {
				coldWall, coldCPU = append(coldWall, r.MS/1000), append(coldCPU, cpu.Seconds())
				continue
			}
			if len(got.UseDesign) != 1 || got.UseDesign[0] != "{}" {
				b.Fatalf("the stored design was not used: %v", got.UseDesign)
			}
			warmWall, warmCPU = append(warmWall, (got.UseDesignMS+r.MS)/1000), append(warmCPU, cpu.Seconds())
			useMS = append(useMS, got.UseDesignMS/1000)
		}
	}
	med := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	b.ReportMetric(med(coldWall), "s/first-release-designed")
	b.ReportMetric(med(coldCPU), "cpu-s/first-release-designed")
	b.ReportMetric(med(warmWall), "s/first-release-stored-design")
	b.ReportMetric(med(warmCPU), "cpu-s/first-release-stored-design")
	b.ReportMetric(med(useMS), "s/use-design")
}

// BenchmarkNative is BenchmarkChromium's work in the Go library natively,
// for the side-by-side row: a 60-query session and the 10,000-point
// release (crypto randomness; the envelope cached after the first run, as
// in the page).
func BenchmarkNative(b *testing.B) {
	walk10k := []byte(cases(b, 10_000).Releases[1].Trace)
	qs := queries(60, 39.98, 116.31)
	var qWall, rWall, rCPU []float64
	for b.Loop() {
		start := time.Now()
		s, err := device.NewSession(pmBench)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range qs {
			if _, err := s.Query(q[0], q[1], int64(q[2])); err != nil {
				b.Fatal(err)
			}
		}
		qWall = append(qWall, time.Since(start).Seconds()*1000/float64(len(qs)))
		start, cpu0 := time.Now(), selfCPU()
		if _, err := device.Release(walk10k, "plt", cipOptions); err != nil {
			b.Fatal(err)
		}
		rWall = append(rWall, time.Since(start).Seconds())
		rCPU = append(rCPU, (selfCPU() - cpu0).Seconds())
	}
	med := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	b.ReportMetric(med(qWall), "ms/query")
	b.ReportMetric(med(rWall), "s/release-10k")
	b.ReportMetric(med(rCPU), "cpu-s/release-10k")
}

// pmBench is the benchmarks' session: pmRate's mechanism with a budget
// that answers all 60 queries (pmRate's runs out after a few, and a
// refused query costs nothing to answer).
const pmBench = `{"mechanism":"pm","manager":"fixed-rate","rate":0.002,"params":{"epsilon":0.5},` +
	`"origin":{"lat":39.9042,"lon":116.4074},"noise":{"grid":1}}`

// selfCPU is the test process's user and system CPU time (every thread).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
