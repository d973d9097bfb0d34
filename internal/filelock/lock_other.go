//go:build !unix

package filelock

import (
	"errors"
	"io/fs"
	"os"
)

const staleHint = "; if no other tracepriv process is running, a crashed one left the lock file: remove it"

func try(path string) (func(), bool, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	f.Close()
	return func() { os.Remove(path) }, false, nil
}
