// Package testrun is what the test binaries of tracepriv's packages set up
// before their tests run. Their tests allocate fast from a live heap of a
// few megabytes, so at the collector's default heap target (GOGC=100) it
// ran hundreds of times a second: a larger target cut cmd/tracepriv's test
// CPU time by 40 to 60 %, and under go test ./... the other packages'
// tests had waited for the cores the collector took.
// A package opts in with
//
//	func TestMain(m *testing.M) { testrun.Main(m) }
//
// or calls TuneGC from a TestMain of its own. No test result depends on
// the collector; see BENCHMARKS.md, issue 26, for the measurements.
package testrun

import (
	"os"
	"runtime/debug"
	"testing"
)

// GCPercent is the collector's heap target, in percent of the live heap,
// that TuneGC sets: four times the default. A test binary's peak memory
// stays at a few hundred megabytes; 1000 saved little more.
const GCPercent = 400

// TuneGC sets the collector's heap target to GCPercent unless GOGC is set,
// so that GOGC=100 still measures the default.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}

// Main calls TuneGC, runs the tests and exits with their status.
func Main(m *testing.M) {
	TuneGC()
	os.Exit(m.Run())
}
