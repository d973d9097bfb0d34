package testrun

import (
	"runtime/debug"
	"testing"
)

// TuneGC sets GCPercent when GOGC is not set and leaves an explicit GOGC
// alone.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	TuneGC()
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Errorf("GOGC unset: heap target %d %%, want %d %%", got, GCPercent)
	}
	t.Setenv("GOGC", "100")
	TuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100: heap target %d %%, want it left at 100 %%", got)
	}
}
