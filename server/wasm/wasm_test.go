package wasm_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/wasmbuild"
	"github.com/tracepriv/tracepriv/server/wasm"
)

func manifest(t *testing.T) wasm.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("dist", "module.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m wasm.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestModuleUpToDate rebuilds the module from the sources, the way
// go generate does, and checks that the committed one is those bytes, and
// that the committed wasm_exec.js is the toolchain's: the module served is
// the code in this repository. It needs the toolchain that built the
// committed module (another Go release compiles other bytes).
func TestModuleUpToDate(t *testing.T) {
	m := manifest(t)
	if m.GoVersion != runtime.Version() {
		t.Skipf("dist/module.json was built with %s and this is %s, which compiles other bytes: rebuild it with go generate ./server/wasm under %s to compare", m.GoVersion, runtime.Version(), m.GoVersion)
	}
	root, err := wasmbuild.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tracepriv.wasm")
	if err := wasmbuild.Build(context.Background(), root, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != m.SHA256 {
		t.Fatalf("the module built from these sources has SHA-256 %s, dist/module.json pins %s: the committed module is stale; run go generate ./server/wasm and commit dist/", got, m.SHA256)
	}
	gz, err := os.ReadFile(filepath.Join("dist", "tracepriv.wasm.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(raw, b) {
		t.Fatalf("dist/tracepriv.wasm.gz does not hold the module dist/module.json pins (err %v): run go generate ./server/wasm", err)
	}
	exec, err := wasmbuild.Support("wasm_exec.js")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(exec)
	if got, _ := os.ReadFile(filepath.Join("dist", "wasm_exec.js")); !bytes.Equal(got, want) {
		t.Fatalf("dist/wasm_exec.js is not %s: run go generate ./server/wasm", exec)
	}
}

// sri is the subresource-integrity value of b, computed here.
func sri(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(s[:])
}

// TestHandler fetches every file as a browser would and checks its type,
// its digests against independent recomputation, gzip negotiation and the
// loader's pinned digests.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(wasm.Handler())
	defer srv.Close()
	get := func(name, enc string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.URL+"/wasm/"+name, nil)
		req.Header.Set("Accept-Encoding", enc) // set by hand: the client then does not decompress
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	m := manifest(t)
	// Issue 33: the module at most 4 MB compressed (as served, gzip).
	if m.GzipBytes > 4_000_000 {
		t.Errorf("the module is %d bytes gzip-compressed, over the 4 MB the device budget allows", m.GzipBytes)
	}
	resp, plain := get("tracepriv.wasm", "identity")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/wasm" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("tracepriv.wasm: %s, %q, encoding %q", resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
	}
	if s := sha256.Sum256(plain); hex.EncodeToString(s[:]) != m.SHA256 || wasm.Digest() != m.SHA256 || len(plain) != m.Bytes {
		t.Errorf("the served module is not the pinned one")
	}
	if !bytes.HasPrefix(plain, []byte("\x00asm")) {
		t.Errorf("the served module is not WebAssembly")
	}
	resp, gz := get("tracepriv.wasm", "br, gzip;q=0.8")
	if resp.Header.Get("Content-Encoding") != "gzip" || len(gz) != m.GzipBytes {
		t.Fatalf("gzip accepted: encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(gz))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if un, _ := io.ReadAll(zr); !bytes.Equal(un, plain) {
		t.Errorf("the gzip module does not decompress to the module")
	}
	if resp, _ := get("tracepriv.wasm", "gzip;q=0"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 got a gzip body")
	}
	_, exec := get("wasm_exec.js", "")
	_, loader := get("loader.js", "")
	for name, b := range map[string][]byte{"tracepriv.wasm": plain, "wasm_exec.js": exec, "loader.js": loader} {
		if wasm.Integrity(name) != sri(b) {
			t.Errorf("Integrity(%q) = %s, the bytes served hash to %s", name, wasm.Integrity(name), sri(b))
		}
	}
	for _, want := range []string{`"` + sri(plain) + `"`, `"` + sri(exec) + `"`, "integrity: WASM_INTEGRITY", "EXEC_INTEGRITY)"} {
		if !bytes.Contains(loader, []byte(want)) {
			t.Errorf("the loader lacks %s", want)
		}
	}
	if bytes.Contains(loader, []byte("__TRACEPRIV_")) {
		t.Errorf("the loader still holds a placeholder")
	}
	resp, idx := get("module.json", "")
	var mj struct {
		SHA256    string            `json:"sha256"`
		Integrity map[string]string `json:"integrity"`
	}
	if err := json.Unmarshal(idx, &mj); err != nil || mj.SHA256 != m.SHA256 || mj.Integrity["loader.js"] != sri(loader) {
		t.Errorf("module.json: %s (%v)", idx, err)
	}
	if resp, _ := get("nothing.js", ""); resp.StatusCode != 404 {
		t.Errorf("an unknown file: %s", resp.Status)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/wasm/loader.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	if r2, err := http.DefaultClient.Do(req); err != nil || r2.StatusCode != 200 {
		t.Errorf("another file's ETag revalidated the loader: %v %v", r2.Status, err)
	}
	req.Header.Set("If-None-Match", `"`+strings.TrimPrefix(sri(loader), "sha256-")+`"`)
	if r2, err := http.DefaultClient.Do(req); err != nil || r2.StatusCode != http.StatusNotModified {
		t.Errorf("the loader's own ETag: %v %v", r2.Status, err)
	}
	if r2, err := http.Post(srv.URL+"/wasm/loader.js", "text/plain", nil); err != nil || r2.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", r2.Status, err)
	}
}
