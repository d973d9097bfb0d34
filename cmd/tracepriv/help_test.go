package main

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpFiles checks that every help/*.txt file belongs to a command
// and every command that asks for a help file has one (help panics
// otherwise, which building the root command would show).
func TestHelpFiles(t *testing.T) {
	root := newRootCmd(&strings.Builder{}, &strings.Builder{})
	paths := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		p := strings.TrimPrefix(c.CommandPath(), "tracepriv ")
		paths[strings.ReplaceAll(p, " ", "-")+".txt"] = true
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	files, err := fs.ReadDir(helpFS, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !paths[f.Name()] {
			t.Errorf("help/%s belongs to no command", f.Name())
		}
	}
}
