package trace

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// InspectedTrace is one trace of an Inspection: its summary, whether it
// is well formed, and whether it is plausible.
type InspectedTrace struct {
	Summary
	// Valid says whether the trace is well formed (Validate: finite
	// in-range coordinates, strictly increasing times); Problem says why
	// not. A trace read by tracepriv always is.
	Valid   bool   `json:"valid"`
	Problem string `json:"problem,omitempty"`
	// Plausible says whether it looks like what a GPS receiver records: no
	// step faster than the speed threshold. Plausibility has the counts
	// and the thresholds.
	Plausible    bool         `json:"plausible"`
	Plausibility Plausibility `json:"plausibility"`
}

// Inspection is what tracepriv inspect reports of the traces read from
// files: each trace's summary, well-formedness and plausibility against
// the limits, and what reading skipped.
type Inspection struct {
	File   string           `json:"file,omitempty"` // the file, when there is one
	Files  []string         `json:"files"`
	Format Format           `json:"format,omitempty"` // omitted for mixed formats
	Limits Limits           `json:"limits"`
	Traces []InspectedTrace `json:"traces"`
	InputSummary
	Report *Report `json:"report"`
}

// Inspect checks traces, read from files in formats (what reading
// skipped in rep), for well-formedness and against lim.
func Inspect(files []string, formats map[Format]bool, traces []*Trace, rep *Report, lim Limits) *Inspection {
	res := &Inspection{Files: files, Limits: lim, Traces: make([]InspectedTrace, len(traces)), InputSummary: rep.Summary(), Report: rep}
	if len(files) == 1 {
		res.File = files[0]
	}
	if len(formats) == 1 {
		for f := range formats {
			res.Format = f
		}
	}
	for i, t := range traces {
		pl := Check(t, lim)
		res.Traces[i] = InspectedTrace{Summary: Summarize(t), Valid: true, Plausible: pl.OK(), Plausibility: pl}
		if err := t.Validate(); err != nil {
			res.Traces[i].Valid, res.Traces[i].Problem = false, err.Error()
		}
	}
	return res
}

// WriteText writes the table of traces and what is wrong with them, for
// people.
func (res *Inspection) WriteText(w io.Writer) error {
	what := strings.Join(res.Files, ", ")
	if len(res.Files) > 3 {
		what = fmt.Sprintf("%d files", len(res.Files))
	}
	format := string(res.Format)
	if format == "" {
		format = "mixed formats"
	}
	fmt.Fprintf(w, "%s (%s): %d traces, %d points", what, format, len(res.Traces), res.Report.Read)
	if n := res.Report.SkippedRows(); n > 0 {
		fmt.Fprintf(w, "; %d input rows skipped or merged (see stderr)", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "plausibility thresholds: speed jump > %.0f km/h (--max-speed), gap > %v (--max-gap)\n", 3.6*res.Limits.MaxSpeed, res.Limits.MaxGap)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "uid\tname\tpoints\tstart\tduration\tlength km\tinterval s median/mean/max\tspeed km/h median/p95/max\tjumps\tgaps\trepeats\twell-formed\tplausible\t")
	for _, t := range res.Traces {
		start := "-"
		if t.Points > 0 {
			start = t.Start.Format(time.RFC3339)
		}
		iv, sp, pl := t.Interval, t.Speed, t.Plausibility
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%.3f\t%.1f / %.1f / %.0f\t%.1f / %.1f / %.1f\t%d\t%d\t%d\t%s\t%s\t\n",
			t.UID, t.Name, t.Points, start, t.Duration, t.PathLength/1000,
			iv.Median, iv.Mean, iv.Max, 3.6*sp.Median, 3.6*sp.P95, 3.6*sp.Max,
			pl.SpeedJumps, pl.Gaps, pl.RepeatedPositions, yesNo(t.Valid), yesNo(t.Plausible))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range res.Traces {
		if !t.Valid {
			fmt.Fprintf(w, "trace %s is not well formed: %s\n", traceLabel(t.Summary), t.Problem)
		}
		if !t.Plausible {
			fmt.Fprintf(w, "trace %s is implausible: %s\n", traceLabel(t.Summary), t.Plausibility)
			for _, j := range t.Plausibility.Jumps {
				fmt.Fprintf(w, "  point %d at %s: %.0f m in %.0f s (%.0f km/h)\n", j.Index, j.Time.Format(time.RFC3339), j.Distance, j.Seconds, 3.6*j.Speed)
			}
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// traceLabel names a trace in messages: uid and name.
func traceLabel(s Summary) string {
	switch {
	case s.UID != "" && s.Name != "":
		return fmt.Sprintf("%s/%s", s.UID, s.Name)
	case s.Name != "":
		return s.Name
	}
	return fmt.Sprintf("%q", s.UID)
}
