package geoind

import (
	"fmt"
	"io"
	"time"
)

// WriteText writes the report for people: the released location, the
// step and its kind, the budget spent, and what the session's budget
// means. It is the text output of "tracepriv geoind query".
func (r Report) WriteText(w io.Writer) error {
	kind := "hard (fresh noise)"
	switch {
	case r.Mode == ModePredict:
		kind = "predicted (test skipped)"
	case !r.Hard:
		kind = "easy (prediction reused)"
	}
	if _, err := fmt.Fprintf(w, "%.6f,%.6f  step %d, %s; spent %.4g of %.4g (%.1f%%)\n",
		r.Lat, r.Lon, r.Step, kind, r.Spent, r.Budget, 100*r.Spent/r.Budget); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "what the session's budget means: %s\n", Meaning(r.Budget))
	return err
}

// WriteText writes the person's release on one line for people: the
// points released and the time they cover, the steps, the budget spent,
// and the error the release cost.
func (p PersonRelease) WriteText(w io.Writer) error {
	span := p.Last.Sub(p.First)
	covered := time.Duration(0)
	if p.Released > 0 {
		covered = p.CoveredUntil.Sub(p.First)
	}
	fmt.Fprintf(w, "%s: released %d of %d points (%.1f %%; %v of %v covered) in %d trace(s), %d hard, %d skipped; spent %.4g of ε %.4g",
		p.Person, p.Released, p.Points, 100*p.Covered, covered, span, len(p.Traces), p.Hard, p.Skipped, p.Spent, p.Budget)
	if p.ExpectedErrorM > 0 {
		fmt.Fprintf(w, "; expected error at most %s per point (a proven bound on the mean, from the public decisions, worst case over the predictions; 90 %% within %s)", Metres(p.ExpectedErrorM), Metres(p.AccuracyM))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// Metres formats a distance for people: whole metres below 10 km, else
// km to one decimal.
func Metres(m float64) string {
	if m < 10000 {
		return fmt.Sprintf("%.0f m", m)
	}
	return fmt.Sprintf("%.1f km", m/1000)
}
