package cli

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	s := "an adversary who must tell two places 100 m apart guesses right at most 69.1 % of the time"
	got := Wrap(s, 20)
	for _, l := range strings.Split(got, "\n") {
		if len([]rune(l)) > 20 {
			t.Errorf("line %q longer than 20", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != s {
		t.Errorf("words changed: %q", got)
	}
	if got := Wrap("a 69.1 %", 6); got != "a\n69.1 %" {
		t.Errorf("a per cent sign alone on a line: %q", got)
	}
	if Wrap("abcdefghijklmnopqrstuvwxyz x", 5) != "abcdefghijklmnopqrstuvwxyz\nx" {
		t.Errorf("a long word: %q", Wrap("abcdefghijklmnopqrstuvwxyz x", 5))
	}
}
