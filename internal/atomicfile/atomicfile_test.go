package atomicfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteKeepsOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteBytes(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "old" {
		t.Errorf("file = %q, want old content", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary file left behind: %v", ents)
	}
}

// TestWriteJSONIsTheCommandOutput checks that a result file holds the same
// bytes as the command's --json output (an indenting json.Encoder), HTML
// characters and final newline included, so that a reproduction's JSON
// file can be compared with its output byte for byte.
func TestWriteJSONIsTheCommandOutput(t *testing.T) {
	v := map[string]any{"label": "a < b & c > d", "values": []float64{1, 2.5e-300}, "inf": "+Inf"}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := WriteJSON(p, v); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("file\n%s\nencoder\n%s", got, want.Bytes())
	}
	if err := WriteJSON(p, map[string]any{"f": func() {}}); err == nil {
		t.Error("an unencodable value written")
	}
}
