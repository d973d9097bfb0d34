package main

import (
	"embed"
	"strings"
)

// Help texts live in help/*.txt, one file per command path with spaces
// as dashes ("sdp solve" is help/sdp-solve.txt), so that the Go files
// hold the wiring and a writer can edit the prose without reading code.
// A file may hold a "--- example" line: the text above it is the Long
// help, the text below the Example.
//
//go:embed help
var helpFS embed.FS

// help returns the Long text and Example of a command path. A missing
// file is a programming error caught by TestHelpFiles.
func help(path string) (long, example string) {
	b, err := helpFS.ReadFile("help/" + strings.ReplaceAll(path, " ", "-") + ".txt")
	if err != nil {
		panic("tracepriv: no help text for " + path + ": " + err.Error())
	}
	s := strings.TrimRight(string(b), "\n")
	long, example, _ = strings.Cut(s, "\n--- example\n")
	return long, example
}
