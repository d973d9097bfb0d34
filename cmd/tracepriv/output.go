package main

import (
	"github.com/tracepriv/tracepriv/internal/cli"
)

// Every command that writes files checks its outputs with checkOutputs
// (cli.CheckOutputs) before any work, and writes each file atomically.
var (
	checkOutputs = cli.CheckOutputs
	checkOut     = cli.CheckOut
	checkFinite  = cli.CheckFinite
	absPath      = cli.AbsPath
)
