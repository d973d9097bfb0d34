package wasm

//go:generate go run gen.go

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

//go:embed dist static
var files embed.FS

// Manifest is dist/module.json: what the generator built, and the digest
// the repository pins.
type Manifest struct {
	// GoVersion is the toolchain that built the module (runtime.Version()).
	GoVersion string `json:"go_version"`
	// SHA256 is the hex SHA-256 of the module's bytes (uncompressed).
	SHA256 string `json:"sha256"`
	// Bytes and GzipBytes are its size and its compressed size.
	Bytes     int `json:"bytes"`
	GzipBytes int `json:"gzip_bytes"`
}

// asset is a file served under /wasm/.
type asset struct {
	data        []byte
	contentType string
	integrity   string
}

// module holds the files, read once.
type module struct {
	manifest Manifest
	gz       []byte // the module, gzip-compressed, as committed
	raw      []byte // the module
	assets   map[string]asset
}

var (
	once   sync.Once
	loaded *module
)

// load reads the embedded files. They are compiled in: failing to read
// them, or a module whose digest is not the pinned one, is a build defect.
func load() *module {
	once.Do(func() {
		m := &module{assets: map[string]asset{}}
		mf := must(files.ReadFile("dist/module.json"))
		if err := json.Unmarshal(mf, &m.manifest); err != nil {
			panic("wasm: dist/module.json: " + err.Error())
		}
		m.gz = must(files.ReadFile("dist/tracepriv.wasm.gz"))
		zr, err := gzip.NewReader(bytes.NewReader(m.gz))
		if err != nil {
			panic("wasm: dist/tracepriv.wasm.gz: " + err.Error())
		}
		m.raw = must(io.ReadAll(zr))
		if sum := sha256.Sum256(m.raw); hex.EncodeToString(sum[:]) != m.manifest.SHA256 {
			panic("wasm: the embedded module's SHA-256 is not the one dist/module.json pins: run go generate ./server/wasm")
		}
		m.add("tracepriv.wasm", m.raw, "application/wasm")
		m.add("wasm_exec.js", must(files.ReadFile("dist/wasm_exec.js")), "text/javascript; charset=utf-8")
		// The loader carries the digests of what it loads.
		loader := strings.NewReplacer(
			"__TRACEPRIV_WASM_INTEGRITY__", m.assets["tracepriv.wasm"].integrity,
			"__TRACEPRIV_EXEC_INTEGRITY__", m.assets["wasm_exec.js"].integrity,
		).Replace(string(must(files.ReadFile("static/loader.js"))))
		m.add("loader.js", []byte(loader), "text/javascript; charset=utf-8")
		idx := map[string]any{"go_version": m.manifest.GoVersion, "sha256": m.manifest.SHA256, "bytes": m.manifest.Bytes,
			"gzip_bytes": m.manifest.GzipBytes, "integrity": map[string]string{
				"tracepriv.wasm": m.assets["tracepriv.wasm"].integrity, "wasm_exec.js": m.assets["wasm_exec.js"].integrity,
				"loader.js": m.assets["loader.js"].integrity}}
		m.add("module.json", must(json.MarshalIndent(idx, "", "  ")), "application/json")
		loaded = m
	})
	return loaded
}

func must[T any](v T, err error) T {
	if err != nil {
		panic("wasm: reading embedded files: " + err.Error())
	}
	return v
}

func (m *module) add(name string, b []byte, ct string) {
	sum := sha256.Sum256(b)
	m.assets[name] = asset{data: b, contentType: ct, integrity: "sha256-" + base64.StdEncoding.EncodeToString(sum[:])}
}

// Digest returns the hex SHA-256 of the module served at
// /wasm/tracepriv.wasm, the one dist/module.json pins.
func Digest() string { return load().manifest.SHA256 }

// Integrity returns the subresource-integrity value ("sha256-" and the
// base64 digest) of a file served under /wasm/: "tracepriv.wasm",
// "wasm_exec.js", "loader.js" or "module.json"; "" for another name.
func Integrity(name string) string { return load().assets[name].integrity }

// Files returns the names served under /wasm/.
func Files() []string {
	return []string{"tracepriv.wasm", "wasm_exec.js", "loader.js", "module.json"}
}

// Handler serves the module and its loader: GET /wasm/tracepriv.wasm (gzip
// when the client accepts it), /wasm/wasm_exec.js, /wasm/loader.js and
// /wasm/module.json (the digests). Mount it at "GET /wasm/".
func Handler() http.Handler {
	m := load()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, "/wasm/")
		a, found := m.assets[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		body := a.data
		h.Set("Content-Type", a.contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		// Revalidate every time (a 304 by ETag): an upgraded server never
		// pairs a new loader with an old cached module.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", `"`+strings.TrimPrefix(a.integrity, "sha256-")+`"`)
		if name == "tracepriv.wasm" {
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r) {
				h.Set("Content-Encoding", "gzip")
				body = m.gz
			}
		}
		if inm := r.Header.Get("If-None-Match"); inm != "" && inm == h.Get("ETag") {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		w.Write(body)
	})
}

// acceptsGzip reports whether the request's Accept-Encoding lists gzip
// with a non-zero weight.
func acceptsGzip(r *http.Request) bool {
	for _, e := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(e), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
