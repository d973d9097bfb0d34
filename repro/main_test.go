package repro

import (
	"testing"

	"github.com/tracepriv/tracepriv/internal/testrun"
)

// TestMain runs the tests with a larger heap target for the collector
// (package testrun): these tests allocate fast from a small live heap.
func TestMain(m *testing.M) { testrun.Main(m) }
