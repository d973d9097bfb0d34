package readme

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
)

// TestLibraryModule builds and runs examples/library, a module of its own that uses
// tracepriv through a replace directive, as README.md's "Using the library from another
// module" says: offline (GOPROXY=off: everything it needs is what this module needs), with
// GOFLAGS=-mod=mod, and it must leave its go.mod and go.sum as committed (else they are
// stale: run go mod tidy there). It releases a PLT file to GPX, the format from the name.
func TestLibraryModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds another module: not in -short")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command to build the example module with")
		}
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "library"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	const replace = "replace github.com/tracepriv/tracepriv => "
	if !strings.Contains(string(mod), replace+"../..") || !strings.Contains(string(readme), replace) {
		t.Errorf("examples/library/go.mod and README.md should both show the %q directive", replace)
	}
	tmp := t.TempDir()
	in := filepath.Join(tmp, "20081024020959.plt")
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "released.gpx")
	cmd := exec.Command(goBin, "run", ".", "-in", in, out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in examples/library: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "released 1 trace(s) to "+out) {
		t.Errorf("the example printed %q", b)
	}
	gpx, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(gpx, []byte("<gpx")) {
		t.Errorf("%s is not GPX: %v", out, err)
	}
	cert, err := os.ReadFile(out + ".cert.json")
	if err != nil || !bytes.Contains(cert, []byte(`"persons"`)) {
		t.Errorf("no certificate beside the release: %v", err)
	}
	mod2, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	sum2, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	if !bytes.Equal(mod, mod2) || !bytes.Equal(sum, sum2) {
		os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644)
		os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
		t.Errorf("building examples/library changed its go.mod or go.sum: run go mod tidy in examples/library and commit them")
	}
}
