// "tracepriv repro predictive" as one call (RunPredictive) and its text
// report.

package repro

import (
	"fmt"
	"io"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// RunPredictive runs the case study c on traces (read from files as input
// reports, which the result records) with randomness src (nil:
// crypto/rand), and writes results.json and the figures to out (empty:
// nothing). progress, if set, is called after each trace and jump
// probability.
func RunPredictive(c PredictiveCaseStudy, traces []*trace.Trace, input *trace.Report, src noise.Source, out string, progress func()) (*Predictive, error) {
	if src == nil {
		src = noise.Secure()
	}
	if progress == nil {
		progress = func() {}
	}
	if input == nil {
		input = &trace.Report{}
	}
	res, err := c.Run(traces, src, progress)
	if err != nil {
		return nil, err
	}
	p := &Predictive{PredictiveCaseStudyResult: res, Randomness: noise.Describe(src), Files: input.Files, InputSummary: input.Summary()}
	if out != "" {
		if _, err := WritePredictive(out, *p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// WriteText prints, per budget manager, one row per jump probability:
// the mean error, α(0.9) and points covered of IM, PM and PM with the
// elapsed-time skip, and PM's prediction rate and test share.
func (res *PredictiveCaseStudyResult) WriteText(w io.Writer) error {
	for _, sec := range []struct {
		name string
		rows []PredictiveRow
	}{{"fixed rate (3.3 % of ε per query)", res.FixedRate}, {"fixed utility (α(0.9) = 3 km)", res.FixedUtility}} {
		fmt.Fprintf(w, "%s: %d traces\n", sec.name, res.Traces)
		fmt.Fprintf(w, "%4s  %-22s %-22s %-22s %s\n", "p", "IM err/α90/pts", "PM err/α90/pts", "PM+skip err/α90/pts", "PM PR/test share")
		for _, r := range sec.rows {
			cell := func(m PredictiveMetrics) string {
				return fmt.Sprintf("%5.0f/%5.0f/%5.1f", m.MeanError, m.Alpha90, m.PointsCovered)
			}
			if _, err := fmt.Fprintf(w, "%4.1f  %-22s %-22s %-22s %.2f/%.2f\n", r.P, cell(r.IM), cell(r.PM), cell(r.PMSkip), r.PM.PredictionRate, r.PM.TestShare); err != nil {
				return err
			}
		}
	}
	return nil
}
