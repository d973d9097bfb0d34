//go:build ignore

// gen builds the module (internal/wasmbuild) and writes dist/: the module
// gzip-compressed, the toolchain's wasm_exec.js and module.json with the
// digest. Run it with go generate ./server/wasm.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log"
	"os"
	"path/filepath"
	"runtime"

	"github.com/tracepriv/tracepriv/internal/wasmbuild"
)

func main() {
	root, err := wasmbuild.Root(".")
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tracepriv-wasm")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "tracepriv.wasm")
	if err := wasmbuild.Build(context.Background(), root, out); err != nil {
		log.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		log.Fatal(err)
	}
	// gzip with no name and no time in the header, so that the same module
	// compresses to the same bytes.
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := zw.Write(raw); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	exec, err := wasmbuild.Support("wasm_exec.js")
	if err != nil {
		log.Fatal(err)
	}
	js, err := os.ReadFile(exec)
	if err != nil {
		log.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	mf, err := json.MarshalIndent(map[string]any{
		"go_version": runtime.Version(), "sha256": hex.EncodeToString(sum[:]), "bytes": len(raw), "gzip_bytes": gz.Len(),
	}, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	for name, b := range map[string][]byte{"tracepriv.wasm.gz": gz.Bytes(), "wasm_exec.js": js, "module.json": append(mf, '\n')} {
		if err := os.WriteFile(filepath.Join("dist", name), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("dist/tracepriv.wasm.gz: %d bytes (%d uncompressed), sha256 %x, %s", gz.Len(), len(raw), sum, runtime.Version())
}
