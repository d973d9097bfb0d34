package geoind

import (
	"fmt"
	"io"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// ReleaseSummary is what a release of whole traces through one session
// per person (SanitizeByPerson) reports: the input read and thinned, each
// person's plan and release, the totals and the error they cost, and
// whether and where the release was written. It is the --json output of
// "tracepriv geoind sanitize"; Summarise fills it from the people.
type ReleaseSummary struct {
	Out string `json:"out"`
	// Certificate is the certificate file written beside Out.
	Certificate string `json:"certificate,omitempty"`
	Written     bool   `json:"written"`
	Complete    bool   `json:"complete"`
	Files       int    `json:"files"`
	// Skipped and Deduplicated count the input rows the readers skipped
	// and merged (exact repeats); skipped_rows is their sum.
	Skipped      int `json:"skipped_records"`
	Deduplicated int `json:"deduplicated"`
	trace.InputSummary
	// Every is the thinning period (--every), empty without thinning.
	Every string `json:"every,omitempty"`
	// PointsRead counts the points read, PointsIn those left after
	// thinning (the queries the mechanism answers), PointsReleased those
	// released.
	PointsRead     int `json:"points_read"`
	PointsIn       int `json:"points_in"`
	PointsReleased int `json:"points_released"`
	// ExpectedErrorM and AccuracyM are the people's expected_error_m and
	// accuracy_m averaged over the points they cover: the error the
	// release cost, in metres per point, by the accuracy functions;
	// ExpectedErrorKind says ExpectedErrorM is an upper bound on the mean.
	ExpectedErrorM    float64 `json:"expected_error_m"`
	ExpectedErrorKind string  `json:"expected_error_kind,omitempty"`
	AccuracyM         float64 `json:"accuracy_m"`
	Randomness        string  `json:"randomness"`
	Config            Config  `json:"config"`
	// Plans is each person's plan, made before anything was drawn.
	Plans  []PersonPlan    `json:"plans"`
	People []PersonRelease `json:"people"`
}

// Summarise records the people released with randomness src: the points
// released, the error averaged over the points whose errors are bounded,
// and Complete; it returns the people whose budget ran out before their
// last point.
func (s *ReleaseSummary) Summarise(people []PersonRelease, src noise.Source) (partial []PersonRelease) {
	s.Randomness, s.People = noise.Describe(src), people
	weight := 0
	for _, p := range people {
		if !p.Complete {
			partial = append(partial, p)
		}
		s.PointsReleased += p.Released
		w := p.Released - p.Skipped // the points whose errors are averaged
		s.ExpectedErrorM += float64(w) * p.ExpectedErrorM
		s.AccuracyM += float64(w) * p.AccuracyM
		weight += w
	}
	if weight > 0 {
		s.ExpectedErrorKind = ErrorUpperBound
		s.ExpectedErrorM /= float64(weight)
		s.AccuracyM /= float64(weight)
	}
	s.Complete = len(partial) == 0
	return partial
}

// WriteText writes the summary for people: what the input cost, the
// thinning, a line per person (PersonRelease.WriteText), what a
// person's budget means, and what was written.
func (s *ReleaseSummary) WriteText(w io.Writer) error {
	if s.SkippedRows > 0 || len(s.SkippedFiles) > 0 {
		fmt.Fprintf(w, "input: %d files; %d rows skipped or merged, %d files unreadable (see stderr)\n", s.Files, s.SkippedRows, len(s.SkippedFiles))
	}
	if s.Every != "" {
		fmt.Fprintf(w, "thinned to one fix per %s: %d of %d points\n", s.Every, s.PointsIn, s.PointsRead)
	}
	for _, p := range s.People {
		if err := p.WriteText(w); err != nil {
			return err
		}
	}
	if len(s.People) > 0 {
		fmt.Fprintf(w, "what each person's budget means: %s\n", Meaning(s.People[0].Budget))
	}
	if s.Written {
		_, err := fmt.Fprintf(w, "wrote %d points to %s and its certificate %s (randomness: %s)\n", s.PointsReleased, s.Out, s.Certificate, s.Randomness)
		return err
	}
	_, err := fmt.Fprintln(w, "nothing written")
	return err
}
