// "tracepriv repro cip" as one call: the panels of Figure 2 (RunCIPPanels),
// their redrawing (ReplotCIPPanels) and the sensitivity study of the
// misspecified panels (RunCIPSensitivities), with their text reports.

package repro

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ParseCIPFigures reads a --figure value: "all", one panel id ("2a") or a
// comma-separated list of them, in the order given.
func ParseCIPFigures(spec string) ([]CIPFigure, error) {
	if spec == "all" {
		return CIPFigures(), nil
	}
	var figs []CIPFigure
	for _, id := range strings.Split(spec, ",") {
		f, err := LookupCIPFigure(strings.TrimSpace(id))
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// CIPPanelsOptions tunes RunCIPPanels.
type CIPPanelsOptions struct {
	// Optimal and AdversaryNugget are CIPFigureOptions' (AdversaryNugget
	// 0: DefaultAdversaryNugget; NoNugget: none).
	Optimal         bool
	AdversaryNugget float64
	// Bands are the l_eff bands shaded on the charts, by kernel name
	// (RecordedLEffBands or LoadLEffBands; nil: none).
	Bands map[string]*LEffBand
	// Out is the directory each panel is written to as it is done
	// (WriteCIPFigure); empty writes nothing.
	Out string
	// Progress, if set, is called after each point with the panel's
	// stage ("figure 2a") and its count of points done.
	Progress func(stage string, done, total int)
}

// CIPFigureReports are the panels of one run of "tracepriv repro cip",
// in the order asked for.
type CIPFigureReports []*CIPFigureReport

// RunCIPPanels computes the panels figs one after the other, each written
// to opt.Out before the next starts, so that a long run keeps what it
// finished.
func RunCIPPanels(figs []CIPFigure, opt CIPPanelsOptions) (CIPFigureReports, error) {
	var out CIPFigureReports
	for _, f := range figs {
		fopt := CIPFigureOptions{Optimal: opt.Optimal, AdversaryNugget: opt.AdversaryNugget}
		if opt.Progress != nil {
			stage := "figure " + f.ID
			fopt.Progress = func(done, total int) { opt.Progress(stage, done, total) }
		}
		res, err := RunCIPFigure(f, fopt)
		if err != nil {
			return nil, err
		}
		fo := &CIPFigureReport{CIPFigureResult: res, Band: opt.Bands[f.Kernel]}
		if opt.Out != "" {
			if err := WriteCIPFigure(opt.Out, fo); err != nil {
				return nil, err
			}
		}
		out = append(out, fo)
	}
	return out, nil
}

// ReplotCIPPanels draws the panels figs again from the fig2X.json files
// WriteCIPFigure recorded in dir, without computing.
func ReplotCIPPanels(dir string, figs []CIPFigure) (CIPFigureReports, error) {
	var out CIPFigureReports
	for _, f := range figs {
		fo, err := ReadCIPFigure(dir, f.ID)
		if err != nil {
			return nil, err
		}
		if err := WriteCIPFigure(dir, fo); err != nil {
			return nil, err
		}
		out = append(out, fo)
	}
	return out, nil
}

// WriteText prints each panel as a table of its points, and the files
// written.
func (r CIPFigureReports) WriteText(w io.Writer) error {
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'g', 4, 64)
	}
	loss := func(v *Num) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(float64(*v), 'g', 4, 64)
	}
	for _, fo := range r {
		fmt.Fprintf(w, "Figure %s: %s (n = %d, budget %.3g, stab. factor %g) in %s\n", fo.Figure, fo.Title, fo.N, fo.BudgetPerUnit, fo.Stabilisation, seconds(fo.Seconds))
		if nu := fo.AdversaryNugget; nu != nil && *nu > 0 {
			fmt.Fprintf(w, "  adversaries' prior nugget: %g x prior variance\n", *nu)
		} else if nu != nil {
			fmt.Fprintf(w, "  adversaries' prior nugget: none (the 1.5 l curve is then not determined in double precision)\n")
		}
		if fo.Band != nil {
			fmt.Fprintf(w, "  fitted l_eff (%s): quartiles %.3g / %.3g / %.3g\n", fo.Band.Source, fo.Band.Q25, fo.Band.Median, fo.Band.Q75)
		}
		fmt.Fprintf(w, "  %6s %8s %9s %9s %9s %9s %9s %9s %10s\n", "l_eff", "budget", "sdp", "ind_unif", "ind_conc", "good", "over", "under", "L(sdp)")
		for _, p := range fo.Points {
			fmt.Fprintf(w, "  %6.3f %8.4g %9s %9s %9s %9s %9s %9s %10s\n", p.LEff, p.Budget, num(p.SDP), num(p.IndUniform), num(p.IndConcentrated),
				num(p.GoodPrior), num(p.OverCorr), num(p.UnderCorr), loss(p.LossSDP))
		}
		for _, f := range fo.Files {
			fmt.Fprintf(w, "  wrote %s\n", f)
		}
	}
	return nil
}

// seconds is a run time as a duration to the millisecond.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// CIPSensitivitiesOptions tunes RunCIPSensitivities.
type CIPSensitivitiesOptions struct {
	// All skips the panels that are not misspecified (figs is every
	// panel) instead of refusing them.
	All bool
	// Out is the directory each study is written to (WriteCIPSensitivity);
	// empty writes nothing. Replot reads the studies recorded there and
	// draws them again instead of computing.
	Out    string
	Replot bool
	// Python runs the 80-digit cross-check (RunHighPrecision); empty
	// looks for one (FindPython), and without one the study is float64
	// only, which Note says.
	Python string
	// Progress, if set, is called after each point with the study's stage
	// ("sensitivity 2d (float64)") and its count of points done.
	Progress func(stage string, done, total int)
	// Note, if set, is told what a long run is doing and what it wrote.
	Note func(msg string)
}

// CIPSensitivityResults are the studies of one run of "tracepriv repro cip
// --sensitivity", in the order asked for.
type CIPSensitivityResults []*CIPSensitivityResult

// ErrNotMisspecified is returned for a sensitivity study asked of a panel
// whose prior is not misspecified (only 2d and 2h have one).
var ErrNotMisspecified = errors.New("not a misspecified-prior panel (use 2d or 2h)")

// RunCIPSensitivities runs the nugget and design sensitivity study
// (CIPSensitivity, then its 80-digit cross-check) of each misspecified
// panel of figs, writing each to opt.Out before the next starts.
func RunCIPSensitivities(figs []CIPFigure, opt CIPSensitivitiesOptions) (CIPSensitivityResults, error) {
	if opt.Replot && opt.Out == "" {
		return nil, errors.New("replotting needs the directory of the recorded studies")
	}
	note := opt.Note
	if note == nil {
		note = func(string) {}
	}
	var out CIPSensitivityResults
	for _, f := range figs {
		if f.Kind != Misspecified {
			if opt.All {
				continue
			}
			return nil, fmt.Errorf("figure %s is %w", f.ID, ErrNotMisspecified)
		}
		if opt.Replot {
			res, err := ReadCIPSensitivity(opt.Out, f.ID)
			if err != nil {
				return nil, err
			}
			if _, err := WriteCIPSensitivity(opt.Out, res); err != nil {
				return nil, err
			}
			out = append(out, res)
			continue
		}
		sopt := CIPSensitivityOptions{}
		if opt.Progress != nil {
			stage := "sensitivity " + f.ID + " (float64)"
			sopt.Progress = func(done, total int) { opt.Progress(stage, done, total) }
		}
		res, err := CIPSensitivity(f, sopt)
		if err != nil {
			return nil, err
		}
		note(fmt.Sprintf("sensitivity %s: 80-digit cross-check with mpmath (a few minutes)", f.ID))
		if err := res.RunHighPrecision(opt.Python); err != nil {
			// A Python the caller named must work; without one the
			// study stands on its float64 values, and says so.
			if opt.Python != "" || !errors.Is(err, ErrNoHighPrecision) {
				return nil, err
			}
			note(fmt.Sprintf("note: %v; the study has float64 values only", err))
		}
		if opt.Out != "" {
			files, err := WriteCIPSensitivity(opt.Out, res)
			if err != nil {
				return nil, err
			}
			for _, name := range files {
				note("wrote " + name)
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// WriteText prints each study: per lengthscale, the designs' distances
// from the closed form and, per adversary scale and nugget, the range of
// the posterior 2-sigma over the designs in float64 and at 80 digits.
func (r CIPSensitivityResults) WriteText(w io.Writer) error {
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'f', 6, 64)
	}
	for _, s := range r {
		fmt.Fprintf(w, "Figure %s sensitivity: %s (n = %d, secret {%d}, budget %.3g) in %s\n", s.Figure, s.Title, s.N, s.Secret, s.Budget, seconds(s.Seconds))
		if hp := s.HighPrecision; hp != nil && hp.Error == "" {
			fmt.Fprintf(w, "  high precision: %s, %d digits (%s) in %.0f s\n", hp.Tool, hp.Digits, hp.Python, hp.Seconds)
		} else if hp != nil {
			fmt.Fprintf(w, "  high precision: none (%s)\n", hp.Error)
		}
		for _, p := range s.Points {
			fmt.Fprintf(w, "  l_eff %.3f; designs:", p.LEff)
			for _, d := range p.Designs[1:] {
				fmt.Fprintf(w, " %s %.2g from the closed form;", d.Name, d.Distance)
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "    %5s %7s %10s %19s %19s %9s %9s %s\n", "scale", "nugget", "condition", "float64 (designs)", "80 digits (designs)", "exact", "spread", "determined")
			for _, m := range p.Summary {
				cond := "-"
				if m.Condition != nil {
					cond = strconv.FormatFloat(float64(*m.Condition), 'g', 2, 64)
				}
				fmt.Fprintf(w, "    %5g %7g %10s %9.6f-%9.6f %9s-%9s %9s %9.2g %v\n", m.Scale, m.Nugget, cond, m.Float64Min, m.Float64Max,
					opt(m.HighPrecisionMin), opt(m.HighPrecisionMax), opt(m.Exact), float64(m.Spread), m.Determined)
			}
		}
	}
	return nil
}
