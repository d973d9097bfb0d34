package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/trajdb"
)

// "tracepriv synthesize" is the trajectory-database release under its new
// name; "tracepriv release", its old name, still runs it for one release
// with a warning on stderr, and writes the same seeded files.
func TestSynthesizeAndItsOldName(t *testing.T) {
	t.Parallel()
	const warning = `"tracepriv release" is now "tracepriv synthesize"`
	outs := map[string]string{}
	for _, name := range []string{"synthesize", "release"} {
		out := filepath.Join(t.TempDir(), "db")
		_, stderr, err := run(t, name, "--in", "../../internal/sample", "--out", out, "--mechanism", "prefix",
			"--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox, "--max-len", "3", "--max-seqs", "1", "--seed", "3")
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		if got, want := strings.Contains(stderr, warning), name == "release"; got != want {
			t.Errorf("%s: warning on stderr %v, want %v:\n%s", name, got, want, stderr)
		}
		outs[name] = out
	}
	for _, f := range []string{trajdb.SeqFile, trajdb.CertificateFile} {
		a, errA := os.ReadFile(filepath.Join(outs["synthesize"], f))
		b, errB := os.ReadFile(filepath.Join(outs["release"], f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between the two names (%v, %v)", f, errA, errB)
		}
	}
}
