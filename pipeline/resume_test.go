package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/pipeline/internal/filestate"
	"github.com/tracepriv/tracepriv/sanitize"
)

// TestSanitizeResumesKilledRun: a seeded release killed after some groups
// landed (simulated: what such a run leaves, the marker and no manifest)
// is resumed by the next run with the same options: the group whose
// certificate and files are all there is kept (its files not written
// again, counted in resumed_units); a group whose file was deleted after
// the kill, whose file was changed, whose certificate did not land, or of
// which nothing landed, or whose certificate states another order is
// released again; and the files, certificates and
// manifest are an uninterrupted run's but for timings and resumed_units.
// Releasing everyone again (the behaviour before) fails it.
func TestSanitizeResumesKilledRun(t *testing.T) {
	in := copyGeoLife(t, "000/20081029092138.plt", "001/20081027235802.plt", "003/20081025182454.plt", "004/20081024155859.plt", "007/20081025142200.plt", "002/20081028002304.plt")
	const seed = 31
	whole := filepath.Join(t.TempDir(), "whole")
	if _, err := Sanitize(context.Background(), testOptions(in, whole, seed)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "resumed")
	o := testOptions(in, out, seed)
	if _, err := Sanitize(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	key, err := o.ReleaseKey()
	if err != nil {
		t.Fatal(err)
	}
	// What a kill leaves: 001 landed whole; 000 landed but its file is
	// deleted after the kill; 007 landed but its file is cut after it;
	// 003's file landed, not its certificate; nothing of 004.
	for _, p := range []string{"manifest.json", "000/20081029092138.plt", "certificates/003" + sanitize.CertificateSuffix, "004", "certificates/004" + sanitize.CertificateSuffix} {
		if err := os.RemoveAll(filepath.Join(out, p)); err != nil {
			t.Fatal(err)
		}
	}
	cut := filepath.Join(out, "007", "20081025142200.plt")
	b, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	// 002 landed whole, but its certificate was edited to another order:
	// not this release's.
	c2 := filepath.Join(out, "certificates", "002"+sanitize.CertificateSuffix)
	if b, err = os.ReadFile(c2); err != nil {
		t.Fatal(err)
	}
	if edited := bytes.Replace(b, []byte(`"lambda": 2,`), []byte(`"lambda": 3,`), 1); bytes.Equal(edited, b) {
		t.Fatalf("%s states no lambda 2", c2)
	} else if err := os.WriteFile(c2, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, ReleaseMarker), []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kept := []string{"001/20081027235802.plt", "certificates/001" + sanitize.CertificateSuffix}
	before := map[string]string{}
	for _, p := range kept {
		before[p] = filestate.Of(t, filepath.Join(out, p))
	}

	res, err := Sanitize(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Resumed != 1 {
		t.Errorf("resumed_units %d, want 1 (001's group)", res.Manifest.Resumed)
	}
	for _, p := range kept {
		if got := filestate.Of(t, filepath.Join(out, p)); got != before[p] {
			t.Errorf("%s of the group kept was written again: %+v, was %+v", p, got, before[p])
		}
	}
	if _, err := os.Stat(filepath.Join(out, ReleaseMarker)); err == nil {
		t.Error("the finished release left its marker")
	}
	// Byte for byte an uninterrupted run's, but for timings.
	n := 0
	err = filepath.WalkDir(whole, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(whole, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		n++
		if strings.HasSuffix(rel, ".json") {
			want, got = untimed(t, want), untimed(t, got)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from an uninterrupted run's:\n%s\nwant\n%s", rel, got, want)
		}
		return nil
	})
	if err != nil || n != 13 {
		t.Fatalf("compared %d files (want 6 traces, 6 certificates, the manifest): %v", n, err)
	}
	entries, _ := os.ReadDir(filepath.Join(out, "certificates"))
	if len(entries) != 6 {
		t.Errorf("%d entries under certificates/ (want the 6 certificates): %v", len(entries), entries)
	}
}

// untimed is a certificate or manifest without what differs between runs
// of one seeded release: the seconds it took, and the units resumed.
func untimed(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "seconds")
	delete(m, "resumed_units")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
