package trace

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestReadFileGzipByContent: every format reads the same from a gzip file
// as from the plain one, whether the name ends in .gz or not (the magic
// bytes decide), and a directory's NAME.EXT.gz files are trace files.
func TestReadFileGzipByContent(t *testing.T) {
	for _, f := range Formats {
		dir := t.TempDir()
		traces := sampleTraces()
		if f == PLT {
			traces = traces[:1] // one trace per file
		}
		plain := writeAll(t, f, traces)
		ext := "." + string(f)
		paths := map[string][]byte{
			"plain" + ext:         plain,
			"named" + ext + ".gz": gzipBytes(t, plain),
			"bare" + ext:          gzipBytes(t, plain), // compressed, named as plain
		}
		var want []*Trace
		for _, name := range []string{"plain" + ext, "named" + ext + ".gz", "bare" + ext} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, paths[name], 0o644); err != nil {
				t.Fatal(err)
			}
			got, _, err := ReadFile(p, ReadOptions{UID: "x"})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, tr := range got {
				tr.Name = "" // named after the file
			}
			if want == nil {
				want = got
				continue
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d traces, want the plain file's %d", name, len(got), len(want))
			}
			for i := range want {
				if got[i].UID != want[i].UID {
					t.Errorf("%s: trace %d of uid %q, want %q", name, i, got[i].UID, want[i].UID)
				}
				comparePoints(t, name, got[i].Points, want[i].Points, 0, 0, 0, true)
			}
		}
		files, _, err := Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 3 {
			t.Errorf("%s: Files found %v, want all three", f, files)
		}
	}
	if got := FileUID("dir/008.plt.gz"); got != "008" {
		t.Errorf("FileUID(008.plt.gz) = %q, want 008", got)
	}
}

// TestBinaryInputErrorIsShort: a binary file (compressed some other way,
// or random bytes) read as a trace gives an error that quotes at most a
// short escaped excerpt, never the bytes themselves.
func TestBinaryInputErrorIsShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 4000)
	for i := range junk {
		junk[i] = byte(rng.IntN(256))
		if junk[i] == '\n' {
			junk[i] = 0x9d
		}
	}
	junk = append(junk, '\n')
	for _, f := range []Format{CSV, PLT} {
		p := filepath.Join(t.TempDir(), "junk."+string(f))
		if err := os.WriteFile(p, append([]byte("lat,lon,time\n"), junk...), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadFile(p, ReadOptions{UID: "x", Strict: true})
		if err == nil {
			t.Fatalf("%s: junk read without error", f)
		}
		msg := err.Error()
		if len(msg) > 600 || !isText(msg) || strings.ContainsRune(msg, '\uFFFD') {
			t.Errorf("%s: error of %d bytes, or not clean text: %q", f, len(msg), msg)
		}
	}
}
