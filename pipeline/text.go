package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trajdb"
)

// WriteText writes the result as tracepriv-pipeline sanitize prints it:
// who was released, the certified epsilon, what failed and what was
// written.
func (r *SanitizeResult) WriteText(w io.Writer) error {
	m := r.Manifest
	fmt.Fprintf(w, "%d people, %d points from %d files", len(m.Persons), m.Points, m.Files)
	if len(m.Ignored) > 0 {
		fmt.Fprintf(w, " (%d other files ignored)", len(m.Ignored))
	}
	fmt.Fprintf(w, "; skipped or merged %d input rows\n", m.SkippedRows)
	fmt.Fprintf(w, "certified epsilon at most %.4g per person (target %.4g) at lambda %g, r = %g m; randomness %s; ledger %s\n", m.EpsilonMax, m.EpsilonTarget, m.Lambda, m.RadiusM, m.Randomness, m.Ledger)
	if m.Resumed > 0 {
		fmt.Fprintf(w, "resumed: %d groups of people were kept as a killed run of this release left them (not released or charged again)\n", m.Resumed)
	}
	for _, f := range m.Failed {
		fmt.Fprintf(w, "failed: %s: %s\n", strings.Join(f.Files, ", "), f.Error)
	}
	_, err := fmt.Fprintf(w, "wrote %s/%s in %.1f s\n", r.Output, sanitize.ManifestName, m.Seconds)
	return err
}

// MarshalJSON is tracepriv-pipeline fit --json: the prior, the report,
// where the prior went and the unreadable files skipped.
func (r *FitResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Prior           any    `json:"prior"`
		Report          any    `json:"report,omitempty"`
		Out             string `json:"out"`
		UnreadableFiles int64  `json:"unreadable_files"`
	}{r.Prior, r.Report, r.Output, r.Unreadable})
}

// WriteText writes the result as tracepriv-pipeline fit prints it: the
// windows, the family and its bounds, and what was written.
func (r *FitResult) WriteText(w io.Writer) error {
	p := r.Prior
	if r.Unreadable > 0 {
		fmt.Fprintf(w, "%d unreadable files skipped (--verbose shows which)\n", r.Unreadable)
	}
	fq := *p.Fit.FamilyQuantiles
	fmt.Fprintf(w, "windows: %d fitted; skipped %v\n", p.Fit.Windows, p.Fit.Skipped)
	fmt.Fprintf(w, "l_eff quartiles (samples): %.2f / %.2f / %.2f\n", p.Fit.LEffQuartiles[0], p.Fit.LEffQuartiles[1], p.Fit.LEffQuartiles[2])
	fmt.Fprintf(w, "prior family: %s, lengthscale %.2f-%.2f s (quantiles %g-%g; nominal %.2f s), variance >= %.4g m^2 (quantile %g), std %.1f m\n",
		p.Kernel, p.LengthscaleMin, p.LengthscaleMax, fq[0], fq[1], p.Lengthscale, p.Variance, 1-fq[1], math.Sqrt(p.Variance))
	if p.Origin != nil {
		fmt.Fprintf(w, "public origin: %.4f, %.4f (%s)\n", p.Origin.Lat, p.Origin.Lon, p.Origin.Note)
	}
	if rep := r.Report; rep != nil {
		fmt.Fprintf(w, "lengthscale on a fit bound: %d at the lower, %d at the upper (of %d coordinate fits)\n", rep.AtLowerBound, rep.AtUpperBound, 2*rep.Windows)
		if rep.Censored {
			fmt.Fprintf(w, "warning: %d of %d fits ended on the upper lengthscale bound, more than 1 - %g: the family's upper end is that bound, a lower limit on the dependence\n", rep.AtUpperBound, 2*rep.Windows, fq[1])
		}
		_, err := fmt.Fprintf(w, "wrote %s and %s\n", r.Output, r.ReportFile)
		return err
	}
	_, err := fmt.Fprintf(w, "wrote %s\n", r.Output)
	return err
}

// MarshalJSON is tracepriv-pipeline synthesize --json: the certificate
// with the operator's counts of the input and where it was written.
func (r *SynthesizeResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		*SynthesisCert
		Input           trajdb.MapReport `json:"input"`
		Bounded         BoundReport      `json:"bounded"`
		UnreadableFiles int64            `json:"unreadable_files"`
		Output          string           `json:"output"`
	}{r.Cert, r.Input, r.Bounded, r.Unreadable, r.Output})
}

// WriteText writes the result as tracepriv-pipeline synthesize prints
// it: what was read and bounded, the release's levels, and the files.
func (r *SynthesizeResult) WriteText(w io.Writer) error {
	cert := r.Cert
	if r.Unreadable > 0 {
		fmt.Fprintf(w, "%d unreadable files skipped (--verbose shows which)\n", r.Unreadable)
	}
	fmt.Fprintf(w, "read: %s\n", &r.Input)
	fmt.Fprintf(w, "bounded: %d trajectories kept, %d beyond --max-seqs dropped, %d cells beyond --max-len cut\n", r.Bounded.Trajectories, r.Bounded.OverMaxSeqs, r.Bounded.SymbolsCut)
	fmt.Fprintf(w, "released %d trajectories with %s at epsilon %g (spent %.6g over %d levels, %d noisy counts); randomness %s\n",
		cert.Trajectories, cert.Mechanism, cert.Epsilon, cert.EpsilonSpent, len(cert.Levels), cert.Nodes, cert.Randomness)
	for _, l := range cert.Levels {
		fmt.Fprintf(w, "  level %d: epsilon %.4g, noise scale %.4g, %d counts, threshold %.4g\n", l.Depth, l.Epsilon, l.Scale, l.Nodes, l.Threshold)
	}
	_, err := fmt.Fprintf(w, "wrote %s, %s and %s in %s\n", SynthesisSeqFile, SynthesisCSVFile, SynthesisCertFile, r.Output)
	return err
}
