package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseGzipInput: release --in FILE.gz reads the compressed sequence
// file as shipped (issue 32: MSNBC's msnbc.dat.gz was parsed as text and
// ~1,900 bytes of binary went into the error), and so does a gzip file
// named without .gz.
func TestReleaseGzipInput(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 300 {
		text.WriteString([]string{"1 2 3\n", "2 2\n", "3 1 1 2\n"}[i%3])
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(text.String()))
	w.Close()
	for _, name := range []string{"msnbc.dat.gz", "renamed.seq"} {
		in := filepath.Join(dir, name)
		os.WriteFile(in, gz.Bytes(), 0o644)
		stdout, _, err := run(t, "release", "--in", in, "--alphabet", "3", "--base", "1", "--out", filepath.Join(dir, name+"-rel"),
			"--mechanism", "ngram", "--epsilon", "1", "--max-len", "4", "--max-seqs", "1", "-q", "--json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var o struct {
			Operator struct {
				Sequences struct {
					Sequences int `json:"sequences"`
				} `json:"sequences"`
			} `json:"operator"`
		}
		if err := json.Unmarshal([]byte(stdout), &o); err != nil || o.Operator.Sequences.Sequences != 300 {
			t.Errorf("%s: read %d sequences (%v), want 300", name, o.Operator.Sequences.Sequences, err)
		}
	}
	// A binary file that is not gzip: a short escaped excerpt, not its bytes.
	bin := filepath.Join(dir, "damaged.dat")
	b := bytes.Clone(gz.Bytes())
	b[0] = 'x'
	os.WriteFile(bin, b, 0o644)
	_, _, err := run(t, "release", "--in", bin, "--alphabet", "3", "--base", "1", "--out", filepath.Join(dir, "bin-rel"),
		"--mechanism", "ngram", "--epsilon", "1", "-q")
	if err == nil || len(err.Error()) > 600 || strings.ContainsRune(err.Error(), '\uFFFD') {
		t.Errorf("binary input: %v", err)
	}
}
