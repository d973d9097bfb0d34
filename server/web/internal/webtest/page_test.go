package webtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tracepriv/tracepriv/server/api"
)

// epsilonKinds is how the page words a certificate's epsilon_kind.
var epsilonKinds = map[string]string{
	"upper_bound": "a proven upper bound over the prior family",
	"exact":       "exact (the worst case is attained)",
}

// TestPageSanitiseAndLocate walks through the page as a person would, against the real
// service: open the link, upload a trace, read the certificate's summary, see both traces,
// click the map three times, watch the budget drain, and run into the spent budget. What the
// page shows is checked against what the server answered and what its ledger holds.
func TestPageSanitiseAndLocate(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	s := newSession(t, svc)
	s.open(testPerson, svc.token)

	// The token left the address bar and reached the server only in the Authorization header.
	if loc := eval[string](s, `location.href`); strings.Contains(loc, svc.token) {
		t.Errorf("the token is still in the address bar: %s", loc)
	}
	s.waitFor("the ledger", `document.getElementById("budget-text").textContent.includes("left")`)
	if got, want := s.text("#budget-text"), jsNum(svc.budget)+" of "+jsNum(svc.budget)+" left"; !strings.HasPrefix(got, want) {
		t.Errorf("budget before any query: %q, want it to start %q", got, want)
	}

	// Upload the sample trace through the file picker.
	abs, err := filepath.Abs(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	s.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{abs}))
	s.waitFor("the certificate", `!document.getElementById("cert").hidden`)
	up := svc.requestsTo("POST", "/sanitize")
	if len(up) != 1 || up[0].RawQuery != "format=plt&output=geojson" || len(up[0].IdempotencyKey) != 32 || !bytes.Equal(up[0].Body, svc.upload) {
		t.Fatalf("the upload: %d requests, want 1 of the sample file to ?format=plt&output=geojson with a fresh idempotency key", len(up))
	}
	fx := readSanitized(t, up[0])
	c := fx.certificate
	p := c.Persons[0]
	kind, ok := epsilonKinds[c.EpsilonKind]
	if !ok {
		t.Fatalf("certificate epsilon_kind %q: the page has no wording for it", c.EpsilonKind)
	}
	checks := []struct{ sel, want string }{
		{"#cert-epsilon", jsNum(c.EpsilonMax) + " per person, " + kind},
		{"#cert-lambda", jsNum(c.Lambda)},
		{"#cert-radius", jsMetres(c.RadiusM) + " of each other"},
		{"#cert-meaning", "right " + jsNum(100*c.Meaning.BestGuessAccuracy, 3) + " % of the time"},
		{"#cert-rms", jsMetres(p.RMSNoiseM) + " RMS displacement per point"},
		{"#cert-points", fmt.Sprint(p.Points)},
		{"#cert-explanation", p.Explanation},
		{"#status", fmt.Sprintf("%d points in, %d points out", fx.originalPoints, fx.tracePoints)},
		{"#cert-charge", fmt.Sprintf("This release charged ε %s to your trace-release (CIP) budget: %s of %s left.",
			jsNum(fx.answer.EpsilonCharged), jsNum(fx.answer.Remaining), jsNum(fx.answer.Budget))},
	}
	for _, k := range c.PriorFamily.Kernels {
		checks = append(checks, struct{ sel, want string }{"#cert-family", "kernel " + k.Kernel})
		if k.Min != k.Max {
			checks = append(checks, struct{ sel, want string }{"#cert-family", "from " + jsSeconds(k.Min) + " to " + jsSeconds(k.Max)})
		}
	}
	for class, text := range map[string]string{"points": "every point", "places": "every place", "route": "the whole route"} {
		if c.SecretClasses[class].Covered {
			checks = append(checks, struct{ sel, want string }{"#cert-classes", text})
		}
	}
	for _, ck := range checks {
		if got := s.text(ck.sel); !strings.Contains(got, ck.want) {
			t.Errorf("%s shows %q, want it to contain %q", ck.sel, got, ck.want)
		}
	}
	if fx.answer.EpsilonCharged != c.EpsilonMax {
		t.Errorf("the release charged %v, its certificate says %v", fx.answer.EpsilonCharged, c.EpsilonMax)
	}
	seeded := strings.HasPrefix(c.Randomness, "seeded")
	if warned := !eval[bool](s, `document.getElementById("cert-warning").hidden`); warned != seeded {
		t.Errorf("randomness %q: the NOT-private warning is shown = %v (%q)", c.Randomness, warned, s.text("#cert-warning"))
	}

	// Two traces on the map, each drawn with start and end markers, and a legend naming them.
	for _, kind := range []string{"original", "sanitised"} {
		if n := s.count("path.trace-" + kind); n != 1 {
			t.Errorf("%d %s trace paths on the map, want 1", n, kind)
		}
		if d := eval[string](s, `(document.querySelector("path.trace-`+kind+`") || {getAttribute: () => ""}).getAttribute("d") || ""`); strings.Count(d, "L") < 10 {
			t.Errorf("the %s trace path has too few vertices: d=%.80q", kind, d)
		}
		if n := s.count("path.marker-start." + kind); n != 1 {
			t.Errorf("%d start markers of the %s trace, want 1", n, kind)
		}
		if n := s.count("path.marker-end." + kind); n != 1 {
			t.Errorf("%d end markers of the %s trace, want 1", n, kind)
		}
	}
	legend := s.text("#legend")
	// The map's legend states the epsilon beside the family it holds against (issue 31): the
	// certificate's legend line, which names the kernels and the held-out coverage.
	if c.Legend == "" || !strings.Contains(c.Legend, "against Matérn") {
		t.Errorf("the certificate's legend %q names no family", c.Legend)
	}
	if c.PriorFamily.HeldOutCoverage != nil && !strings.Contains(c.Legend, "% of held-out windows") {
		t.Errorf("the certificate's legend %q omits the family's held-out coverage %v", c.Legend, *c.PriorFamily.HeldOutCoverage)
	}
	if c.PriorFamily.HeldOutCoverage != nil {
		want := fmt.Sprintf("%d %% of held-out windows", int(math.Floor(100**c.PriorFamily.HeldOutCoverage)))
		if got := s.text("#cert-family"); !strings.Contains(got, want) {
			t.Errorf("#cert-family shows %q, want it to contain %q", got, want)
		}
	}
	for _, w := range []string{"Original trace", "Sanitised trace", "start", "end", "Reported (noisy) location", c.Legend} {
		if !strings.Contains(legend, w) {
			t.Errorf("the legend %q lacks %q", legend, w)
		}
	}
	mapRect := s.rectOf("#map")
	s.waitBudgetDrawn(1)
	img := s.screenshot("1-sanitised")
	// Both traces must really be drawn: count their colours on the map, outside the legend.
	mapArea := mapRect.image()
	legendArea := s.rectOf("#legend").image()
	for _, tc := range []struct {
		name string
		col  [3]uint8
	}{{"original", colOriginal}, {"sanitised", colSanitised}} {
		n := pixelsNear(img, mapArea, tc.col, 40) - pixelsNear(img, legendArea, tc.col, 40)
		t.Logf("%d pixels of the %s trace's colour on the map", n, tc.name)
		if n < 800 {
			t.Errorf("screenshot: only %d pixels of the %s trace's colour on the map", n, tc.name)
		}
	}

	// Three clicks on the map: three locate calls, each with its own idempotency key, each
	// answer charged and the budget bar following the server's figures.
	clicks := [][2]float64{{0.30, 0.70}, {0.55, 0.85}, {0.78, 0.55}}
	var answers []api.LocateResponse
	for i, f := range clicks {
		x, y := mapRect.X+f[0]*mapRect.W, mapRect.Y+f[1]*mapRect.H
		s.do(chromedp.MouseClickXY(x, y))
		s.waitFor(fmt.Sprintf("answer %d", i+1), fmt.Sprintf(`document.querySelectorAll("#answers li.answer").length === %d`, i+1))
		locates := svc.requestsTo("POST", "/locate")
		if len(locates) != i+1 || locates[i].ServerStatus != 200 {
			t.Fatalf("click %d: %d locate calls, the last answered %d: %s", i+1, len(locates), locates[len(locates)-1].ServerStatus, locates[len(locates)-1].Response)
		}
		a := decode[api.LocateResponse](t, locates[i])
		answers = append(answers, a)
		s.waitFor("the budget bar", fmt.Sprintf(`Number(document.getElementById("budget-bar").getAttribute("aria-valuenow")) === %v`, a.Remaining))
		if i < answersPaid-1 {
			s.waitBudgetDrawn(a.Remaining / svc.budget)
			continue
		}
		// What is left (half an answer) cannot pay another: the page says the budget is
		// exhausted, as the ledger does, rather than drawing a sliver of bar.
		s.waitFor("the word exhausted", `document.getElementById("budget-text").textContent.startsWith("Exhausted")`)
		if l := svc.ledger(); !l.Exhausted || l.Remaining <= 0 {
			t.Errorf("the ledger after %d answers: remaining %v, exhausted %v; want a remainder that cannot pay", answersPaid, l.Remaining, l.Exhausted)
		}
		if got, want := s.text("#budget-text"), "Exhausted: "+jsNum(a.Remaining)+" of "+jsNum(svc.budget)+" left"; !strings.HasPrefix(got, want) {
			t.Errorf("the budget after the last paid answer reads %q, want it to start %q", got, want)
		}
		s.waitBudgetDrawn(0)
		if got, want := s.text("#answers li.answer .coords"), fmt.Sprintf("%.5f, %.5f", a.Lat, a.Lon); got != want {
			t.Errorf("answer %d: the page shows %q, the server answered %q", i+1, got, want)
		}
	}
	locates := svc.requestsTo("POST", "/locate")
	keys := map[string]bool{}
	for i, r := range locates {
		if len(r.IdempotencyKey) != 32 || keys[r.IdempotencyKey] {
			t.Errorf("locate %d: idempotency key %q is not a fresh 128-bit key", i+1, r.IdempotencyKey)
		}
		keys[r.IdempotencyKey] = true
		var q struct {
			Lat, Lon float64
			Time     string
		}
		if err := json.Unmarshal(r.Body, &q); err != nil {
			t.Fatalf("locate %d body %s: %v", i+1, r.Body, err)
		}
		// The map was fitted to the trace, so the clicks must land near it (and not be swapped).
		if q.Lat < fx.bbox[0]-0.05 || q.Lat > fx.bbox[2]+0.05 || q.Lon < fx.bbox[1]-0.1 || q.Lon > fx.bbox[3]+0.1 {
			t.Errorf("locate %d at %.5f, %.5f: not near the trace's box %v", i+1, q.Lat, q.Lon, fx.bbox)
		}
		if r.Status != 200 || r.Replayed {
			t.Errorf("locate %d answered %d (replayed %v), want a fresh 200", i+1, r.Status, r.Replayed)
		}
		if a := answers[i]; a.EpsilonCharged != svc.charge {
			t.Errorf("locate %d charged %v, want %v (independent mechanism, fixed utility)", i+1, a.EpsilonCharged, svc.charge)
		}
	}
	if n := s.count("path.marker-reported"); n != 3 {
		t.Errorf("%d reported points on the map, want 3", n)
	}
	last := answers[len(answers)-1]
	if got := s.text("#answers li.answer .charge"); got != jsNum(last.EpsilonCharged) {
		t.Errorf("the last answer shows a charge of %q, want %q", got, jsNum(last.EpsilonCharged))
	}
	if n := s.count("path.accuracy-circle"); n != 1 {
		t.Errorf("%d accuracy circles on the map, want the latest answer's only", n)
	}
	if got, want := s.text("#answers li.answer"), "accuracy "+jsMetres(last.AccuracyM); !strings.Contains(got, want) {
		t.Errorf("the last answer %q does not give the %s", got, want)
	}

	// The ledger lists the release and the three queries, and both budgets, as the server has
	// them; every answer the page got is one of its charges.
	l := svc.ledger()
	if len(l.Charges) != 4 {
		t.Fatalf("the ledger has %d charges, want 4", len(l.Charges))
	}
	charged := map[string]bool{}
	for _, c := range l.Charges {
		charged[c.RequestID] = true
	}
	for i, a := range answers {
		if !charged[a.RequestID] {
			t.Errorf("answer %d (request %s) has no charge in the ledger", i+1, a.RequestID)
		}
	}
	if !charged[fx.answer.RequestID] {
		t.Errorf("the release (request %s) has no charge in the ledger", fx.answer.RequestID)
	}
	s.waitFor("the ledger to list 4 charges", `document.querySelectorAll("#ledger-table tbody tr").length === 4`)
	totals := s.text("#ledger-totals")
	end := windowStart.Add(time.Hour)
	for _, want := range []string{
		fmt.Sprintf("Online queries: spent %s, remaining %s in the window from %s to %s UTC (exhausted: too little for another query).", jsNum(l.Spent), jsNum(l.Remaining),
			windowStart.Format("2006-01-02 15:04:05"), end.Format("2006-01-02 15:04:05")),
		fmt.Sprintf("Trace releases (CIP): spent %s, remaining %s.", jsNum(l.CIP.Spent), jsNum(l.CIP.Remaining)),
		"4 charges.",
	} {
		if !strings.Contains(totals, want) {
			t.Errorf("ledger totals %q lack %q", totals, want)
		}
	}
	if l.WindowStart == nil || !l.WindowStart.Equal(windowStart) || l.WindowEnd == nil || !l.WindowEnd.Equal(end) {
		t.Errorf("the ledger's window is %v to %v, want %v to %v", l.WindowStart, l.WindowEnd, windowStart, end)
	}
	img = s.screenshot("2-three-queries")
	if n := pixelsNear(img, mapArea, colReported, 30) - pixelsNear(img, legendArea, colReported, 30); n < 60 {
		t.Errorf("screenshot: only %d pixels of the reported points' colour on the map", n)
	}

	// The budget is spent: the fourth click gets a 429 and the page says so.
	s.do(chromedp.MouseClickXY(mapRect.X+0.45*mapRect.W, mapRect.Y+0.40*mapRect.H))
	s.waitFor("the budget-spent message", `!document.getElementById("error").hidden`)
	if got := s.text("#error"); !strings.Contains(got, "Budget spent") || !strings.Contains(got, "429") || !strings.Contains(got, "renews in 1 h") {
		t.Errorf("after the budget is spent the page says %q", got)
	}
	if n := s.count("#answers li.refused"); n != 1 {
		t.Errorf("%d refused answers listed, want 1", n)
	}
	locates = svc.requestsTo("POST", "/locate")
	if len(locates) != 4 || locates[3].ServerStatus != 429 || keys[locates[3].IdempotencyKey] {
		t.Errorf("the fourth click: %d locate calls, last status %d; want 4, 429 and a fresh key", len(locates), locates[len(locates)-1].ServerStatus)
	}
	if n := len(svc.chargesOf("geoind")); n != answersPaid {
		t.Errorf("%d locate charges after a refused query, want %d", n, answersPaid)
	}
	s.screenshot("3-budget-spent")
	s.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("ledger").scrollIntoView({block: "end"})`))
	s.screenshot("5-ledger")

	// Every API call carried the token in its header and nowhere else.
	for _, r := range svc.all() {
		if strings.Contains(r.Path+"?"+r.RawQuery, svc.token) {
			t.Errorf("the token reached the server in a URL: %s %s?%s", r.Method, r.Path, r.RawQuery)
		}
		if r.Authorization != "Bearer "+svc.token {
			t.Errorf("%s %s without the bearer token", r.Method, r.Path)
		}
	}

	// Proxy mode, through a release and four queries on the map, never fetched the module
	// (its megabytes and start-up CPU are device mode's). TestPageOnDevice is the control: the
	// same check finds the fetch there.
	if got := moduleFetches(s.requested()); len(got) != 0 {
		t.Errorf("in proxy mode the page fetched the on-device module: %v", got)
	}
}

// TestPageBadToken: a wrong token and another person's id get clear messages and the form to
// enter the token again (the server answers both with the same 403, saying nothing about who
// exists).
func TestPageBadToken(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	s := newSession(t, svc)

	s.open(testPerson, "tpk_not-the-token")
	s.waitFor("the 403 message", `!document.getElementById("error").hidden`)
	if got := s.text("#error"); !strings.Contains(got, `may not act for person “alice” (403`) {
		t.Errorf("with a wrong token the page says %q", got)
	}
	if eval[bool](s, `document.getElementById("connect").hidden`) {
		t.Error("after a 403 the page must offer the form to enter the token again")
	}
	s.screenshot("4-bad-token")

	// The form, by keyboard: type the right token and press Enter.
	s.do(chromedp.SendKeys(chromedp.ID("person-token"), svc.token+"\n"))
	s.waitFor("the ledger with the right token", `document.getElementById("budget-text").textContent.includes("left")`)
	if !eval[bool](s, `document.getElementById("error").hidden && document.getElementById("connect").hidden`) {
		t.Errorf("after connecting with the right token the page still shows %q", s.text("#error"))
	}

	// A new link pasted into the same tab changes only the fragment: the page follows it once the
	// user confirms that it replaces the person the tab is connected as.
	s.do(chromedp.Evaluate[chromedp.Void](`location.hash = "#id=bob&token=` + svc.token + `"`))
	s.waitFor("the question", `!document.getElementById("link-confirm").hidden`)
	s.do(chromedp.Click(chromedp.ID("link-use")))
	s.waitFor("the 403 message", `document.getElementById("error").textContent.includes("403")`)
	if got := s.text("#error"); !strings.Contains(got, `may not act for person “bob” (403`) {
		t.Errorf("with another person's id the page says %q", got)
	}
	for _, r := range svc.all() {
		if r.ServerStatus != 403 && r.ServerStatus != 200 {
			t.Errorf("%s %s answered %d", r.Method, r.Path, r.ServerStatus)
		}
	}
}

// TestPageDropAndKeyboard: a file dropped on the drop zone is sanitised, and Enter on the
// focused map reports its centre. The first answer is lost on its way back (the server
// committed it, a proxy answered 503): the page retries with the same key and body and gets the
// server's stored answer, with no second charge.
func TestPageDropAndKeyboard(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("Chromium: full suite only")
	}
	svc := newService(t)
	svc.loseLocates = 1
	s := newSession(t, svc)
	s.open(testPerson, svc.token)

	content, err := json.Marshal(string(svc.upload))
	if err != nil {
		t.Fatal(err)
	}
	s.do(chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File([` + string(content) + `], "walk.PLT"));
		const drop = document.getElementById("drop");
		for (const type of ["dragenter", "dragover", "drop"]) {
			drop.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt}));
		}
	})()`))
	s.waitFor("the certificate", `!document.getElementById("cert").hidden`)
	if n := s.count("path.trace-sanitised"); n != 1 {
		t.Errorf("%d sanitised traces after a drop, want 1", n)
	}
	up := svc.requestsTo("POST", "/sanitize")
	if len(up) != 1 {
		t.Fatalf("%d uploads after one drop", len(up))
	}
	fx := readSanitized(t, up[0])

	s.do(chromedp.Focus(chromedp.CSS("#map")), chromedp.KeyEvent(kb.Enter))
	s.waitFor("the answer", `document.querySelectorAll("#answers li.answer").length === 1`)
	locates := svc.requestsTo("POST", "/locate")
	if len(locates) != 2 || locates[0].Status != 503 || locates[0].ServerStatus != 200 || locates[1].Status != 200 {
		t.Fatalf("want a lost answer then a 200, got %d locate calls: %+v", len(locates), locates)
	}
	if locates[0].IdempotencyKey == "" || locates[0].IdempotencyKey != locates[1].IdempotencyKey {
		t.Errorf("the retry used key %q, the first try %q: want the same", locates[1].IdempotencyKey, locates[0].IdempotencyKey)
	}
	if !bytes.Equal(locates[0].Body, locates[1].Body) {
		t.Errorf("the retry sent %s, the first try %s: want the same", locates[1].Body, locates[0].Body)
	}
	if !locates[1].Replayed || !bytes.Equal(locates[0].Response, locates[1].Response) {
		t.Errorf("the retry got a fresh answer (replayed %v):\n%s\nthe lost one was:\n%s", locates[1].Replayed, locates[1].Response, locates[0].Response)
	}
	a := decode[api.LocateResponse](t, locates[0])
	if got, want := s.text("#answers li.answer .coords"), fmt.Sprintf("%.5f, %.5f", a.Lat, a.Lon); got != want {
		t.Errorf("the page shows %q, the stored answer is %q", got, want)
	}
	// The keyboard's report is the map's centre, which the map fitted to the trace.
	var q struct{ Lat, Lon float64 }
	if err := json.Unmarshal(locates[1].Body, &q); err != nil {
		t.Fatal(err)
	}
	cLat, cLon := (fx.bbox[0]+fx.bbox[2])/2, (fx.bbox[1]+fx.bbox[3])/2
	if math.Abs(q.Lat-cLat) > 0.01 || math.Abs(q.Lon-cLon) > 0.01 {
		t.Errorf("Enter reported %.5f, %.5f; the trace's centre is %.5f, %.5f", q.Lat, q.Lon, cLat, cLon)
	}
	if n := len(svc.chargesOf("geoind")); n != 1 {
		t.Errorf("%d locate charges after one retried query, want 1", n)
	}
}
