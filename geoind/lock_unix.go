//go:build unix

package geoind

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockState takes an exclusive advisory lock on path+".lock".
func lockState(path string) (func(), error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: session state is in use by another query", path)
		}
		return nil, fmt.Errorf("%s: lock: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
