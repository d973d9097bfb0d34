package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sanitize"
)

// Issue 35: the computation path is --path; the old --method is accepted
// for one release, hidden, with a warning, and gives the same release.
func TestSanitizePathFlag(t *testing.T) {
	t.Parallel()
	dir, in, prior := samplePaths(t)
	release := func(name string, flags ...string) (traces []byte, cert *sanitize.Certificate, stderr string) {
		t.Helper()
		out := filepath.Join(dir, name+".plt")
		args := append([]string{"sanitize", "--in", in, "--out", out, "--prior", prior,
			"--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "7"}, flags...)
		_, errb, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		c, err := sanitize.ReadCertificateFile(out + ".cert.json")
		if err != nil {
			t.Fatal(err)
		}
		return b, c, errb
	}
	got := map[string][]byte{}
	for _, p := range []string{"dense", "linear"} {
		newB, newC, newErr := release("path-"+p, "--path", p)
		oldB, oldC, oldErr := release("method-"+p, "--method", p)
		if string(newC.Path) != p || string(oldC.Path) != p {
			t.Errorf("%s: certificates say path %q (--path) and %q (--method)", p, newC.Path, oldC.Path)
		}
		if !bytes.Equal(newB, oldB) {
			t.Errorf("%s: --method released other traces than --path", p)
		}
		if strings.Contains(newErr, "renamed") {
			t.Errorf("--path %s warned: %s", p, newErr)
		}
		if !strings.Contains(oldErr, methodRenamed) {
			t.Errorf("--method %s: no warning on stderr, got %q", p, oldErr)
		}
		got[p] = newB
	}
	// The flag chooses the path: the same seed through the other path is
	// other noise (a flag that is ignored would give the same bytes).
	if bytes.Equal(got["dense"], got["linear"]) {
		t.Error("--path dense and --path linear released the same traces")
	}
	_, _, err := run(t, "sanitize", "--in", in, "--out", filepath.Join(dir, "x.plt"), "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "7", "--method", "dense", "--path", "linear")
	if err == nil || cli.ErrorCode(err) != cli.CodeInvalidFlag || !strings.Contains(err.Error(), "--path") {
		t.Errorf("--method dense --path linear: %v", err)
	}
	help, _, _ := run(t, "sanitize", "--help")
	if !strings.Contains(help, "--path string") || strings.Contains(help, "--method") {
		t.Errorf("sanitize --help shows --method or not --path:\n%s", help)
	}
}
