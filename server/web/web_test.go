package web_test

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/server/web"
)

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPageAndAssets(t *testing.T) {
	h := web.Handler()
	r := get(t, h, "GET", "/", nil)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	for k, want := range map[string]string{
		"Content-Security-Policy": web.ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	page := body(t, r)

	// Every script, stylesheet and image the page and the map's stylesheet name is served, with
	// its type, from this handler: nothing comes from another host.
	refs := regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 4 {
		t.Fatalf("only %d references in the page", len(refs))
	}
	wantType := map[string]string{".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
	checked := 0
	for _, m := range refs {
		ref := m[1]
		if strings.HasPrefix(ref, "data:") {
			continue
		}
		if strings.HasPrefix(ref, "/wasm/") {
			continue // the on-device module's loader, served beside the page by package server
		}
		if strings.Contains(ref, "//") {
			t.Errorf("the page loads %s from another host", ref)
			continue
		}
		r := get(t, h, "GET", "/"+ref, nil)
		if r.StatusCode != 200 {
			t.Errorf("GET /%s: %d", ref, r.StatusCode)
			continue
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, wantType[filepath.Ext(ref)]) {
			t.Errorf("GET /%s: Content-Type %q", ref, ct)
		}
		checked++
		if strings.HasSuffix(ref, "leaflet.css") {
			css := body(t, r)
			for _, u := range regexp.MustCompile(`url\(([^)]+)\)`).FindAllStringSubmatch(css, -1) {
				img := strings.Trim(u[1], `'"`)
				if strings.HasPrefix(img, "data:") || strings.HasPrefix(img, "#") {
					continue
				}
				p := "/" + filepath.ToSlash(filepath.Join(filepath.Dir(ref), img))
				if r := get(t, h, "GET", p, nil); r.StatusCode != 200 {
					t.Errorf("leaflet.css names %s: GET %s: %d", img, p, r.StatusCode)
				}
			}
		}
	}
	if checked < 4 {
		t.Errorf("checked %d assets, want the two scripts and two stylesheets", checked)
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	h := web.Handler()
	for _, p := range []string{"/nope", "/static/", "/static/vendor/", "/static/missing.js", "/v1/people/a/ledger", "/static/../web.go"} {
		if r := get(t, h, "GET", p, nil); r.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, r.StatusCode)
		}
	}
	r := get(t, h, "POST", "/", nil)
	if r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d, Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
	if r := get(t, h, "HEAD", "/static/app.js", nil); r.StatusCode != 200 || body(t, r) != "" {
		t.Errorf("HEAD /static/app.js: %d", r.StatusCode)
	}
}

func TestRevalidation(t *testing.T) {
	h := web.Handler()
	r := get(t, h, "GET", "/static/app.js", nil)
	etag := r.Header.Get("ETag")
	if etag == "" || r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, r.Header.Get("Cache-Control"))
	}
	if r := get(t, h, "GET", "/static/app.js", map[string]string{"If-None-Match": etag}); r.StatusCode != 304 {
		t.Errorf("a request with the current ETag: %d, want 304", r.StatusCode)
	}
	if other := get(t, h, "GET", "/static/app.css", nil).Header.Get("ETag"); other == etag {
		t.Errorf("app.js and app.css share the ETag %s", etag)
	}
}

// TestAssetBudget keeps the page small (the bundled basemap a few MB at most) and the vendored
// libraries and data licensed.
func TestAssetBudget(t *testing.T) {
	var total int64
	err := filepath.WalkDir("static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > 3<<20 {
		t.Errorf("the embedded assets take %d bytes, over the 3 MiB budget", total)
	}
	for f, want := range map[string]string{
		"static/vendor/leaflet/LICENSE":         "BSD 2-Clause",
		"static/vendor/topojson-client/LICENSE": "Permission to use, copy, modify",
		"static/basemap/SOURCES":                "public domain",
	} {
		lic, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(lic), want) {
			t.Errorf("%s: the licence is missing: %v", f, err)
		}
	}
	// The page's own code names no other host: by default it requests nothing off its origin.
	for _, f := range []string{"static/app.js", "static/app.css", "static/index.html"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range regexp.MustCompile(`https?://[^\s'"<)]+`).FindAllString(string(b), -1) {
			t.Errorf("%s names %s", f, u)
		}
	}
}

// TestCSPNoOtherHost: by default the page's policy names no host besides its own (a public tile
// server in img-src would let the page tell it where the person looks); with Options.Tiles it
// names that one host, in img-src only, and the page carries the template.
func TestCSPNoOtherHost(t *testing.T) {
	hostRe := regexp.MustCompile(`https?://\S+`)
	if hosts := hostRe.FindAllString(web.ContentSecurityPolicy, -1); len(hosts) != 0 {
		t.Errorf("the default Content-Security-Policy names %v", hosts)
	}
	if got := get(t, web.Handler(), "GET", "/", nil).Header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
		t.Errorf("Handler's policy %q", got)
	}
	h, err := web.New(web.Options{Tiles: "https://tiles.example.org:8443/osm/{z}/{x}/{y}.png"})
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "GET", "/", nil)
	csp := r.Header.Get("Content-Security-Policy")
	if hosts := hostRe.FindAllString(csp, -1); len(hosts) != 1 || hosts[0] != "https://tiles.example.org:8443;" ||
		!strings.Contains(csp, "img-src 'self' data: blob: https://tiles.example.org:8443;") {
		t.Errorf("with tiles, the policy is %q", csp)
	}
	if page := body(t, r); !strings.Contains(page, `<meta name="tracepriv-tiles" content="https://tiles.example.org:8443/osm/{z}/{x}/{y}.png">`) {
		t.Errorf("the page does not carry the tile template")
	}
}

func TestCheckTiles(t *testing.T) {
	for _, bad := range []string{
		"tiles.example.org/{z}/{x}/{y}.png",             // no scheme
		"ftp://tiles.example.org/{z}/{x}/{y}.png",       // not http
		"https://tiles.example.org/{z}/{x}.png",         // no {y}
		"https://{s}.tiles.example.org/{z}/{x}/{y}.png", // several hosts
		"https://u:p@tiles.example.org/{z}/{x}/{y}.png", // credentials in the page
		"https://tiles.example.org/{z}/{x}/{y}.png?key=1",
		`https://tiles.example.org/{z}/{x}/{y}.png"><script>`,
	} {
		if err := web.CheckTiles(bad); err == nil {
			t.Errorf("CheckTiles(%q) accepted it", bad)
		}
		if _, err := web.New(web.Options{Tiles: bad}); err == nil {
			t.Errorf("New with Tiles %q accepted it", bad)
		}
	}
	if err := web.CheckTiles("http://127.0.0.1:8081/{z}/{x}/{y}.png"); err != nil {
		t.Error(err)
	}
}

func ExampleHandler() {
	mux := http.NewServeMux()
	// The API's routes are more specific and win; everything else is the page.
	mux.Handle("GET /", web.Handler())
	// A real program serves mux with http.ListenAndServe; here a request
	// goes straight to it.
	for _, path := range []string{"/", "/nowhere"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, rec.Code, strings.Split(rec.Header().Get("Content-Type"), ";")[0])
	}
	// Output:
	// / 200 text/html
	// /nowhere 404 text/plain
}

// TestCSPAllowsTheModule: the page's policy lets it compile the on-device module
// ('wasm-unsafe-eval' in script-src) and never allows JavaScript's eval ('unsafe-eval'), with
// and without a tile server; the page loads the module's loader, pinned by the integrity value
// Options.Loader gives, and a value that is no digest is refused.
func TestCSPAllowsTheModule(t *testing.T) {
	tiled, err := web.New(web.Options{Tiles: "https://tiles.example.org/{z}/{x}/{y}.png"})
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{"default": web.Handler(), "tiles": tiled} {
		csp := get(t, h, "GET", "/", nil).Header.Get("Content-Security-Policy")
		var script []string
		for _, d := range strings.Split(csp, ";") {
			if f := strings.Fields(d); len(f) > 0 && f[0] == "script-src" {
				script = f[1:]
			}
		}
		has := func(tok string) bool {
			for _, s := range script {
				if s == tok {
					return true
				}
			}
			return false
		}
		if !has("'self'") || !has("'wasm-unsafe-eval'") || has("'unsafe-eval'") || has("'unsafe-inline'") || len(script) != 2 {
			t.Errorf("%s: script-src %q: want exactly 'self' 'wasm-unsafe-eval'", name, script)
		}
	}
	const sri = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	h, err := web.New(web.Options{Loader: sri})
	if err != nil {
		t.Fatal(err)
	}
	if page := body(t, get(t, h, "GET", "/", nil)); !strings.Contains(page, `<script src="/wasm/loader.js" integrity="`+sri+`" defer></script>`) {
		t.Errorf("the page does not pin the loader by %s", sri)
	}
	if _, err := web.New(web.Options{Loader: "md5-x"}); err == nil || !strings.Contains(err.Error(), "sha256-") {
		t.Errorf("a loader integrity that is no digest: %v", err)
	}
}
