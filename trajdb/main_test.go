package trajdb

import (
	"testing"

	"github.com/tracepriv/tracepriv/internal/testrun"
)

// TestMain raises the collector's heap target (testrun.Main): the n-gram
// and audit tests allocate fast from a small live heap.
func TestMain(m *testing.M) { testrun.Main(m) }
