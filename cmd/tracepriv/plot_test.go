package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPlotCommandsDrawThroughViz: the commands draw through package viz
// only; none imports gonum/plot itself, so a change of plotting library
// stays in viz.
func TestPlotCommandsDrawThroughViz(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, "gonum.org/v1/plot") {
				t.Errorf("%s imports %s: draw through viz", f, p)
			}
		}
	}
}
