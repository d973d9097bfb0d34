package testrun

import (
	"flag"
	"runtime"
	"strconv"
)

// RaiseParallel lets n tests marked t.Parallel run at once (go test's
// -parallel; default GOMAXPROCS) unless the command line set -parallel:
// for a package whose tests mostly wait (a browser, fsync, a database
// server), so that their waits overlap rather than queue behind the
// number of cores. It never lowers the default. fs is the test binary's
// flag set (flag.CommandLine, parsed: call flag.Parse first in TestMain).
func RaiseParallel(fs *flag.FlagSet, n int) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && n > runtime.GOMAXPROCS(0) {
		fs.Set("test.parallel", strconv.Itoa(n))
	}
}
