package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sanitize"
)

// Every {{meaning}} of a help file is filled with the library's words and
// wrapped: no placeholder is left, no line is wider than the help width,
// and sanitize's help says what the library says epsilon 1 means.
func TestHelpMeaning(t *testing.T) {
	root := newRootCmd(&strings.Builder{}, &strings.Builder{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if strings.Contains(c.Long, "{{") {
			t.Errorf("%s: a placeholder is left in the help", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	c, _, err := root.Find([]string{"sanitize"})
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(sanitize.MeaningOf(1, 2, 100).Text)
	if !strings.Contains(strings.Join(strings.Fields(c.Long), " "), strings.Join(words, " ")) {
		t.Errorf("sanitize --help does not say what epsilon 1 means: %q", words)
	}
	for _, l := range strings.Split(c.Long, "\n") {
		if strings.Contains(l, "adversary") && len([]rune(l)) > cli.HelpWidth {
			t.Errorf("sanitize --help: line wider than %d: %q", cli.HelpWidth, l)
		}
	}
}
