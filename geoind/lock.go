package geoind

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/internal/filelock"
)

// lockWait is how long a query waits for another one on the same state.
var lockWait = 10 * time.Second

// lockState takes an exclusive lock on path+".lock" (internal/filelock),
// waiting up to lockWait for a concurrent query to finish.
func lockState(path string) (func(), error) {
	unlock, err := filelock.Lock(path+".lock", lockWait)
	if errors.Is(err, filelock.ErrBusy) {
		return nil, fmt.Errorf("%s: session state is in use by another query (waited %v)", path, lockWait)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return unlock, nil
}
