package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
)

// traceReaders are the commands that read traces. Each takes --lenient (a
// no-op) and --strict.
var traceReaders = []string{"convert", "inspect", "plot", "fit", "geoind sanitize", "repro predictive", "cip loss", "cip design", "sanitize", "attack"}

func TestTraceReadersTakeLenientAndStrict(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	for _, path := range traceReaders {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.CommandPath() != "tracepriv "+path {
			t.Fatalf("%s: %v", path, err)
		}
		for _, flag := range []string{"lenient", "strict", "from", "uid", "tz"} {
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", path, flag)
			}
		}
	}
}

// TestCIPTraceReport checks the reading report of "cip loss --trace": the
// secrets are indices into what was read, so what was skipped matters.
func TestCIPTraceReport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv")
	os.WriteFile(in, []byte("uid,time,lat,lon\na,0,39.9,116.3\na,5,39.9,116.3\na,5,39.9,116.3\na,3,39.9,116.3\na,10,39.9,116.3\n"), 0o644)
	args := []string{"cip", "loss", "--kernel", "rbf", "--lengthscale", "5", "--trace", in, "--iid", "1", "--all-secrets", "--json"}
	stdout, stderr, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	json.Unmarshal([]byte(stdout), &v)
	if v["skipped_rows"] != 2.0 || v["n"] != 3.0 || !strings.Contains(stderr, "1 time_backwards") {
		t.Errorf("skipped %v, n %v; stderr %s", v["skipped_rows"], v["n"], stderr)
	}
	if _, _, err := run(t, append(args, "--strict")...); err == nil || !strings.Contains(err.Error(), in+":5") {
		t.Errorf("strict: %v", err)
	}
	// Without --trace there is no reading report.
	stdout, _, err = run(t, "cip", "loss", "--kernel", "rbf", "--lengthscale", "5", "--n", "5", "--iid", "1", "--all-secrets", "--json")
	if err != nil || strings.Contains(stdout, "skipped_rows") {
		t.Errorf("--n: %v\n%s", err, stdout)
	}
}

func TestReportSkipped(t *testing.T) {
	rep := &trace.Report{}
	var quiet bytes.Buffer
	reportSkipped(&cli.Env{Stderr: &quiet}, rep)
	if quiet.Len() != 0 {
		t.Errorf("printed for a clean read: %q", quiet.String())
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "x.plt")
	head := "Geolife trajectory\nWGS 84\nAltitude is in Feet\nReserved 3\n0,2,255,My Track,0,0,2,8421376\n0\n"
	row := func(lat string, sec int) string {
		return lat + ",116.3,0,1,," + "2008-10-23,02:53:0" + string(rune('0'+sec)) + "\n"
	}
	body := head + row("39.9", 0)
	for i := 1; i <= 5; i++ {
		body += row("39.9", i) + row("39.9", i) // five exact repeats
	}
	body += row("95", 6) + row("39.9", 7)
	os.WriteFile(f, []byte(body), 0o644)
	_, rep, err := trace.ReadFile(f, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	reportSkipped(&cli.Env{Stderr: &b}, rep)
	out := b.String()
	for _, want := range []string{"6 of 13 rows skipped or merged", "5 duplicate_fix", f + ":9, " + f + ":11, " + f + ":13, ...", "1 bad_coordinate", f + ":18", `e.g. ` + f + `:18: field "lat": "95" is out of range`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	reportSkipped(&cli.Env{Stderr: &b, Quiet: true}, rep)
	if b.Len() != 0 {
		t.Errorf("--quiet printed %q", b.String())
	}
	if in := rep.Summary(); in.SkippedRows != 6 || in.SkippedByReason[trace.ReasonDuplicate] != 5 {
		t.Errorf("summary %+v", in)
	}
}
