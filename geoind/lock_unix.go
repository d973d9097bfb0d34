//go:build unix

package geoind

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockWait is how long a query waits for another one on the same state.
var lockWait = 10 * time.Second

// lockState takes an exclusive advisory lock on path+".lock", waiting up
// to lockWait for a concurrent query to finish. flock locks belong to the
// open file, so goroutines of one process exclude each other too.
func lockState(path string) (func(), error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("%s: lock: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s: session state is in use by another query (waited %v)", path, lockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
