package pipeline

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/budget"
)

// pipelineBinary builds the command once, for the tests that run it as a
// person would.
func pipelineBinary(t *testing.T) string {
	t.Helper()
	shared.binary.Do(func() {
		shared.binaryPath = filepath.Join(shared.dir, "tracepriv-pipeline")
		out, err := exec.Command("go", "build", "-o", shared.binaryPath, "./cmd/tracepriv-pipeline").CombinedOutput()
		if err != nil {
			shared.binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if shared.binaryErr != nil {
		t.Fatal(shared.binaryErr)
	}
	return shared.binaryPath
}

// runBinary runs the command with args and returns its output; it fails
// the test unless the command exits 0.
func runBinary(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(pipelineBinary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("tracepriv-pipeline %s: %v\n%s%s", strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// TestCommandSanitize runs the issue's interface, `tracepriv-pipeline
// sanitize --input GLOB --corpus --output DIR --prior P --epsilon E --lambda L
// --radius M --seed N --runner prism`, and finds the single machine's
// seeded release, manifest.json included (but for its timing).
func TestCommandSanitize(t *testing.T) {
	root := geolife(t)
	// What tracepriv sanitize --seed 11 writes: a seeded run is not
	// charged, and its certificates say so.
	want := filepath.Join(t.TempDir(), "single")
	m := singleMachineLedger(t, root, want, 11, budget.Seeded)
	out := filepath.Join(t.TempDir(), "released")
	stdout, stderr := runBinary(t, "sanitize", "--input", filepath.Join(root, "**", "*.plt"), "--corpus", "--output", out,
		"--prior", filepath.Join("..", "internal", "sample", "prior.json"),
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "11", "--runner", "prism", "--allow-prior-overlap")
	if n := sameRelease(t, want, out); n != m.Files {
		t.Errorf("compared %d trace files, want %d", n, m.Files)
	}
	if !strings.Contains(stdout, "8 people, 107576 points from 78 files") || !strings.Contains(stdout, "seeded:11 (derived per person") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "NOT private") {
		t.Errorf("no warning about the seed on stderr:\n%s", stderr)
	}
}

// TestCommandRelease releases a trajectory database with the command and
// finds the single machine's seeded release.
func TestCommandRelease(t *testing.T) {
	root := geolife(t)
	out := filepath.Join(t.TempDir(), "db")
	o := testRelease(filepath.Join(root, "**", "*.plt"), out, "prefix", 5)
	want := t.TempDir()
	singleRelease(t, root, want, o)
	stdout, _ := runBinary(t, "release", "--input", o.Input, "--output", out, "--mechanism", "prefix",
		"--epsilon", fmt.Sprint(o.Epsilon), "--cell-m", fmt.Sprint(o.CellM), "--bbox", testBBox,
		"--max-len", fmt.Sprint(o.MaxLen), "--max-seqs", fmt.Sprint(o.MaxSeqs), "--seed", "5")
	sameFiles(t, want, out, SynthesisSeqFile, SynthesisCSVFile, SynthesisCertFile)
	for _, s := range []string{"of 8 persons from 78 traces, 107576 fixes", "bounded: 154 trajectories kept", "randomness seeded:5", "wrote trajectories.seq"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
}
