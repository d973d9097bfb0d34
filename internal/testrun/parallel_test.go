package testrun

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// RaiseParallel raises an unset -parallel, keeps one the command line set,
// and never lowers the default.
func TestRaiseParallel(t *testing.T) {
	fresh := func(args ...string) *flag.FlagSet {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.Int("test.parallel", runtime.GOMAXPROCS(0), "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	want := runtime.GOMAXPROCS(0) + 3
	fs := fresh()
	RaiseParallel(fs, want)
	if got := fs.Lookup("test.parallel").Value.String(); got != strconv.Itoa(want) {
		t.Errorf("unset: -parallel %s, want %d", got, want)
	}
	fs = fresh("-test.parallel=1")
	RaiseParallel(fs, want)
	if got := fs.Lookup("test.parallel").Value.String(); got != "1" {
		t.Errorf("set to 1 on the command line: -parallel %s, want it kept", got)
	}
	fs = fresh()
	RaiseParallel(fs, 1)
	if got := fs.Lookup("test.parallel").Value.String(); got != strconv.Itoa(runtime.GOMAXPROCS(0)) {
		t.Errorf("asked for 1: -parallel %s, want the default %d kept", got, runtime.GOMAXPROCS(0))
	}
}
