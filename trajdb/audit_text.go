package trajdb

import (
	"fmt"
	"io"
)

// WriteText writes the audit for people: the verdict, the search's
// budget, the noise test, each statistical test, a support witness and
// the lower bound on epsilon.
func (rep *AuditReport) WriteText(w io.Writer) error {
	b := rep.Budget
	fmt.Fprintf(w, "%s at epsilon %g on %d people: %s\n", rep.Mechanism, rep.Epsilon, b.Persons, rep.Verdict)
	fmt.Fprintf(w, "budget: %d neighbours (%d removed, %d added), %d candidates, %d counts per release, %d events scored; %d releases in all, %d fresh for each of %d tests; randomness %s\n",
		b.Neighbours, b.Removals, b.Additions, b.Candidates, b.Statistics, b.Events, b.Releases, b.ConfirmDraws, len(rep.Tests), rep.Randomness)
	if nt := rep.NoiseTest; nt != nil {
		fmt.Fprintf(w, "noise test: %d noisy counts from %d releases against the stated discrete Laplace noise (sensitivity %g): p = %.3g; the noise spends at least %.3g at %g confidence\n",
			nt.Test.Draws, nt.Releases, nt.Sensitivity, nt.Test.PValue, nt.EpsilonLower, nt.Confidence)
	}
	for _, t := range rep.Tests {
		fmt.Fprintf(w, "test: %s %q; event %q: %d of %d releases of %s, %d of %d of %s; proves a loss >= %.3g\n",
			t.Change, t.Person, t.Event.Text, t.Observed, t.Draws, t.Under, t.ObservedOther, t.DrawsOther, t.Other, t.EpsilonLower)
	}
	if wt := rep.Witness; wt != nil && wt.Kind != "statistical" && wt.Kind != "noise" {
		fmt.Fprintf(w, "witness (%s): sequence %v, %s person %q: observed %d of %d releases under %s; other database can output it: %v\n",
			wt.Kind, wt.Sequence, wt.Change, wt.Person, wt.Observed, wt.Draws, wt.Under, wt.CanOutputOther)
	}
	_, err := fmt.Fprintf(w, "epsilon lower bound %.3g at %g confidence; false alarms on an epsilon-DP mechanism: at most %.3g\n", rep.EpsilonLower, rep.Confidence, rep.FalseAlarmBound)
	return err
}
