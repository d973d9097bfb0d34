package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/internal/testrun"
)

// childEnv, when set, makes the test binary run tracepriv with the
// arguments after "--" instead of the tests: tests that kill a release
// mid-run (SIGKILL) start the binary again as a child process.
const childEnv = "TRACEPRIV_TEST_CHILD"

// TestMain runs the tests with a larger heap target for the collector
// (package testrun): these tests allocate fast from a small live heap. The
// user configuration directory (the default ledger, geoind's keys) is a
// temporary one, so that no test reads or charges the real ledger.
func TestMain(m *testing.M) {
	if args, ok := testrun.ChildArgs(childEnv); ok {
		os.Exit(runMain(args, os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "tracepriv-test-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	code := func() int {
		defer os.RemoveAll(dir)
		defer pgtest.StopShared() // ledgertest's PostgreSQL cluster
		testrun.TuneGC()
		return m.Run()
	}()
	os.Exit(code)
}
