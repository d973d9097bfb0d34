package webtest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/tracepriv/tracepriv/server/api"
	"github.com/tracepriv/tracepriv/trace"
)

// netRequest is one request the page made, as DevTools' Network domain saw it.
type netRequest struct {
	id          network.RequestID
	method, url string
	headers     []string // "name: value", from requestWillBeSent and the headers as sent
	body        []byte
	hasBody     bool
	// noBody says DevTools had no copy of the body (a File sent as it is): the caller must
	// look elsewhere.
	noBody bool
}

// netLog records every request of the page from the DevTools protocol's network events.
type netLog struct {
	mu   sync.Mutex
	reqs []*netRequest
	byID map[network.RequestID]*netRequest
}

func (s *session) recordNetwork() *netLog {
	n := &netLog{byID: map[network.RequestID]*netRequest{}}
	err := chromedp.Listen(s.ctx, func(ev any) {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			r := &netRequest{id: ev.RequestID, method: ev.Request.Method, url: ev.Request.URL, hasBody: ev.Request.HasPostData}
			for k, v := range ev.Request.Headers {
				r.headers = append(r.headers, fmt.Sprintf("%s: %v", k, v))
			}
			for _, e := range ev.Request.PostDataEntries {
				r.body = append(r.body, e.Bytes...)
			}
			n.reqs = append(n.reqs, r)
			n.byID[ev.RequestID] = r
		case *network.EventRequestWillBeSentExtraInfo:
			if r := n.byID[ev.RequestID]; r != nil {
				for k, v := range ev.Headers {
					r.headers = append(r.headers, fmt.Sprintf("%s: %v", k, v))
				}
			}
		}
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// since returns the requests recorded from index i on, with the bodies DevTools left out of the
// events (long ones) fetched with Network.getRequestPostData; noBody marks those DevTools has
// none of.
func (n *netLog) since(s *session, i int) []*netRequest {
	s.t.Helper()
	n.mu.Lock()
	reqs := append([]*netRequest(nil), n.reqs[i:]...)
	n.mu.Unlock()
	for _, r := range reqs {
		if r.hasBody && len(r.body) == 0 {
			ctx, cancel := s.stepContext()
			res, err := chromedp.Call(ctx, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: r.id})
			cancel()
			if err != nil {
				r.noBody = true
				continue
			}
			r.body = res.PostData
		}
	}
	return reqs
}

func (n *netLog) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.reqs)
}

// coordDetector finds true coordinates in what a request carries: as text with 3 to 15
// decimals and in the shortest form (JavaScript's), and as float64 bytes, little and big
// endian, raw or in base64 (standard or URL alphabet, at any alignment).
type coordDetector struct {
	texts []string
	bins  [][]byte
}

func newCoordDetector(xs []float64) *coordDetector {
	d := &coordDetector{}
	seen := map[string]bool{}
	for _, x := range xs {
		forms := []string{strconv.FormatFloat(x, 'f', -1, 64)}
		for p := 3; p <= 15; p++ {
			forms = append(forms, strconv.FormatFloat(x, 'f', p, 64), strings.TrimRight(strconv.FormatFloat(x, 'f', p, 64), "0"))
		}
		for _, f := range forms {
			if !seen[f] && len(f) >= 5 {
				seen[f] = true
				d.texts = append(d.texts, f)
			}
		}
		d.bins = append(d.bins, binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)), binary.BigEndian.AppendUint64(nil, math.Float64bits(x)))
	}
	return d
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{11,}`)

// find returns the first true coordinate it finds in data, or "".
func (d *coordDetector) find(data []byte) string {
	texts := [][]byte{data}
	if u, err := url.QueryUnescape(string(data)); err == nil && u != string(data) {
		texts = append(texts, []byte(u))
	}
	for _, t := range texts {
		for _, n := range d.texts {
			if bytes.Contains(t, []byte(n)) {
				return "text " + n
			}
		}
	}
	blobs := [][]byte{data}
	for _, m := range base64Run.FindAll(data, -1) {
		s := strings.NewReplacer("-", "+", "_", "/").Replace(string(m))
		for off := range 4 {
			seg := s[off:]
			if len(seg)%4 == 1 {
				seg = seg[:len(seg)-1]
			}
			if b, err := base64.RawStdEncoding.DecodeString(seg); err == nil {
				blobs = append(blobs, b)
			}
		}
	}
	for _, b := range blobs {
		for _, n := range d.bins {
			if bytes.Contains(b, n) {
				return fmt.Sprintf("float64 bytes %x", n)
			}
		}
	}
	return ""
}

// leaks returns every request that carries a true coordinate, in its URL, a header or its body.
func (d *coordDetector) leaks(reqs []*netRequest) []string {
	var out []string
	for _, r := range reqs {
		parts := map[string][]byte{"url": []byte(r.url), "headers": []byte(strings.Join(r.headers, "\n")), "body": r.body}
		for where, b := range parts {
			if f := d.find(b); f != "" {
				out = append(out, fmt.Sprintf("%s %s: %s in its %s", r.method, r.url, f, where))
			}
		}
	}
	return out
}

// TestDetectorFinds is the detector's own falsifier: each encoding of a coordinate it claims to
// catch is caught, and a near miss is not.
// moduleFetches returns the URLs of the on-device module and its runtime among urls.
func moduleFetches(urls []string) []string {
	var out []string
	for _, u := range urls {
		if strings.Contains(u, "/wasm/tracepriv.wasm") || strings.Contains(u, "/wasm/wasm_exec.js") {
			out = append(out, u)
		}
	}
	return out
}

// warmModule moves the pointer over the map, as a person turning to it does, which starts
// the module in device mode, and waits until it is ready.
func (s *session) warmModule() {
	s.t.Helper()
	r := s.rectOf("#map")
	s.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 2, 2),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, r.X+r.W/2, r.Y+r.H/2))
	s.waitFor("the module", `document.body.dataset.module === "ready"`)
}

func TestDetectorFinds(t *testing.T) {
	x := 39.98471234567891
	d := newCoordDetector([]float64{x})
	le := binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))
	be := binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
	for _, in := range []string{
		`{"lat":39.98471234567891}`, "lat=39.985", "39.9847123", "lat%3D39.98471",
		string(le), "xx" + string(be),
		base64.StdEncoding.EncodeToString(append([]byte("a"), le...)),
		base64.URLEncoding.EncodeToString(append([]byte("ab"), be...)),
		base64.StdEncoding.EncodeToString(append([]byte("abc1234567"), le...)),
	} {
		if d.find([]byte(in)) == "" {
			t.Errorf("missed the coordinate in %q", in)
		}
	}
	if f := d.find([]byte(`{"lat":39.99, "epsilon":0.0123, "sha":"` + strings.Repeat("ab", 32) + `"}`)); f != "" {
		t.Errorf("found %s where there is none", f)
	}
}

// TestPageOnDevice drives the page in its default mode with an emulated geolocation: a run of
// queries and one trace release drawn in the browser. No request the page makes (every one
// DevTools saw, and every one the server got) carries a true coordinate, while the ledger holds
// exactly one charge per session and per release. A cleared storage does not reset the budget
// (the next query is charged a new session). The negative control: the same detector finds the
// coordinates in proxy mode's requests.
func TestPageOnDevice(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("designs and draws a release in the browser (minutes under load); run without -short")
	}
	svc := newService(t)
	s := newSession(t, svc)
	net := s.recordNetwork()
	ctx, cancel := s.stepContext()
	_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "geolocation"}, Setting: browser.PermissionSettingGranted, Origin: svc.ts.URL,
		BrowserContextID: chromedp.FromContext(s.ctx).BrowserContextID}) // the session's, not the browser's default
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	s.openDevice(testPerson, svc.token)
	if m := eval[string](s, `document.body.dataset.mode`); m != "device" {
		t.Fatalf("the page opened in mode %q, want device by default", m)
	}
	// The module is loaded once the person turns to the map, not before; and then it is
	// fetched, which is what TestPageSanitiseAndLocate's check of proxy mode must find.
	if got := moduleFetches(s.requested()); len(got) != 0 {
		t.Errorf("before any use the page fetched the module: %v", got)
	}
	s.warmModule()
	if got := moduleFetches(s.requested()); len(got) != 2 {
		t.Errorf("loading the module the page fetched %v, want the module and its runtime: the check of proxy mode would see nothing", got)
	}
	// A charge's idempotency key is kept in storage until its answer is recorded: a key left
	// pending (as a reload between the server's charge and the page's record of it leaves it)
	// is sent again, so that the server replays that charge instead of charging twice.
	const planted = "0123456789abcdef0123456789abcdef"
	s.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem('tracepriv.pending.' + %q + '.session', %q)`, testPerson, planted)))

	truths := [][2]float64{{39.98471234567891, 116.31876543210987}, {39.99312345678912, 116.30123456789123},
		{39.97654321098765, 116.32987654321098}, {39.98111111111119, 116.31222222222227}}
	var xs []float64
	for _, p := range truths {
		xs = append(xs, p[0], p[1])
	}
	tr, err := trace.NewReader(bytes.NewReader(svc.upload), trace.PLT, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := trace.ReadAll(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range all {
		for _, p := range tt.Points {
			xs = append(xs, p.Lat, p.Lon)
		}
	}
	det := newCoordDetector(xs)

	here := func(i int, p [2]float64) {
		t.Helper()
		lat, lon, acc := p[0], p[1], 5.0
		ctx, cancel := s.stepContext()
		_, err := chromedp.Call(ctx, emulation.SetGeolocationOverride, emulation.SetGeolocationOverrideParams{Latitude: &lat, Longitude: &lon, Accuracy: &acc})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		s.do(chromedp.Click(chromedp.ID("here")))
		_ = i
	}
	deviceCharges := func(kind string) []api.Charge {
		var out []api.Charge
		for _, c := range svc.chargesOf(kind) {
			if c.Origin == "device" {
				out = append(out, c)
			}
		}
		return out
	}
	start := net.len()

	// The run of queries: the session's budget pays for answersPaid of them.
	for i := range answersPaid {
		here(i, truths[i])
		s.waitFor(fmt.Sprintf("answer %d", i+1), fmt.Sprintf(`document.body.dataset.answers === "%d"`, i+1))
	}
	if n := len(deviceCharges("geoind")); n != 1 {
		t.Errorf("%d geoind charges for one session of %d queries, want 1", n, answersPaid)
	}
	// The next is refused on the device, and nothing is charged for it.
	here(answersPaid, truths[answersPaid])
	s.waitFor("the session's end", `!document.getElementById("new-session").hidden`)
	if n := len(deviceCharges("geoind")); n != 1 {
		t.Errorf("%d geoind charges after the session's end, want still 1", n)
	}

	// One trace release on the device.
	abs, err := filepath.Abs(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	s.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{abs}))
	s.waitFor("the release", `document.body.dataset.releases === "1"`)
	cip := deviceCharges("cip")
	if len(cip) != 1 {
		t.Fatalf("%d cip charges for one release, want 1", len(cip))
	}
	if sha := eval[string](s, `document.body.dataset.certificateSha256 || ""`); sha == "" || cip[0].CertificateSHA256 != sha {
		t.Errorf("the release's certificate sha256 %q, the charge names %q", sha, cip[0].CertificateSHA256)
	}
	if n := s.count("path.trace-sanitised"); n != 1 {
		t.Errorf("%d sanitised traces on the map, want 1", n)
	}
	sentPlanted := false
	for _, r := range net.since(s, start) {
		if r.method == "POST" && strings.HasSuffix(r.url, "/charges") {
			for _, h := range r.headers {
				if strings.EqualFold(h, "Idempotency-Key: "+planted) {
					sentPlanted = true
				}
			}
		}
	}
	if !sentPlanted {
		t.Error("the session's charge did not reuse the idempotency key left pending in storage")
	}
	if n := eval[float64](s, `Object.keys(localStorage).filter((k) => k.startsWith('tracepriv.pending.')).length`); n != 0 {
		t.Errorf("%v charge keys still pending after the charges were recorded", n)
	}

	// One draw per charge, in the browser too: after a reload (the module restarted, the charge
	// ids drawn for restored from localStorage) a new plan drawn with the release's charge id is
	// refused, and one with a fresh id is not (the control).
	s.do(chromedp.Reload())
	s.waitFor("the page to start", `document.body.dataset.ready === "true"`)
	s.warmModule()
	tiny, _ := json.Marshal(strings.Join(strings.SplitAfter(string(svc.upload), "\n")[:30], ""))
	drawWith := func(id string) string {
		t.Helper()
		return eval[string](s, `(() => { const p = globalThis.tracepriv.planRelease(`+string(tiny)+`, "plt", '{"epsilon":1,"lambda":2,"radius_m":100}');`+
			` if (typeof p === "string") return p; const r = JSON.parse(p.draw(`+strconv.Quote(id)+`));`+
			` return r.error ? "refused charged=" + r.charged : "drawn"; })()`)
	}
	if got := drawWith(cip[0].ChargeID); got != "refused charged=true" {
		t.Errorf("a second draw for the release's charge %s after a reload: %s", cip[0].ChargeID, got)
	}
	if got := drawWith("c-never-charged-in-this-test"); got != "drawn" {
		t.Errorf("a draw for a fresh charge id: %s", got)
	}

	// A cleared storage forgets the session, not the budget: the next query is charged anew.
	// (Reload: opening the link again would only change the fragment, not load the page.)
	s.do(chromedp.Evaluate[chromedp.Void](`localStorage.clear()`), chromedp.Reload())
	s.waitFor("the page to start", `document.body.dataset.ready === "true"`)
	s.warmModule()
	here(0, truths[0])
	s.waitFor("an answer after the storage was cleared", `document.body.dataset.answers === "1"`)
	if n := len(deviceCharges("geoind")); n != 2 {
		t.Errorf("%d geoind charges after the storage was cleared and one more query, want 2", n)
	}

	device := net.since(s, start)
	if len(device) < 8 {
		t.Fatalf("only %d requests recorded in device mode", len(device))
	}
	for _, l := range det.leaks(device) {
		t.Errorf("on the device, a request carries a true coordinate: %s", l)
	}
	// What reached the server, recorded behind it, says the same.
	for _, e := range svc.all() {
		if f := det.find(append([]byte(e.Path+"?"+e.RawQuery+"\n"), e.Body...)); f != "" {
			t.Errorf("on the device, the server got %s in %s %s", f, e.Method, e.Path)
		}
	}
	var posted, charged int
	for _, r := range device {
		if r.noBody {
			t.Errorf("on the device, DevTools has no copy of the body of %s %s", r.method, r.url)
		}
		if r.method == "POST" {
			posted++
			if strings.HasSuffix(r.url, "/charges") {
				charged++
			}
		}
		if strings.Contains(r.url, "/locate") || strings.Contains(r.url, "/sanitize") {
			t.Errorf("on the device, the page called %s %s", r.method, r.url)
		}
	}
	if charged != 3 || posted != charged {
		t.Errorf("on the device: %d POSTs, %d of them charges; want 3 charges (2 sessions, 1 release) and nothing else", posted, charged)
	}

	// The negative control: proxy mode, chosen on the page, sends the truth, and the detector
	// sees it.
	s.do(chromedp.Click(chromedp.CSS(`input[name="mode"][value="proxy"]`)))
	s.waitFor("proxy mode", `document.body.dataset.mode === "proxy"`)
	mark := net.len()
	here(1, truths[1])
	s.waitFor("the proxy's answer", `document.body.dataset.answers === "2" || !document.getElementById("error").hidden`)
	s.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{abs}))
	s.waitFor("the proxy's release", `document.body.dataset.releases === "1"`)
	var locate, upload bool
	for _, r := range net.since(s, mark) {
		f := det.leaks([]*netRequest{r})
		switch {
		case strings.Contains(r.url, "/locate"):
			locate = true
			if len(f) == 0 {
				t.Errorf("proxy mode: the detector found no coordinate in %s %s (body %.200q)", r.method, r.url, r.body)
			}
		case strings.Contains(r.url, "/sanitize"):
			upload = true
			if r.noBody {
				// DevTools keeps no copy of a File body: take the upload as the server got it.
				ups := svc.requestsTo("POST", "/sanitize")
				if len(ups) != 1 {
					t.Fatalf("proxy mode: %d uploads reached the server, want 1", len(ups))
				}
				r.body = ups[0].Body
				f = det.leaks([]*netRequest{r})
			}
			if len(f) == 0 {
				t.Errorf("proxy mode: the detector found no coordinate in the upload %s", r.url)
			}
		}
	}
	if !locate || !upload {
		t.Errorf("proxy mode: a locate call seen %v, an upload seen %v; want both", locate, upload)
	}
}
