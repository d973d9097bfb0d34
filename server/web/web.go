package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var files embed.FS

// ContentSecurityPolicy is sent with every response of Handler: scripts, styles and API calls
// from the page's own origin only; images may also come from the opt-in OpenStreetMap tiles.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob: https://tile.openstreetmap.org; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

type asset struct {
	data []byte
	etag string
}

// handler serves the embedded page: / is the page, /static/... its assets.
type handler struct {
	assets map[string]asset // by path under static/
}

// Handler returns the handler of the web page and its assets. Mount it at GET /: it serves
// the page at / and the assets under /static/, and answers 404 to any other path.
func Handler() http.Handler {
	h := &handler{assets: map[string]asset{}}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.assets[strings.TrimPrefix(p, "static/")] = asset{data: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		// The files are compiled in: failing to read them is a build defect, not a run-time state.
		panic("web: reading embedded assets: " + err.Error())
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
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
