package server

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/server/wasm"
)

// TestWasmRoute checks that the service serves the module and its loader
// beside the page (issue 33's interface: /wasm/tracepriv.wasm), the pinned
// module, with the service's security headers.
func TestWasmRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	r := e.do("GET", "/wasm/tracepriv.wasm", "", nil, map[string]string{"Accept-Encoding": "identity"})
	sum := sha256.Sum256(r.body)
	if r.status != 200 || r.header.Get("Content-Type") != "application/wasm" || hex.EncodeToString(sum[:]) != wasm.Digest() {
		t.Fatalf("GET /wasm/tracepriv.wasm: %d %q, sha256 %x, want the pinned %s", r.status, r.header.Get("Content-Type"), sum, wasm.Digest())
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Content-Security-Policy") == "" {
		t.Errorf("the module lacks the service's security headers: %v", r.header)
	}
	for _, name := range []string{"wasm_exec.js", "loader.js", "module.json"} {
		if r := e.do("GET", "/wasm/"+name, "", nil, nil); r.status != 200 {
			t.Errorf("GET /wasm/%s: %d", name, r.status)
		}
	}
	if r := e.do("GET", "/wasm/other", "", nil, nil); r.status != 404 {
		t.Errorf("GET /wasm/other: %d", r.status)
	}
	r = e.do("GET", "/", "", nil, nil)
	if r.status != 200 {
		t.Fatalf("the page: %d", r.status)
	}
	// The page loads the loader pinned by its digest, and its policy lets it compile the module.
	if want := `<script src="/wasm/loader.js" integrity="` + wasm.Integrity("loader.js") + `" defer></script>`; !strings.Contains(string(r.body), want) {
		t.Errorf("the page does not load %s", want)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self' 'wasm-unsafe-eval';") {
		t.Errorf("the page's policy %q does not allow the module", csp)
	}
}
