package main

import (
	"os"
	"path/filepath"

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

// renderToBytes returns the bytes save writes to a file named like path
// (save picks the format by the extension), so that a figure can join an
// atomicfile.WriteGroup.
func renderToBytes(path string, save func(tmp string) error) ([]byte, error) {
	dir, err := os.MkdirTemp("", "tracepriv-render-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "figure"+filepath.Ext(path))
	if err := save(tmp); err != nil {
		return nil, err
	}
	return os.ReadFile(tmp)
}
