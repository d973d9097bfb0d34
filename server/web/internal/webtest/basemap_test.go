package webtest

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/tracepriv/tracepriv/server/web"
)

// Colours the page draws the bundled basemap with (app.js, app.css).
var (
	colLand  = [3]uint8{0xec, 0xeb, 0xe2}
	colSea   = [3]uint8{0xdb, 0xe7, 0xef}
	colCoast = [3]uint8{0x7f, 0x9d, 0xb3}
)

// TestPageAtOrigin opens the page once, as the person, and checks on it, one after another,
// what a fresh page at the person's origin shows and does: each check was a test of its own
// that loaded the same page (each load is seconds of the browser's CPU). Each subtest needs only
// the page as opened (go test -run 'TestPageAtOrigin/BasemapOffline' runs one alone).
func TestPageAtOrigin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("Chromium: full suite only")
	}
	svc := newService(t)
	s := newSession(t, svc)
	s.open(testPerson, svc.token)
	for _, c := range []struct {
		name  string
		check func(*testing.T, *service, *session)
	}{
		{"OpensAtOrigin", checkOpensAtOrigin},
		{"BasemapOffline", checkBasemapOffline},
		{"LinkNeedsConfirmation", checkLinkNeedsConfirmation},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer s.as(t)()
			c.check(t, svc, s)
		})
	}
}

// as makes t the test s reports to (a subtest of the one that opened it) until the returned
// func restores the previous one.
func (s *session) as(t *testing.T) func() {
	prev := s.t
	s.t = t
	return func() { s.t = prev }
}

// checkBasemapOffline: with no tile server the map draws the bundled Natural Earth layer
// (land, sea, borders, places) from the page's own origin, and the page requests nothing from
// any other host (checkClean, with no other host allowed). On the page before the basemap the
// map was a bare grid: no layer, no land or sea pixels, no place names. The layer is the one
// the zoom needs, each scale's file fetched once, when first needed: 1:10m at city zoom, 1:50m
// zoomed out to a continent, and zoomed in again on a coast the 1:10m coastline is drawn there;
// the page before drew the 1:10m world at every zoom (no layer named, one file).
func checkBasemapOffline(t *testing.T, svc *service, s *session) {
	s.waitFor("the bundled basemap", `document.body.dataset.basemap === "drawn"`)
	// The ledger centres the map on the person's origin at city zoom (centreOnOrigin).
	s.waitFor("the ledger", `document.getElementById("budget-text").textContent.includes("left")`)
	s.waitLayer()
	if got := eval[string](s, `document.body.dataset.basemapLayer || ""`); got != "10m" {
		t.Errorf("at the origin at zoom %s the map draws the %q layer, want 10m", eval[string](s, `document.body.dataset.basemapZoom || ""`), got)
	}
	fetched := func() map[string]int {
		got := map[string]int{}
		for _, u := range s.requested() {
			if i := strings.Index(u, "/static/basemap/"); i >= 0 && strings.HasPrefix(u, svc.ts.URL) {
				got[u[i+len("/static/basemap/"):]]++
			}
		}
		return got
	}
	// The page opens on the world (zoom 2), then centres on the origin (zoom 12).
	want := map[string]int{"world-110m.topo.json": 1, "places.geo.json": 1, "world-10m.topo.json": 1}
	if got := fetched(); !maps.Equal(got, want) {
		t.Errorf("the page fetched %v of the bundled layer, want each of %v once", got, want)
	}
	// The drawn map: land covers a real share of the map at the person's origin (Beijing's in
	// this test, where Natural Earth has land).
	r := s.rectOf("#map").image()
	img := s.screenshot("basemap-offline")
	area := r.Dx() * r.Dy()
	land, sea := pixelsNear(img, r, colLand, 3), pixelsNear(img, r, colSea, 3)
	t.Logf("map %dx%d: land %.1f %%, sea %.1f %%", r.Dx(), r.Dy(), 100*float64(land)/float64(area), 100*float64(sea)/float64(area))
	if land < area/20 {
		t.Errorf("land covers %d of %d map pixels: the bundled layer is not drawn", land, area)
	}
	// Place names, as text, once the map is close enough.
	s.waitFor("place names", `document.querySelectorAll(".place-label").length > 0`)
	names := eval[[]string](s, `Array.from(document.querySelectorAll(".place-label")).map((e) => e.textContent)`)
	if len(names) < 10 {
		t.Errorf("%d place names on the map, want the Natural Earth places: %v", len(names), names)
	}
	// Zoomed out (zoom 12 to 5, by the map's own button), the sea shows too, from 1:50m.
	for i := 0; i < 7; i++ {
		s.do(chromedp.Click(chromedp.CSS(".leaflet-control-zoom-out")))
		s.waitFor("the zoom", `!document.getElementById("map").classList.contains("leaflet-zoom-anim")`)
		s.do(chromedp.Sleep(300 * time.Millisecond))
	}
	s.waitLayer()
	if got := eval[string](s, `document.body.dataset.basemapLayer || ""`); got != "50m" {
		t.Errorf("zoomed out to %s the map draws the %q layer, want 50m", eval[string](s, `document.body.dataset.basemapZoom || ""`), got)
	}
	want["world-50m.topo.json"] = 1
	img = s.screenshot("basemap-zoomed-out")
	land, sea = pixelsNear(img, r, colLand, 3), pixelsNear(img, r, colSea, 3)
	t.Logf("zoomed out: land %.1f %%, sea %.1f %%", 100*float64(land)/float64(area), 100*float64(sea)/float64(area))
	if sea < area/50 || land < area/20 {
		t.Errorf("zoomed out: land on %d, sea on %d of %d map pixels", land, sea, area)
	}
	// Zoomed in on the coast nearest the centre (the wheel keeps the point under the pointer
	// in place), twice: at zoom 9 and then 13 the 1:10m coastline is drawn, land on one side
	// and sea on the other, in the coastline's colour.
	for _, minZoom := range []float64{8.5, 12.5} {
		p, ok := coastNear(img, r)
		if !ok {
			t.Fatalf("no coast on the map at zoom %s", eval[string](s, `document.body.dataset.basemapZoom || ""`))
		}
		// (DevTools wants deltaX too, which the JSON omits when it is 0.)
		s.do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, float64(p.X), float64(p.Y),
			func(e *input.DispatchMouseEventParams) { e.DeltaX, e.DeltaY = 1e-6, -5000 }))
		s.waitFor("the zoom", fmt.Sprintf(`Number(document.body.dataset.basemapZoom) >= %g && !document.getElementById("map").classList.contains("leaflet-zoom-anim")`, minZoom))
		s.waitLayer()
		if got := eval[string](s, `document.body.dataset.basemapLayer || ""`); got != "10m" {
			t.Fatalf("zoomed in to %s on the coast the map draws the %q layer, want 10m", eval[string](s, `document.body.dataset.basemapZoom || ""`), got)
		}
		img = s.screenshot(fmt.Sprintf("basemap-coast-%g", minZoom+0.5))
	}
	land, sea = pixelsNear(img, r, colLand, 3), pixelsNear(img, r, colSea, 3)
	// The coastline is a 1-pixel antialiased line: count the map's rows it crosses.
	coast := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		if pixelsNear(img, image.Rect(r.Min.X, y, r.Max.X, y+1), colCoast, 20) > 0 {
			coast++
		}
	}
	t.Logf("on the coast at zoom %s: land %.1f %%, sea %.1f %%, the coastline on %d rows", eval[string](s, `document.body.dataset.basemapZoom`),
		100*float64(land)/float64(area), 100*float64(sea)/float64(area), coast)
	if sea < area/50 || land < area/50 || coast < r.Dy()/4 {
		t.Errorf("on the coast at city zoom: land on %d, sea on %d of %d map pixels, the coastline on %d of %d rows; want both and the line between them", land, sea, area, coast, r.Dy())
	}
	if got := fetched(); !maps.Equal(got, want) {
		t.Errorf("after zooming out and in again the page fetched %v of the bundled layer, want each of %v once", got, want)
	}
}

// waitLayer waits until the bundled basemap draws the layer its zoom asks for (or the 1:10m
// layer failed to load, which the caller's check of the layer then reports).
func (s *session) waitLayer() {
	s.t.Helper()
	s.waitFor("the basemap's layer for the zoom", `document.body.dataset.basemapLayer === document.body.dataset.basemapWant || document.body.dataset.basemapDetail === "failed"`)
}

// coastNear returns the land pixel nearest the centre of r that has sea within 2 pixels.
func coastNear(img image.Image, r image.Rectangle) (image.Point, bool) {
	near := func(x, y int, c [3]uint8) bool {
		cr, cg, cb, _ := img.At(x, y).RGBA()
		return absDiff(int(cr>>8), int(c[0])) <= 3 && absDiff(int(cg>>8), int(c[1])) <= 3 && absDiff(int(cb>>8), int(c[2])) <= 3
	}
	ctr := image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
	best, found := image.Point{}, false
	inner := r.Inset(20) // away from the map's controls and edges
	for y := inner.Min.Y; y < inner.Max.Y; y++ {
		for x := inner.Min.X; x < inner.Max.X; x++ {
			if !near(x, y, colLand) {
				continue
			}
			p := image.Pt(x, y)
			if found && dist2(p, ctr) >= dist2(best, ctr) {
				continue
			}
			for _, d := range [][2]int{{2, 0}, {-2, 0}, {0, 2}, {0, -2}} {
				if near(x+d[0], y+d[1], colSea) {
					best, found = p, true
					break
				}
			}
		}
	}
	return best, found
}

func dist2(a, b image.Point) int {
	d := a.Sub(b)
	return d.X*d.X + d.Y*d.Y
}

// tileServer is a tile server on loopback that answers every tile with a magenta PNG and
// records the paths asked for.
type tileServer struct {
	ts    *httptest.Server
	mu    sync.Mutex
	paths []string
}

var colTile = [3]uint8{0xff, 0x00, 0xff}

func newTileServer(t *testing.T) *tileServer {
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = colTile[0], colTile[1], colTile[2], 0xff
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	ts := &tileServer{}
	ts.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.paths = append(ts.paths, r.URL.Path)
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		w.Write(buf.Bytes())
	}))
	t.Cleanup(ts.ts.Close)
	return ts
}

func (ts *tileServer) requested() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.paths...)
}

// TestPageTiles: a page served with web.Options.Tiles (tracepriv serve --tiles URL) draws
// that server's tiles, requests tiles from it and from no other host (the tile server is on
// another loopback port, so another origin), does not fetch the bundled layer, and its
// Content-Security-Policy allows images from that host alone.
func TestPageTiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("Chromium: full suite only")
	}
	tiles := newTileServer(t)
	tmpl := tiles.ts.URL + "/tiles/{z}/{x}/{y}.png"
	page, err := web.New(web.Options{Tiles: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	svc := newServiceWeb(t, page)
	s := newSession(t, svc)
	s.allowed = []string{tiles.ts.URL + "/tiles/"}
	s.open(testPerson, svc.token)
	s.waitFor("the tile background", `document.body.dataset.basemap === "tiles"`)
	// Loaded is not drawn: Leaflet fades each tile (and its container) in
	// over frames, so on a busy machine a screenshot right after the
	// first load caught no tile colour. Wait until every tile is loaded
	// and fully opaque.
	s.waitFor("tiles drawn", `(() => {
		const ts = [...document.querySelectorAll(".leaflet-tile")];
		const opaque = el => { for (; el && el.id !== "map"; el = el.parentElement) if (getComputedStyle(el).opacity !== "1") return false; return true; };
		return ts.length > 0 && ts.every(t => t.classList.contains("leaflet-tile-loaded") && opaque(t));
	})()`)
	paths := tiles.requested()
	if len(paths) == 0 {
		t.Fatal("the tile server got no request")
	}
	tile := regexp.MustCompile(`^/tiles/\d+/-?\d+/-?\d+\.png$`)
	for _, p := range paths {
		if !tile.MatchString(p) {
			t.Errorf("the tile server got %s, not a tile of the template %s", p, tmpl)
		}
	}
	for _, u := range s.requested() {
		if strings.Contains(u, "/static/basemap/") {
			t.Errorf("the page fetched the bundled layer %s though a tile server is set", u)
		}
	}
	r := s.rectOf("#map").image()
	img := s.screenshot("basemap-tiles")
	if n := pixelsNear(img, r, colTile, 8); n < r.Dx()*r.Dy()/4 {
		t.Errorf("tile colour on %d of %d map pixels: the tiles are not drawn", n, r.Dx()*r.Dy())
	}
	res, err := http.Get(svc.ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data: blob: "+tiles.ts.URL+";") {
		t.Errorf("Content-Security-Policy %q: want images from %s and the origin only", csp, tiles.ts.URL)
	}
}
