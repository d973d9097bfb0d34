package infile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenNamed opens a file a person named, as Open does, with an error that
// says what is wrong and what to check: missing, unreadable, or a
// directory.
func OpenNamed(path string) (io.ReadCloser, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		// A *fs.PathError underneath: --json's code is io, as for a
		// missing file.
		return nil, Worded(&fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}, "%s is a directory; give a file", path)
	}
	f, err := Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, Worded(err, "%s: no such file (check the path)", path)
	case errors.Is(err, fs.ErrPermission):
		return nil, Worded(err, "%s: permission denied (the file must be readable)", path)
	}
	return f, err
}
