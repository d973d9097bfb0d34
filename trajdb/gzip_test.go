package trajdb

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSequenceFilesGzip: a gzip sequence file (MSNBC ships as
// msnbc.dat.gz) reads as its text, by content, through every file reader:
// ReadSequencesFile, SynthesizeSequencesFile and ReadSynthesis's sequences.
func TestSequenceFilesGzip(t *testing.T) {
	t.Parallel()
	const text = "1 2 3\n4\n17 17\n2 2 2 2\n"
	dir := t.TempDir()
	plain, gz := filepath.Join(dir, "m.seq"), filepath.Join(dir, "m.dat.gz")
	os.WriteFile(plain, []byte(text), 0o644)
	os.WriteFile(gz, gzipped(t, text), 0o644)
	opt := SeqOptions{Size: 17, Base: 1}
	want, err := ReadSequencesFile(plain, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadSequencesFile(gz, opt)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("gzip file: %+v, %v; want %+v", got, err, want)
	}
	m := &Prefix{Contribution: Bounds{MaxLen: 5, MaxSeqs: 1}}
	r1, s1, err := SynthesizeSequencesFile(m, plain, opt, 1, noise.Seeded(3))
	if err != nil {
		t.Fatal(err)
	}
	r2, s2, err := SynthesizeSequencesFile(m, gz, opt, 1, noise.Seeded(3))
	if err != nil || !reflect.DeepEqual(s1, s2) || !reflect.DeepEqual(r1.Seqs, r2.Seqs) {
		t.Fatalf("streamed gzip release differs: %+v %+v, %v", s2, s1, err)
	}
}

// TestBinarySequenceFileErrorIsShort: a binary file (here gzip damaged so
// that it no longer starts with the magic bytes, as a file compressed
// some other way would be) is refused with an error that quotes a short,
// escaped excerpt and says the file is binary, not ~2 KB of its bytes.
func TestBinarySequenceFileErrorIsShort(t *testing.T) {
	t.Parallel()
	b := gzipped(t, strings.Repeat("1 2 3 4 5 6 7 8 9 10\n", 2000))
	b[0] = 'x'
	p := filepath.Join(t.TempDir(), "m.dat")
	os.WriteFile(p, b, 0o644)
	_, err := ReadSequencesFile(p, SeqOptions{Size: 17, Base: 1})
	if err == nil {
		t.Fatal("binary file read without error")
	}
	msg := err.Error()
	if len(msg) > 400 || !strings.Contains(msg, "binary") || strings.ContainsRune(msg, '\uFFFD') {
		t.Errorf("error of %d bytes: %q", len(msg), msg)
	}
}
