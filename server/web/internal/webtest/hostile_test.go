package webtest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// checkOpensAtOrigin: the page opens on the person's public origin, with the location fields
// there, so that a new user's first "Report" is answered (a blank world at 20, 0 was 10,655 km
// from the origin and refused).
func checkOpensAtOrigin(t *testing.T, svc *service, s *session) {
	s.waitFor("the ledger", `document.getElementById("budget-text").textContent.includes("left")`)
	o := svc.ledger().Config.Geoind.Origin
	want := [2]string{fmt.Sprintf("%.5f", o.Lat), fmt.Sprintf("%.5f", o.Lon)}
	s.waitFor("the fields at the origin", fmt.Sprintf(`document.getElementById("locate-lat").value === %q && document.getElementById("locate-lon").value === %q`, want[0], want[1]))
	s.do(chromedp.Click(chromedp.CSS("#locate-form button")))
	s.waitFor("the answer", `document.querySelectorAll("#answers li").length === 1`)
	locates := svc.requestsTo("POST", "/locate")
	if len(locates) != 1 || locates[0].ServerStatus != 200 {
		t.Fatalf("the first report from the fields: %d calls, %s", len(locates), locates[len(locates)-1].Response)
	}
	var q struct{ Lat, Lon float64 }
	json.Unmarshal(locates[0].Body, &q)
	if math.Abs(q.Lat-o.Lat) > 1e-5 || math.Abs(q.Lon-o.Lon) > 1e-5 {
		t.Errorf("the first report was at %v, %v; the origin is %v, %v", q.Lat, q.Lon, o.Lat, o.Lon)
	}
}

// TestPageMarkupInjection: a person id from a crafted link is shown as
// text wherever it appears, the map's tooltips included: no element of it
// is created, no link of it reaches the page.
func TestPageMarkupInjection(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	s := newSession(t, svc)
	id := `<b id="inj">bold</b><a id="evil" href="https://evil.example/">click</a><img src=x onerror=alert(1)>`
	s.do(chromedp.Navigate(svc.ts.URL + "/#id=" + url.QueryEscape(id) + "&token=tpk_whatever"))
	s.waitFor("the page to start", `document.body.dataset.ready === "true"`)
	s.waitFor("the 403 message", `!document.getElementById("error").hidden`)
	r := s.rectOf("#map")
	x, y := r.X+0.5*r.W, r.Y+0.6*r.H
	s.do(chromedp.MouseClickXY(x, y))
	s.waitFor("the refusal", `document.querySelectorAll("#answers li.refused").length === 1`)
	// Hover the refused point: its tooltip repeats the server's message, which names the id.
	s.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+40, y+40), chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
	s.waitFor("the tooltip", `document.querySelector(".leaflet-tooltip") !== null`)
	if got := s.text(".leaflet-tooltip"); !strings.Contains(got, `<b id="inj">`) {
		t.Errorf("the tooltip does not show the id as text: %q", got)
	}
	if got := s.text("#who"); !strings.Contains(got, `<b id="inj">`) {
		t.Errorf("the header does not show the id as text: %q", got)
	}
	if n := eval[int](s, `document.querySelectorAll("#inj, #evil, a[href^='https://evil'], img[src='x']").length`); n != 0 {
		t.Errorf("%d elements of the crafted id reached the page", n)
	}
}

// checkLinkNeedsConfirmation: a link opened in a tab that is connected as someone does not
// replace the stored credentials until the user says so; refused, the tab stays connected as
// before and nothing is sent as the link's person.
func checkLinkNeedsConfirmation(t *testing.T, svc *service, s *session) {
	s.waitFor("the ledger", `document.getElementById("budget-text").textContent.includes("left")`)

	s.do(chromedp.Navigate(svc.ts.URL + "/#id=mallory&token=tpk_mallorys-token"))
	s.waitFor("the question", `!document.getElementById("link-confirm").hidden`)
	if loc := eval[string](s, `location.href`); strings.Contains(loc, "mallory") {
		t.Errorf("the link's token stays in the address bar: %s", loc)
	}
	if got := s.text("#link-text"); !strings.Contains(got, "“mallory”") || !strings.Contains(got, "“"+testPerson+"”") {
		t.Errorf("the question %q does not name both people", got)
	}
	if id := eval[string](s, `sessionStorage.getItem("tracepriv.id")`); id != testPerson {
		t.Errorf("before any answer the stored id is %q", id)
	}
	s.do(chromedp.Click(chromedp.ID("link-keep")))
	s.waitFor("the answer", `document.getElementById("link-confirm").hidden`)
	// Blank the totals first, so that the wait below ends at the refreshed ledger's rendering,
	// after its read reached the server, not at the first one's.
	s.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("ledger-totals").textContent = ""`),
		chromedp.Click(chromedp.ID("ledger-refresh")))
	s.waitFor("the ledger again", `document.getElementById("ledger-totals").textContent.includes("Online queries")`)
	if id, tok := eval[string](s, `sessionStorage.getItem("tracepriv.id")`), eval[string](s, `sessionStorage.getItem("tracepriv.token")`); id != testPerson || tok != svc.token {
		t.Errorf("after keeping, the tab holds %q", id)
	}
	for _, e := range svc.all() {
		if strings.Contains(e.Path, "mallory") || strings.Contains(e.Authorization, "mallory") {
			t.Errorf("the refused link's credentials were used: %s %s", e.Method, e.Path)
		}
	}
	if n := len(svc.requestsTo("GET", "/"+testPerson+"/ledger")); n < 2 {
		t.Errorf("%d ledger reads as %s", n, testPerson)
	}
}
