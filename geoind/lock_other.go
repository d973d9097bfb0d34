//go:build !unix

package geoind

// lockState is a no-op where flock is unavailable; callers must not run
// concurrent queries on one state file there.
func lockState(path string) (func(), error) { return func() {}, nil }
