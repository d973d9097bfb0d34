//go:build !unix

package geoind

import "time"

// lockWait is unused where flock is unavailable.
var lockWait = 10 * time.Second

// lockState is a no-op where flock is unavailable; callers must not run
// concurrent queries on one state file there.
func lockState(path string) (func(), error) { return func() {}, nil }
