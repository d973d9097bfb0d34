package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// TestOutputsAreSafe: every command that writes a file refuses --out equal
// to its input (leaving the input as it was), refuses an existing output
// without --force and replaces it with --force.
func TestOutputsAreSafe(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, sample.Name)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "in.csv")
	if _, _, err := run(t, "convert", "--in", in, "--out", csv); err != nil {
		t.Fatal(err)
	}
	const origin = "39.9042,116.4074"
	for _, c := range []struct {
		name string
		// args writes to out; sameAsIn is an invocation with --out equal
		// to an input (nil where the output format cannot be an input).
		args     func(out string) []string
		sameAsIn []string
		ext      string
	}{
		{"convert", func(out string) []string { return []string{"convert", "--in", in, "--out", out} },
			[]string{"convert", "--in", csv, "--out", csv}, ".csv"},
		{"convert --to", nil, []string{"convert", "--in", in, "--out", in, "--to", "csv"}, ""},
		{"plot", func(out string) []string { return []string{"plot", in, "--out", out} }, nil, ".png"},
		// fit --kernel rbf: the output rules are the same, the kernel
		// comparison (TestFitCommandCompare) several times slower.
		{"fit", func(out string) []string { return []string{"fit", "--in", in, "--out", out, "--kernel", "rbf"} },
			[]string{"fit", "--in", csv, "--out", csv}, ".json"},
		{"fit --plot", func(out string) []string {
			return []string{"fit", "--in", in, "--out", filepath.Join(t.TempDir(), "p.json"), "--plot", out, "--kernel", "rbf"}
		}, nil, ".svg"},
		{"geoind sanitize", func(out string) []string {
			return []string{"geoind", "sanitize", "--in", in, "--out", out, "--origin", origin, "--rate", "0.033", "--allow-partial", "--seed", "1"}
		}, []string{"geoind", "sanitize", "--in", csv, "--out", csv, "--origin", origin, "--allow-partial"}, ".csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.sameAsIn != nil {
				victim := c.sameAsIn[len(c.sameAsIn)-1]
				for i, a := range c.sameAsIn {
					if a == "--out" {
						victim = c.sameAsIn[i+1]
					}
				}
				before, _ := os.ReadFile(victim)
				for _, force := range []bool{false, true} {
					args := c.sameAsIn
					if force {
						args = append(args[:len(args):len(args)], "--force")
					}
					_, _, err := run(t, append(args, "-q")...)
					if err == nil || !strings.Contains(err.Error(), "is the input file") {
						t.Errorf("%v: err = %v, want a refusal of --out = --in", args, err)
					}
					if after, _ := os.ReadFile(victim); !bytes.Equal(after, before) {
						t.Fatalf("%v changed the input", args)
					}
				}
			}
			if c.args == nil {
				return
			}
			out := filepath.Join(t.TempDir(), "out"+c.ext)
			const old = "an earlier file\n"
			os.WriteFile(out, []byte(old), 0o644)
			_, _, err := run(t, append(c.args(out), "-q")...)
			if err == nil || !strings.Contains(err.Error(), "exists; pass --force") {
				t.Errorf("existing output: err = %v, want a refusal naming --force", err)
			}
			if b, _ := os.ReadFile(out); string(b) != old {
				t.Fatal("the existing output was changed without --force")
			}
			if _, _, err := run(t, append(c.args(out), "-q", "--force")...); err != nil {
				t.Fatalf("--force: %v", err)
			}
			if b, _ := os.ReadFile(out); string(b) == old || len(b) == 0 {
				t.Error("--force did not replace the output")
			}
		})
	}
}

// An output that is one of the files an input directory holds would be
// read, then replaced: refused even with --force. Two outputs that are
// the same file, an output that is a directory and one in a missing
// directory are refused before any work.
func TestOutputsInsideInputAndClashes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "000", sample.Name)
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(dir, "000", "all.csv")
	if _, _, err := run(t, "convert", "--in", filepath.Join(dir, "000"), "--out", all, "-q"); err != nil {
		t.Fatalf("a new output in the input directory: %v", err)
	}
	before, _ := os.ReadFile(all)
	_, _, err := run(t, "convert", "--in", filepath.Join(dir, "000"), "--out", all, "--force", "-q")
	if err == nil || !strings.Contains(err.Error(), "is one of the input files") {
		t.Errorf("output read as input: %v", err)
	}
	if after, _ := os.ReadFile(all); !bytes.Equal(after, before) {
		t.Error("an input under --in DIR was replaced")
	}
	same := filepath.Join(dir, "p.svg")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--in", in, "--out", same, "--plot", same}, "are the same file"},
		{[]string{"convert", "--in", in, "--out", filepath.Join(dir, "000")}, "is a directory"},
		{[]string{"plot", in, "--out", filepath.Join(dir, "nodir", "x.svg")}, "does not exist (create it first)"},
		{[]string{"geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, "nodir", "x.csv"), "--origin", "39.9042,116.4074"}, "does not exist"},
	} {
		if _, _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(same); !os.IsNotExist(err) {
		t.Error("fit wrote a file despite the clash")
	}
}

// checkFinite refuses non-finite or out-of-range positions and infinite
// altitudes, naming the trace and the point; NaN altitude means none.
func TestCheckFinite(t *testing.T) {
	t0 := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	ok := &trace.Trace{UID: "a", Points: []trace.Point{{Time: t0, Lat: 39.9, Lon: 116.3, Alt: math.NaN()}}}
	if err := checkFinite("--out", "x.csv", []*trace.Trace{ok}); err != nil {
		t.Errorf("a valid trace refused: %v", err)
	}
	for _, p := range []trace.Point{
		{Time: t0, Lat: math.NaN(), Lon: 116.3},
		{Time: t0, Lat: 39.9, Lon: math.Inf(1)},
		{Time: t0, Lat: 91, Lon: 116.3},
		{Time: t0, Lat: 39.9, Lon: 116.3, Alt: math.Inf(-1)},
	} {
		bad := &trace.Trace{Name: "b", Points: []trace.Point{ok.Points[0], p}}
		err := checkFinite("--out", "x.csv", []*trace.Trace{ok, bad})
		if err == nil || !strings.Contains(err.Error(), "--out x.csv: trace 2 (b), point 2") || !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("%+v: err = %v", p, err)
		}
	}
}

// geoind query never replaces a --state that is not a session state, not
// even with --new-budget.
func TestGeoindQueryStateIsSafe(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	victim := filepath.Join(dir, sample.Name)
	if err := os.WriteFile(victim, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--new-budget"}} {
		args := append([]string{"geoind", "query", "--state", victim, "--origin", "39.9042,116.4074", "--lat", "39.98", "--lon", "116.3"}, extra...)
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "is not a session state") {
			t.Errorf("%v: err = %v", extra, err)
		}
		if b, _ := os.ReadFile(victim); !bytes.Equal(b, sample.PLT) {
			t.Fatalf("%v: the trace at --state was replaced", extra)
		}
	}
	if _, _, err := run(t, "geoind", "query", "--state", dir, "--lat", "39.98", "--lon", "116.3"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("--state DIR: %v", err)
	}
	// A real state is used and, with --new-budget, replaced.
	st := filepath.Join(dir, "me.json")
	for _, extra := range [][]string{nil, nil, {"--new-budget"}} {
		args := []string{"geoind", "query", "--state", st, "--lat", "39.98", "--lon", "116.3", "-q", "--uid", "me"}
		if extra != nil || !fileExists(st) {
			args = append(args, "--origin", "39.9042,116.4074")
		}
		if _, _, err := run(t, append(args, extra...)...); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
