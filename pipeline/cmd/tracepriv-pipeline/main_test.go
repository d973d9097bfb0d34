package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/prior"
)

// geolife returns the GeoLife excerpt, ../shared/data/geolife from the
// repository's root.
func geolife(t *testing.T) string {
	t.Helper()
	data := filepath.Join("..", "..", "..", "..", "shared", "data", "geolife")
	if _, err := os.Stat(data); err != nil {
		t.Skip("GeoLife data not found (../shared/data/geolife from the repository root)")
	}
	return data
}

// TestFitCommand fits a prior with --family and reads it back.
func TestFitCommand(t *testing.T) {
	data := geolife(t)
	out := filepath.Join(t.TempDir(), "prior.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"fit", "--input", filepath.Join(data, "000", "*.plt"), "--output", out, "--family", "0.1,0.9"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	p, err := prior.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fq := *p.Fit.FamilyQuantiles; fq != [2]float64{0.1, 0.9} || !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("family %v; output %s", fq, stdout.String())
	}
	// Not over an existing file without --force.
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"fit", "--input", filepath.Join(data, "000", "*.plt"), "--output", out}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "exists") {
		t.Errorf("existing output: exit %d, %s", code, stderr.String())
	}
}

// TestCommandErrors: usage errors exit 2, bad values 1, with a message
// that names the flag.
func TestCommandErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, "usage"},
		{"unknown command", []string{"nope"}, 2, "unknown command"},
		{"unknown flag", []string{"sanitize", "--bogus"}, 2, "bogus"},
		{"no output", []string{"sanitize", "--input", "x"}, 1, "--output is required"},
		{"missing prior", []string{"sanitize", "--input", "x", "--output", "y", "--prior", "/nonexistent.json", "--epsilon", "1", "--lambda", "2", "--radius", "1"}, 1, "--prior"},
		{"bad family", []string{"fit", "--input", "x", "--output", "y", "--family", "0.8,0.2"}, 1, "--family"},
		{"no mechanism", []string{"release", "--input", "x", "--output", "y"}, 1, "--mechanism is required"},
		{"max-seqs 0", []string{"release", "--input", "x", "--output", "y", "--mechanism", "prefix", "--epsilon", "1", "--cell-m", "500", "--bbox", "1,2,3", "--max-seqs", "0"}, 1, "--max-seqs"},
		{"bad bbox", []string{"release", "--input", "x", "--output", "y", "--mechanism", "prefix", "--epsilon", "1", "--cell-m", "500", "--bbox", "1,2,3"}, 1, "bbox"},
		{"unknown mechanism", []string{"release", "--input", "x", "--output", "y", "--mechanism", "flawed", "--epsilon", "1", "--cell-m", "500", "--bbox", "39.75,116.15,40.10,116.60"}, 1, "unknown mechanism"},
	} {
		// Not in parallel: the command configures the process's logging.
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), c.args, &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
			}
		})
	}
}

// TestPathFlag: --path is the computation path, and --method, its name
// before, still reaches it for one release, with a warning on stderr. An
// unknown path is refused by sanitize's checks before any input is read, so
// the error shows which value arrived.
func TestPathFlag(t *testing.T) {
	base := []string{"sanitize", "--input", filepath.Join(t.TempDir(), "none"), "--output", filepath.Join(t.TempDir(), "out"),
		"--prior", filepath.Join("..", "..", "..", "internal", "sample", "prior.json"),
		"--epsilon", "1", "--lambda", "2", "--radius", "50", "--no-ledger"}
	const warning = "--method is now --path"
	for _, c := range []struct {
		name     string
		args     []string
		code     int
		want     string
		warnsOld bool
	}{
		{"path", []string{"--path", "quick"}, 1, "quick", false},
		{"method", []string{"--method", "quick"}, 1, "quick", true},
		{"method valid, path default", []string{"--method", "slow"}, 1, "slow", true},
		{"both agree", []string{"--method", "quick", "--path", "quick"}, 1, "quick", true},
		{"both differ", []string{"--method", "dense", "--path", "linear"}, 1, "give --path alone", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(append([]string{}, base...), c.args...), &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
			}
			if got := strings.Contains(stderr.String(), warning); got != c.warnsOld {
				t.Errorf("%q: warning about --method on stderr %v, want %v: %q", c.args, got, c.warnsOld, stderr.String())
			}
		})
	}
}

// TestSynthesizeName: "synthesize" runs the trajectory-database job, and
// "release", its old name, still does for one release, with a warning.
func TestSynthesizeName(t *testing.T) {
	const warning = `"release" is now "synthesize"`
	for _, name := range []string{"synthesize", "release"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{name, "--input", "x", "--output", "y"}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "--mechanism is required") {
			t.Errorf("%s: exit %d, stderr %q; want 1 and the synthesize job's flag check", name, code, stderr.String())
		}
		if got, want := strings.Contains(stderr.String(), warning), name == "release"; got != want {
			t.Errorf("%s: warning on stderr %v, want %v: %q", name, got, want, stderr.String())
		}
	}
}
