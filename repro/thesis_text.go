// The text reports of "tracepriv repro thesis" (Chapters 5 and 6, and
// Example 3.7).

package repro

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteText prints the rows of Figs 5.1 and 5.3 at the epsilons the
// thesis quotes, and the files written.
func (res *ThesisResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Fig 5.1 (m = 11):\n  eps     GRR      SS       OUE      Laplace  Gaussian Thm5.2\n")
	for _, r := range res.Fig51 {
		if isOneOf(r.Epsilon, 0.5, 1, 2, 4, 8) {
			fmt.Fprintf(w, "  %-6g  %.5f  %.5f  %.5f  %.5f  %.5f  %.5f\n", r.Epsilon, r.GRR, r.SS, r.OUE, r.Laplace, r.Gaussian, r.Thm52)
		}
	}
	fmt.Fprintf(w, "Fig 5.3 (U[10], delta 1e-5):\n")
	for _, r := range res.Fig53 {
		if isOneOf(r.Epsilon, 0.5, 1, 2, 4) {
			fmt.Fprintf(w, "  eps %-4g Prop 5.13 %.5f  Thm 5.15 %.5f  OUE %.5f\n", r.Epsilon, r.Prop513, r.Thm515, r.OUE)
		}
	}
	_, err := fmt.Fprintf(w, "wrote %s\n", strings.Join(res.Files, ", "))
	return err
}

// isOneOf picks the grid points the text report shows (the grid's values
// are rounded to 1e-9).
func isOneOf(x float64, vs ...float64) bool {
	for _, v := range vs {
		if math.Abs(x-v) < 1e-9 {
			return true
		}
	}
	return false
}

// WriteText prints the findings of Example 3.7, one sentence each, and
// the attack's mean error on the flawed and the corrected mechanism.
func (res *Example37Result) WriteText(w io.Writer) error {
	for _, l := range res.Summary {
		fmt.Fprintln(w, l)
	}
	_, err := fmt.Fprintf(w, "recovered_error %.4g (flawed), recovered_error_correct %.4g (corrected)\nwrote %s\n",
		res.RecoveredError, res.RecoveredErrorCorrect, strings.Join(res.Files, ", "))
	return err
}
