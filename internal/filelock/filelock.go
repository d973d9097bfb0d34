// Package filelock takes exclusive advisory locks on files, so that
// concurrent processes (and goroutines) serialise their updates of a
// shared record such as a budget ledger.
package filelock

import (
	"errors"
	"fmt"
	"time"
)

// ErrBusy is wrapped by Lock when the lock stayed held for the whole wait.
var ErrBusy = errors.New("locked by another process")

// Lock takes an exclusive lock on the file path (created if missing, mode
// 0600), waiting up to wait for another holder to release it, and returns
// the function that releases it. On Unix it is flock(2), which belongs to
// the open file: goroutines of one process exclude each other too, and
// the lock goes away with a process that dies. Elsewhere it is the
// existence of the file (O_EXCL), which a crashed process leaves behind;
// the error then says to remove it.
func Lock(path string, wait time.Duration) (func(), error) {
	deadline := time.Now().Add(wait)
	for {
		unlock, busy, err := try(path)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !busy {
			return unlock, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: %w (waited %v)%s", path, ErrBusy, wait, staleHint)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
