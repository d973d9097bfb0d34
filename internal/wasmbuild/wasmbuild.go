// Package wasmbuild builds the WebAssembly module (cmd/tracepriv-wasm) the
// one reproducible way, for the generator of server/wasm and for the tests
// that run the module under Node.js and Chromium, and finds the Go
// toolchain's JavaScript support files.
package wasmbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Package is the main package of the module, relative to the module root.
const Package = "./cmd/tracepriv-wasm"

// Flags are the go build flags of the module: no file paths (-trimpath),
// no VCS stamp and no build id, so that the bytes depend only on the
// sources and the toolchain, and anyone can rebuild the module and compare
// its digest with the one served.
var Flags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}

// Env is the environment of the build: js/wasm, no cgo, and no GOFLAGS of
// the caller's that could change the bytes.
func Env() []string {
	env := []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS="}
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS":
			continue
		}
		env = append(env, e)
	}
	return env
}

// Root returns the module's root directory, found upwards from dir.
func Root(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/tracepriv/tracepriv\n") {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("wasmbuild: no tracepriv go.mod above %s", dir)
		}
		d = up
	}
}

// Build compiles the module of the module root root into out.
func Build(ctx context.Context, root, out string) error {
	args := append(append([]string{"build"}, Flags...), "-o", out, Package)
	cmd := exec.CommandContext(ctx, GoTool(), args...)
	cmd.Dir = root
	cmd.Env = Env()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("wasmbuild: GOOS=js GOARCH=wasm go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// GoTool is the go command of the running toolchain (its GOROOT's, so that
// a build and the wasm_exec.js beside it agree), else the one on PATH.
func GoTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

// Support returns the path of a JavaScript support file of the toolchain:
// "wasm_exec.js" (the runtime glue a page loads before the module),
// "wasm_exec_node.js" or "go_js_wasm_exec" (the runner go test -exec takes).
func Support(name string) (string, error) {
	out, err := exec.Command(GoTool(), "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("wasmbuild: go env GOROOT: %v", err)
	}
	root := strings.TrimSpace(string(out))
	for _, dir := range []string{"lib/wasm", "misc/wasm"} { // lib/wasm since Go 1.24
		p := filepath.Join(root, dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("wasmbuild: %s is not in %s/lib/wasm", name, root)
}

// Node returns the path of Node.js, or an error saying how to install it.
func Node() (string, error) {
	for _, n := range []string{"node", "nodejs"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("node is not installed (apt-get install nodejs; .ci/run installs it)")
}
