package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"
)

//go:embed static
var files embed.FS

// ContentSecurityPolicy is sent with every response of Handler: scripts, styles, images and API
// calls (the bundled basemap included) from the page's own origin only, so the browser itself
// refuses any request that would tell another host where the person looks. 'wasm-unsafe-eval'
// lets the page compile the on-device module (/wasm/, its digest pinned by the loader); it
// allows WebAssembly compilation only, not JavaScript's eval ('unsafe-eval' is never given).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
	"img-src 'self' data: blob:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Options configures the page of New.
type Options struct {
	// Tiles is the URL template of a tile server the map draws its background from instead of
	// the bundled offline layer, as Leaflet takes it: https://tiles.example.org/{z}/{x}/{y}.png
	// ({s}, {r} allowed). Every tile request tells that server which area the person looks at,
	// which is where they are, so it must be a server the operator runs; never a public one.
	// Empty: the bundled Natural Earth layer, served by this handler, and no other host.
	Tiles string
	// Loader is the subresource-integrity value of /wasm/loader.js ("sha256-…", package
	// server/wasm's Integrity("loader.js")), which the page's script element then carries: the
	// browser runs no other loader. Empty: the page loads the loader without it (the loader
	// still checks the module's and the runtime's digests).
	Loader string
}

// CheckTiles checks a tile URL template: absolute http or https, with a host, no credentials,
// query or fragment, and {z}, {x} and {y} in it.
func CheckTiles(tiles string) error {
	u, err := url.Parse(tiles)
	if err != nil {
		return fmt.Errorf("tile URL %q: %v", tiles, err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("tile URL %q: want an http or https URL such as https://tiles.example.org/{z}/{x}/{y}.png", tiles)
	case u.Host == "" || strings.ContainsAny(u.Host, "{}"):
		return fmt.Errorf("tile URL %q: want a fixed host (no {s} subdomains: the page's Content-Security-Policy names the one host)", tiles)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("tile URL %q: no user, query or fragment", tiles)
	case strings.ContainsAny(tiles, "\"'<>\\` \t\n"):
		return fmt.Errorf("tile URL %q: quotes, angle brackets, backslashes and spaces are refused", tiles)
	}
	for _, p := range []string{"{z}", "{x}", "{y}"} {
		if !strings.Contains(tiles, p) {
			return fmt.Errorf("tile URL %q: %s is missing (want e.g. https://tiles.example.org/{z}/{x}/{y}.png)", tiles, p)
		}
	}
	return nil
}

// tilesOrigin is the scheme and host of a checked tile URL, as a CSP source names it.
func tilesOrigin(tiles string) string {
	u, _ := url.Parse(tiles)
	return u.Scheme + "://" + u.Host
}

type asset struct {
	data []byte
	etag string
}

// handler serves the embedded page: / is the page, /static/... its assets.
type handler struct {
	assets map[string]asset // by path under static/
	csp    string
}

// Handler returns the handler of the web page and its assets with the bundled offline basemap
// (New with no Options). Mount it at GET /: it serves the page at / and the assets under
// /static/, and answers 404 to any other path.
func Handler() http.Handler {
	h, err := New(Options{})
	if err != nil {
		panic(err) // no options, nothing to refuse
	}
	return h
}

// New returns the handler of the web page as Handler does, configured by o: with o.Tiles the
// map draws that tile server's tiles, and the Content-Security-Policy allows images from its
// host and no other.
func New(o Options) (http.Handler, error) {
	h := &handler{assets: map[string]asset{}, csp: ContentSecurityPolicy}
	if o.Loader != "" && !strings.HasPrefix(o.Loader, "sha256-") && !strings.HasPrefix(o.Loader, "sha384-") && !strings.HasPrefix(o.Loader, "sha512-") {
		return nil, fmt.Errorf("loader integrity %q: want a subresource-integrity value such as sha256-… (server/wasm's Integrity(\"loader.js\"))", o.Loader)
	}
	if o.Tiles != "" {
		if err := CheckTiles(o.Tiles); err != nil {
			return nil, err
		}
		h.csp = strings.Replace(ContentSecurityPolicy, "img-src 'self' data: blob:;",
			"img-src 'self' data: blob: "+tilesOrigin(o.Tiles)+";", 1)
	}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		if p == "static/index.html" {
			// The page reads the tile server from this meta element (empty: the bundled layer).
			meta := []byte(`<meta name="tracepriv-tiles" content="">`)
			if !bytes.Contains(b, meta) {
				return fmt.Errorf("%s has no %s", p, meta)
			}
			b = bytes.Replace(b, meta, []byte(`<meta name="tracepriv-tiles" content="`+html.EscapeString(o.Tiles)+`">`), 1)
			loader := []byte(`<script src="/wasm/loader.js" defer></script>`)
			if !bytes.Contains(b, loader) {
				return fmt.Errorf("%s has no %s", p, loader)
			}
			if o.Loader != "" {
				b = bytes.Replace(b, loader, []byte(`<script src="/wasm/loader.js" integrity="`+html.EscapeString(o.Loader)+`" defer></script>`), 1)
			}
		}
		sum := sha256.Sum256(b)
		h.assets[strings.TrimPrefix(p, "static/")] = asset{data: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		// The files are compiled in: failing to read them is a build defect, not a run-time state.
		panic("web: reading embedded assets: " + err.Error())
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var name string
	switch p := r.URL.Path; {
	case p == "/" || p == "/index.html":
		name = "index.html"
	case strings.HasPrefix(p, "/static/"):
		name = strings.TrimPrefix(p, "/static/")
	}
	a, ok := h.assets[name]
	if !ok || name == "" {
		http.NotFound(w, r)
		return
	}
	// Revalidate every time (the ETag makes that a 304): an upgraded server never mixes a new
	// page with old cached scripts.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.data))
}
