package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tracepriv/tracepriv/server/api"
)

const (
	viewW, viewH = 1280, 800
	samplePath   = "../../../../internal/sample/synth-1/commute.plt"
)

// Colours of the page's map (app.css, app.js): the screenshots are searched for them.
var (
	colOriginal  = [3]uint8{0x00, 0x72, 0xb2}
	colSanitised = [3]uint8{0xd5, 0x5e, 0x00}
	colReported  = [3]uint8{0xcc, 0x79, 0xa7}
)

// chromiumPath finds a Chromium to test with, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		// A real browser is a heavy check, run by the full suite; -short
		// checks the page's files (server/web) and its API (server).
		t.Skip("Chromium: full suite only")
	}
	if p := os.Getenv("TRACEPRIV_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (install Debian's chromium, or set TRACEPRIV_CHROMIUM): the browser tests of the web page skip")
	return ""
}

// session is one page in its own tab and browser context of the shared headless Chromium, with
// what the page logged and requested.
type session struct {
	t   *testing.T
	ctx context.Context
	svc *service

	mu       sync.Mutex
	problems []string // uncaught exceptions, console errors, browser log errors not from the network
	urls     []string // every URL the page requested
	// allowed are the URL prefixes besides the page's origin the page may request (a tile
	// server the test set up).
	allowed []string
}

// The browser the tests share: one headless Chromium per test binary (started by the first
// session, stopped by TestMain), in which each session opens its own tab in a new browser
// context, which has its own storage, cache and permissions as a fresh profile has. Starting a
// Chromium per test cost a second or two of CPU each, and the tests, which mostly wait for the
// page, run in parallel tabs (t.Parallel).
var shared struct {
	once     sync.Once
	ctx      context.Context // the browser's first tab; sessions are its children
	stop     func()
	exe, dir string
	err      error
}

// sharedBrowser starts the shared browser once and returns its context.
func sharedBrowser(t *testing.T) context.Context {
	t.Helper()
	exe := chromiumPath(t)
	shared.once.Do(func() {
		shared.exe = exe
		shared.dir, shared.err = os.MkdirTemp("", "tracepriv-webtest-profile")
		if shared.err != nil {
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(exe),
			chromedp.Headless,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.UserDataDir(shared.dir),
			chromedp.WindowSize(viewW, viewH),
			// This machine's network is closed: without these, Chromium keeps trying to reach
			// Google's services and its connections are refused, many at a time.
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("metrics-recording-only", true),
			chromedp.Flag("force-color-profile", "srgb"),
			// Tabs in parallel: none of them is throttled for being in the background.
			chromedp.Flag("disable-background-timer-throttling", true),
			chromedp.Flag("disable-backgrounding-occluded-windows", true),
			chromedp.Flag("disable-renderer-backgrounding", true),
		}
		if os.Geteuid() == 0 {
			opts = append(opts, chromedp.NoSandbox) // Chromium refuses to start its sandbox as root
		}
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(allocCtx)
		shared.ctx = ctx
		shared.stop = func() {
			cancelCtx()
			cancelAlloc() // waits for the browser to exit, before its profile is removed
			os.RemoveAll(shared.dir)
		}
		// Start the browser with no deadline (a deadline on the first Run would bind the
		// browser's life to it); each step then gets its own.
		if err := chromedp.Do(ctx); err != nil {
			shared.err = fmt.Errorf("starting %s: %v", exe, err)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.ctx
}

// stopSharedBrowser stops the shared browser, if a test started it.
func stopSharedBrowser() {
	if shared.stop != nil {
		shared.stop()
	}
}

func newSession(t *testing.T, svc *service) *session {
	t.Helper()
	ctx, cancel := chromedp.NewContext(sharedBrowser(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel) // closes the tab and disposes of its browser context
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab in %s: %v", shared.exe, err)
	}
	s := &session{t: t, ctx: ctx, svc: svc}
	err := chromedp.Listen(ctx, func(ev any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			s.urls = append(s.urls, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			s.problems = append(s.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				s.problems = append(s.problems, "console.error called")
			}
		case *log.EventEntryAdded:
			// A failed API call (401, 429, …) is logged by the network source: that is the page
			// working. Anything else at error level (a CSP violation, say) is a defect.
			if ev.Entry.Level == log.EntryLevelError && ev.Entry.Source != log.EntrySourceNetwork {
				s.problems = append(s.problems, fmt.Sprintf("browser log (%s): %s", ev.Entry.Source, ev.Entry.Text))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.checkClean)
	s.do(chromedp.EmulateViewport(viewW, viewH))
	return s
}

// checkClean fails the test on any script error and on any request off the test server.
func (s *session) checkClean() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.problems {
		s.t.Errorf("page problem: %s", p)
	}
next:
	for _, u := range s.urls {
		for _, ok := range append([]string{s.svc.ts.URL + "/", "data:", "blob:"}, s.allowed...) {
			if strings.HasPrefix(u, ok) {
				continue next
			}
		}
		s.t.Errorf("the page requested %s, off its own origin", u)
	}
}

// requested returns the URLs the page requested so far.
func (s *session) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.urls...)
}

func (s *session) do(steps ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := s.stepContext()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		s.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](s *session, expr string) T {
	s.t.Helper()
	ctx, cancel := s.stepContext()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		s.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// pollEvery is how often waitFor evaluates its condition. chromedp's default polls on every
// animation frame, which keeps the tab producing frames at 60 Hz for as long as a test waits:
// 0.06 to 0.08 CPU-s of Chromium per second of waiting, against 0.01 to 0.03 at 50 ms (a tab
// of the loaded page, measured over 5 s each way), and the tests wait for most of their time,
// longer the busier the machine. A condition that holds is seen within pollEvery.
const pollEvery = 25 * time.Millisecond

// waitFor polls a JavaScript condition until it holds, failing with what and the page's error
// message when the test's deadline nears (stepContext).
func (s *session) waitFor(what, cond string) {
	s.t.Helper()
	ctx, cancel := s.stepContext()
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(pollEvery))); err != nil {
		s.t.Fatalf("waiting for %s (%s): %v; page status %q, error %q", what, cond, err,
			s.text("#status"), s.text("#error"))
	}
}

// waitBudgetDrawn waits until the budget bar draws the remaining share frac: the bar moves with
// a transition, so what is drawn lags its style.
func (s *session) waitBudgetDrawn(frac float64) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("the budget bar to show %g left", frac), fmt.Sprintf(
		`Math.abs(document.getElementById("budget-fill").getBoundingClientRect().width / document.getElementById("budget-bar").clientWidth - %g) < 0.01`, frac))
}

func (s *session) text(sel string) string {
	b, _ := json.Marshal(sel)
	return eval[string](s, `(document.querySelector(`+string(b)+`) || {}).textContent || ""`)
}

func (s *session) count(sel string) int {
	b, _ := json.Marshal(sel)
	return eval[int](s, `document.querySelectorAll(`+string(b)+`).length`)
}

// open opens the page as person and chooses proxy mode, as a person would on the page: these
// tests drive the server's own mechanisms (/locate, /sanitize). openDevice keeps the default.
func (s *session) open(person, token string) {
	s.t.Helper()
	s.openDevice(person, token)
	s.do(chromedp.Click(chromedp.CSS(`input[name="mode"][value="proxy"]`)))
	s.waitFor("proxy mode", `document.body.dataset.mode === "proxy"`)
}

// openDevice opens the page as person in its default mode, on the device.
func (s *session) openDevice(person, token string) {
	s.t.Helper()
	s.do(chromedp.Navigate(s.svc.ts.URL + "/#id=" + person + "&token=" + token))
	s.waitFor("the page to start", `document.body.dataset.ready === "true"`)
}

// screenshot captures the viewport, saves it and checks it is a real picture of the page size.
func (s *session) screenshot(name string) image.Image {
	s.t.Helper()
	ctx, cancel := s.stepContext()
	defer cancel()
	// Let the page paint what the test just did (a scroll, a transition's end) first.
	err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
		`new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))`, chromedp.EvalAwaitPromise))
	if err != nil {
		s.t.Fatal(err)
	}
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		s.t.Fatal(err)
	}
	dir := os.Getenv("TRACEPRIV_WEBTEST_SCREENSHOTS")
	if dir == "" {
		dir = s.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot %s", path)
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		s.t.Fatalf("screenshot %s is not a PNG: %v", name, err)
	}
	if b := img.Bounds(); b.Dx() != viewW || b.Dy() != viewH {
		s.t.Errorf("screenshot %s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), viewW, viewH)
	}
	if sd := lumaStdDev(img); sd < 10 {
		s.t.Errorf("screenshot %s looks blank: luminance standard deviation %.2f", name, sd)
	}
	return img
}

// lumaStdDev is the standard deviation of the luminance (0-255) over the pixels of img.
func lumaStdDev(img image.Image) float64 {
	b := img.Bounds()
	var sum, sum2, n float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(bl)) / 257
			sum += l
			sum2 += l * l
			n++
		}
	}
	m := sum / n
	return math.Sqrt(math.Max(0, sum2/n-m*m))
}

// pixelsNear counts the pixels of img within rect whose colour is within tol (per channel) of c.
func pixelsNear(img image.Image, rect image.Rectangle, c [3]uint8, tol int) int {
	n := 0
	rect = rect.Intersect(img.Bounds())
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if absDiff(int(r>>8), int(c[0])) <= tol && absDiff(int(g>>8), int(c[1])) <= tol && absDiff(int(b>>8), int(c[2])) <= tol {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}

type rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

func (s *session) rectOf(sel string) rect {
	b, _ := json.Marshal(sel)
	return eval[rect](s, `(() => { const r = document.querySelector(`+string(b)+`).getBoundingClientRect();
		return {x: r.x, y: r.y, w: r.width, h: r.height}; })()`)
}

func (r rect) image() image.Rectangle {
	return image.Rect(int(r.X), int(r.Y), int(r.X+r.W), int(r.Y+r.H))
}

// sanitized is the server's answer to the page's upload and the facts the tests check the page
// against, read from it.
type sanitized struct {
	answer      api.SanitizeResponse
	certificate struct {
		EpsilonMax  float64 `json:"epsilon_max"`
		EpsilonKind string  `json:"epsilon_kind"`
		Lambda      float64 `json:"lambda"`
		RadiusM     float64 `json:"radius_m"`
		PriorFamily struct {
			Kernels []struct {
				Kernel string  `json:"kernel"`
				Min    float64 `json:"lengthscale_min_s"`
				Max    float64 `json:"lengthscale_max_s"`
			} `json:"kernels"`
			HeldOutCoverage *float64 `json:"held_out_coverage"`
		} `json:"prior_family"`
		Legend  string `json:"legend"`
		Meaning struct {
			BestGuessAccuracy float64 `json:"best_guess_accuracy"`
		} `json:"meaning"`
		SecretClasses map[string]struct {
			Covered bool `json:"covered"`
		} `json:"secret_classes"`
		Randomness string `json:"randomness"`
		Persons    []struct {
			Points      int     `json:"points"`
			RMSNoiseM   float64 `json:"rms_noise_m"`
			Explanation string  `json:"explanation"`
		} `json:"persons"`
	}
	originalPoints, tracePoints int
	bbox                        [4]float64 // min lat, min lon, max lat, max lon of the original
}

// readSanitized reads the server's answer to an upload.
func readSanitized(t *testing.T, e exchange) *sanitized {
	t.Helper()
	if e.ServerStatus != 200 {
		t.Fatalf("the upload was answered %d: %s", e.ServerStatus, e.Response)
	}
	f := &sanitized{answer: decode[api.SanitizeResponse](t, e)}
	type fc struct {
		Features []struct {
			Geometry struct {
				Type        string      `json:"type"`
				Coordinates [][]float64 `json:"coordinates"`
			} `json:"geometry"`
		} `json:"features"`
	}
	var trace, original fc
	for _, x := range []struct {
		raw json.RawMessage
		v   any
	}{{f.answer.Trace, &trace}, {f.answer.Original, &original}, {f.answer.Certificate, &f.certificate}} {
		if err := json.Unmarshal(x.raw, x.v); err != nil {
			t.Fatalf("the upload's answer: %v", err)
		}
	}
	f.bbox = [4]float64{90, 180, -90, -180}
	for _, ft := range original.Features {
		for _, c := range ft.Geometry.Coordinates {
			f.originalPoints++
			f.bbox[0], f.bbox[1] = math.Min(f.bbox[0], c[1]), math.Min(f.bbox[1], c[0])
			f.bbox[2], f.bbox[3] = math.Max(f.bbox[2], c[1]), math.Max(f.bbox[3], c[0])
		}
	}
	for _, ft := range trace.Features {
		f.tracePoints += len(ft.Geometry.Coordinates)
	}
	if len(original.Features) != 1 || len(trace.Features) != 1 || len(f.certificate.Persons) != 1 {
		t.Fatalf("the upload's answer: want one original trace, one sanitised trace and one person")
	}
	return f
}

// jsNum is how the page prints a number (its num): digits significant digits (4 when omitted),
// in fixed notation with no trailing zeros.
func jsNum(x float64, digits ...int) string {
	d := 4
	if len(digits) > 0 {
		d = digits[0]
	}
	if x == 0 {
		return "0"
	}
	s := fmt.Sprintf("%.*f", max(0, d-1-int(math.Floor(math.Log10(math.Abs(x))))), x)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// jsMetres is how the page prints a distance (its metres).
func jsMetres(m float64) string {
	if math.Abs(m) >= 1000 {
		return jsNum(m/1000, 3) + " km"
	}
	return fmt.Sprintf("%d m", int(math.Round(m)))
}

// jsSeconds is how the page prints a duration in seconds (its seconds).
func jsSeconds(s float64) string {
	switch {
	case s >= 3600:
		return jsNum(s/3600, 3) + " h"
	case s >= 120:
		return jsNum(s/60, 3) + " min"
	}
	return jsNum(s, 3) + " s"
}
