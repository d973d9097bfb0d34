package infile_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/tracepriv/tracepriv/internal/infile"
)

func TestWordedKeepsCause(t *testing.T) {
	err := infile.Worded(fs.ErrNotExist, "%s: no such file (check the path)", "a.plt")
	if err.Error() != "a.plt: no such file (check the path)" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%q, is ErrNotExist %v", err, errors.Is(err, fs.ErrNotExist))
	}
	if errors.Is(infile.Worded(nil, "x"), fs.ErrNotExist) {
		t.Fatal("a nil cause matched")
	}
}
