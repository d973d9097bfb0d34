package sanitize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ParseSecrets takes what --secrets took: all, a list, a file (its
// secrets the list's), and refuses a path that names nothing or a
// directory rather than parsing it as times.
func TestParseSecrets(t *testing.T) {
	if s, err := ParseSecrets("all"); s != nil || err != nil {
		t.Errorf("all: %v, %v", s, err)
	}
	list := "2024-03-12T00:05:22Z,1710202000;2024-03-12T00:07:00+00:00"
	want, err := ParseSecretTimes(list)
	if err != nil || len(want) != 2 || len(want[1]) != 2 {
		t.Fatalf("ParseSecretTimes: %v, %v", want, err)
	}
	got, err := ParseSecrets(list)
	if err != nil || len(got) != 2 || !got[1][1].Equal(want[1][1]) {
		t.Errorf("list: %v, %v", got, err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.txt")
	os.WriteFile(file, []byte("# a comment\n2024-03-12T00:05:22Z\n\n1710202000;2024-03-12T00:07:00+00:00\n"), 0o644)
	got, err = ParseSecrets(file)
	if err != nil || len(got) != 2 || !got[0][0].Equal(want[0][0]) || !got[1][0].Equal(want[1][0]) {
		t.Errorf("file: %v, %v", got, err)
	}
	for v, msg := range map[string]string{
		filepath.Join(dir, "missing.txt"): "give a file of secrets",
		"missing.txt":                     "give a file of secrets",
		dir:                               "is a directory",
		"yesterday":                       "yesterday",
	} {
		if _, err := ParseSecrets(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", v, err, msg)
		}
	}
	// A time with a fraction is a time, not a file name with an extension.
	if s, err := ParseSecrets("1710202000.5"); err != nil || len(s) != 1 {
		t.Errorf("1710202000.5: %v, %v", s, err)
	}
}
