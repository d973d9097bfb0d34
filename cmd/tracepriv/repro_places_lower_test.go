package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReproPlacesLowerFlags checks that the every-window flags are
// validated before anything is computed: an unknown --windows, a
// --cut-windows below 1, a negative --stop-below and a non-positive
// --extra-lengthscales are refused, each naming the flag.
func TestReproPlacesLowerFlags(t *testing.T) {
	t.Parallel()
	in := filepath.Join("..", "..", "internal", "sample", "synth-1", "commute.plt")
	pr := filepath.Join("..", "..", "internal", "sample", "prior.json")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--windows", "all"}, "--windows"},
		{[]string{"--windows", "every", "--cut-windows", "0"}, "--cut-windows"},
		{[]string{"--stop-below", "-1"}, "--stop-below"},
		{[]string{"--extra-lengthscales", "25,-3"}, "--extra-lengthscales"},
	} {
		_, stderr, err := run(t, append([]string{"repro", "places-lower-bound", "--in", in, "--prior", pr}, c.flags...)...)
		if err == nil || !strings.Contains(stderr+err.Error(), c.want) {
			t.Errorf("%v: error %v, stderr %q: want a refusal naming %s", c.flags, err, stderr, c.want)
		}
	}
}
