package cli

import "strings"

// HelpWidth is the width help texts are wrapped to.
const HelpWidth = 78

// Wrap breaks s into lines of at most width characters at spaces (a word
// longer than width stays whole), for sentences a command computes into its
// help text, such as what its epsilon means.
func Wrap(s string, width int) string {
	// A per cent sign stays with its number: "69.1 %" is one word here.
	var words []string
	for _, w := range strings.Fields(s) {
		if w == "%" && len(words) > 0 {
			words[len(words)-1] += " %"
			continue
		}
		words = append(words, w)
	}
	var b strings.Builder
	n := 0
	for i, w := range words {
		l := len([]rune(w))
		switch {
		case i == 0:
		case n+1+l > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
