package webtest

import (
	"flag"
	"os"
	"testing"

	"github.com/tracepriv/tracepriv/internal/testrun"
)

// browserTests is how many browser tests run at once unless -parallel says otherwise: they
// mostly wait for the page (its module, its server, its frames), so more of them than the
// machine has cores (go test's default) overlap well, in tabs of the one shared browser.
const browserTests = 4

// TestMain runs the browser tests browserTests at a time and stops the browser they share
// (sharedBrowser) after they ran.
func TestMain(m *testing.M) {
	flag.Parse()
	testrun.RaiseParallel(flag.CommandLine, browserTests)
	code := m.Run()
	stopSharedBrowser()
	os.Exit(code)
}
