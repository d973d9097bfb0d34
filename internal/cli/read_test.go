package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/trace"
)

func TestReportSkipped(t *testing.T) {
	rep := &trace.Report{}
	var quiet bytes.Buffer
	(&Env{Stderr: &quiet}).ReportSkipped(rep)
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
	(&Env{Stderr: &b}).ReportSkipped(rep)
	out := b.String()
	for _, want := range []string{"6 of 13 rows skipped or merged", "5 duplicate_fix", f + ":9, " + f + ":11, " + f + ":13, ...", "1 bad_coordinate", f + ":18", `e.g. ` + f + `:18: field "lat": "95" is out of range`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	(&Env{Stderr: &b, Quiet: true}).ReportSkipped(rep)
	if b.Len() != 0 {
		t.Errorf("--quiet printed %q", b.String())
	}
	if in := rep.Summary(); in.SkippedRows != 6 || in.SkippedByReason[trace.ReasonDuplicate] != 5 {
		t.Errorf("summary %+v", in)
	}
}

// TestHintCorpus: a folder read as one person with several child folders
// is pointed to --corpus; with --corpus, a person's folder holding
// GeoLife's layout of several users (GeoLife's Data, given from the
// folder above it) is pointed to itself as the corpus, quoted for the
// shell; one user there, or --quiet, says nothing.
func TestHintCorpus(t *testing.T) {
	root := filepath.Join(t.TempDir(), "Geolife Trajectories 1.3")
	for _, f := range []string{"Data/000/Trajectory/a.plt", "Data/001/Trajectory/2008/b.plt", "Other/002/Trajectory/c.plt"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hint := func(corpus, quiet bool) string {
		var b bytes.Buffer
		(&Env{Stderr: &b, Quiet: quiet}).HintCorpus(&ReadFlags{Corpus: corpus}, root)
		return b.String()
	}
	data := filepath.Join(root, "Data")
	got := hint(true, false)
	if want := `GeoLife's layout of 2 users (000, 001), read as one person, "Data"; to make each user a person, give --in "` + data + `" --corpus`; !strings.Contains(got, want) {
		t.Errorf("--corpus: %q, want it to contain %q", got, want)
	}
	if strings.Count(got, "tracepriv: ") != 1 || strings.Contains(got, "Other") {
		t.Errorf("--corpus: a hint for a folder of one GeoLife user: %q", got)
	}
	if got := hint(false, false); !strings.Contains(got, `read as one person, "Geolife Trajectories 1.3", with its 2 folders (Data, Other)`) {
		t.Errorf("without --corpus: %q", got)
	}
	if got := hint(true, true) + hint(false, true); got != "" {
		t.Errorf("--quiet: %q", got)
	}
}
