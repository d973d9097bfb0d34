// Package wasm serves tracepriv's mechanisms as a WebAssembly module for
// the person's browser: the module built from cmd/tracepriv-wasm, the Go
// runtime's wasm_exec.js and a small loader, at /wasm/ of tracepriv serve,
// with the module's digest pinned in the repository and checked by the
// browser before the module runs (subresource integrity).
//
//	mux.Handle("GET /wasm/", wasm.Handler())
//	fmt.Println(wasm.Digest())                   // the module's SHA-256, as pinned in dist/module.json
//	fmt.Println(wasm.Integrity("loader.js"))     // "sha256-…" for <script integrity=…>
//
// # Why a prebuilt module
//
// The module is built once by "go generate ./server/wasm" (gen.go, the
// flags of internal/wasmbuild) and committed, gzip-compressed, in dist/
// with its digest and the toolchain that built it, so that "go install
// ./cmd/tracepriv" gives a service that serves it without a Go toolchain
// at run time. TestModuleUpToDate rebuilds it from the sources and fails
// when the committed bytes differ: after a change to any package the module
// imports, run go generate ./server/wasm. Builds are reproducible (no
// paths, VCS stamp or build id), so anyone with the same Go release gets
// the same digest.
//
// # What the digest protects
//
// The loader fetches the module with its pinned SHA-256 as the fetch's
// integrity, and loads wasm_exec.js with its own: a module or runtime
// swapped on the way, in a cache or on a mirror is refused before it runs.
// It cannot protect against whoever serves the page itself, who can serve
// another loader; docs/device.md says what does.
package wasm
