package sanitize

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the certificate for people: the prior family and
// design, then for each person the certified epsilon and what it means,
// each class of secrets covered or not and why, and the noise; then what
// the input cost and the randomness. It is the text output of
// "tracepriv sanitize".
func (c *Certificate) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "prior family: %v; noise in %s coordinates (no origin); design %s, path %s\n", c.PriorFamily, c.Coordinates, c.Design, c.Path)
	for _, p := range c.Persons {
		c.writePerson(w, p)
	}
	if e := c.EdgeSummary(); e != "" {
		fmt.Fprintf(w, "outside the family: %s\n", e)
	}
	if c.SkippedRows > 0 {
		fmt.Fprintf(w, "skipped or merged %d input rows\n", c.SkippedRows)
	}
	if c.PriorCoverage != PriorIndependent {
		fmt.Fprintf(w, "prior independence: %s\n", c.PriorCoverage)
	}
	if !c.Private {
		fmt.Fprintln(w, "NOT PRIVATE: the noise came from a seeded source; anyone with the seed can remove it")
	}
	_, err := fmt.Fprintf(w, "randomness %s; %.2f s\n", c.Randomness, c.Seconds)
	return err
}

// writePerson writes one person's part of WriteText.
func (c *Certificate) writePerson(w io.Writer, p *PersonCertificate) {
	fmt.Fprintf(w, "person %q: %d points in %d traces, %d secrets\n", p.UID, p.Points, len(p.Traces), p.Secrets.Count)
	if p.SecretClasses.Points.Covered {
		fmt.Fprintf(w, "  certified epsilon %.4g (%s; target %.4g) at lambda %g, r = %g m\n",
			p.EpsilonMax, strings.ReplaceAll(p.EpsilonKind, "_", " "), c.EpsilonTarget, c.Lambda, c.RadiusM)
		fmt.Fprintf(w, "  what it means: %s\n", MeaningOf(p.EpsilonMax, c.Lambda, c.RadiusM).Text)
		fmt.Fprintf(w, "  %s\n", GapMeaning(p.GapMax, c.Delta))
		fmt.Fprintf(w, "  against %s\n", c.FamilyLine())
	} else {
		fmt.Fprintf(w, "  NO GUARANTEE: no epsilon is certified (target %.4g at lambda %g, r = %g m)\n", c.EpsilonTarget, c.Lambda, c.RadiusM)
	}
	for _, cl := range []struct {
		name string
		c    ClassCertificate
	}{{"points", p.SecretClasses.Points}, {"places", p.SecretClasses.Places}, {"route", p.SecretClasses.Route}} {
		if !cl.c.Covered {
			fmt.Fprintf(w, "  %s: NOT COVERED: %s\n", cl.name, cl.c.NotCovered)
			continue
		}
		fmt.Fprintf(w, "  %s: epsilon %.4g; best guess between two places %g m apart %.1f %%\n", cl.name, cl.c.Epsilon, c.RadiusM, 100*cl.c.Meaning.BestGuessAccuracy)
		if sm := cl.c.ShorterMembers; sm != nil {
			fmt.Fprintf(w, "    stays longer than the member's lengthscale: epsilon up to %.4g (upper bound; --places-every-length covers them)\n", sm.Epsilon)
		}
	}
	fmt.Fprintf(w, "  noise: %.4g m^2 per dimension, RMS displacement %.1f m (%.2fx one known prior)\n", p.NoiseBudgetM2, p.RMSNoiseM, p.RMSOverSingle)
	fmt.Fprintf(w, "  why: %s\n", p.Explanation)
}

// WriteText writes the manifest for people: the people, points and files
// released, the certified epsilon and what it means for everyone, a
// resumed run, and each failure. It is the text output of "tracepriv
// sanitize --in DIR", which adds where the manifest was written.
func (m *Manifest) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d people, %d points from %d files", len(m.Persons), m.Points, m.Files)
	if len(m.Ignored) > 0 {
		fmt.Fprintf(w, " (%d other files ignored)", len(m.Ignored))
	}
	fmt.Fprintf(w, "; skipped or merged %d input rows\n", m.SkippedRows)
	fmt.Fprintf(w, "certified epsilon at most %.4g per person (target %.4g) at lambda %g, r = %g m; randomness %s; ledger %s\n", m.EpsilonMax, m.EpsilonTarget, m.Lambda, m.RadiusM, m.Randomness, m.Ledger)
	if len(m.Persons) > 0 {
		fmt.Fprintf(w, "what it means, for everyone: %s\n", MeaningOf(m.EpsilonMax, m.Lambda, m.RadiusM).Text)
	}
	if m.Resumed > 0 {
		fmt.Fprintf(w, "resumed: %d groups of people were already released by an earlier run\n", m.Resumed)
	}
	for _, f := range m.Failed {
		if _, err := fmt.Fprintf(w, "failed: %s: %s\n", strings.Join(f.Files, ", "), f.Error); err != nil {
			return err
		}
	}
	return nil
}
