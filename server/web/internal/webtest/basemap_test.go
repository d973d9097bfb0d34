package webtest

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tracepriv/tracepriv/server/web"
)

// Colours the page draws the bundled basemap with (app.js, app.css).
var (
	colLand = [3]uint8{0xec, 0xeb, 0xe2}
	colSea  = [3]uint8{0xdb, 0xe7, 0xef}
)

// TestPageBasemapOffline: with no tile server the map draws the bundled Natural Earth layer
// (land, sea, borders, places) from the page's own origin, and the page requests nothing from
// any other host (checkClean, with no other host allowed). On the page before the basemap the
// map was a bare grid: no layer, no land or sea pixels, no place names.
func TestPageBasemapOffline(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	s := newSession(t, svc)
	s.open(testPerson, svc.token)
	s.waitFor("the bundled basemap", `document.body.dataset.basemap === "drawn"`)
	var got []string
	for _, u := range s.requested() {
		if strings.Contains(u, "/static/basemap/") {
			got = append(got, strings.TrimPrefix(u, svc.ts.URL))
		}
	}
	if len(got) != 2 {
		t.Errorf("the page fetched %v of the bundled layer, want world.topo.json and places.geo.json", got)
	}
	// The drawn map: land and sea both cover a real share of the map, at the person's origin
	// (Beijing's in this test, where Natural Earth has land and the Bohai sea within a few
	// hundred km at the page's zoom), or zoomed out to show both.
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
	// Zoomed out (zoom 12 to 5, by the map's own button), the sea shows too.
	for i := 0; i < 7; i++ {
		s.do(chromedp.Click(chromedp.CSS(".leaflet-control-zoom-out")))
		s.waitFor("the zoom", `!document.getElementById("map").classList.contains("leaflet-zoom-anim")`)
		s.do(chromedp.Sleep(300 * time.Millisecond))
	}
	img = s.screenshot("basemap-zoomed-out")
	land, sea = pixelsNear(img, r, colLand, 3), pixelsNear(img, r, colSea, 3)
	t.Logf("zoomed out: land %.1f %%, sea %.1f %%", 100*float64(land)/float64(area), 100*float64(sea)/float64(area))
	if sea < area/50 || land < area/20 {
		t.Errorf("zoomed out: land on %d, sea on %d of %d map pixels", land, sea, area)
	}
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
