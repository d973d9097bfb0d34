package prior

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/trace"
)

// The parts of Fit, for running it in pieces (the Apache Beam pipeline in
// the nested module pipeline/ fits windows on many workers): Windows cuts
// traces into windows, FitWindow fits one window, and Combine chooses the
// prior from the fits. Report.Merge and Positions add up what separate
// pieces of a corpus report, so that Fit over a corpus and the pieces
// combined give the same prior.

// WindowResult is the outcome of one window's fit.
type WindowResult struct {
	// Fit describes the window; its fitted values (variance, period,
	// lengthscales, l_eff, jitter) are set when Skip is "", and the
	// variance alone when Skip is SkipConstant.
	Fit WindowFit `json:"fit"`
	// Skip is SkipConstant or SkipFitFailed when the window was not
	// fitted, with Err saying why a fit failed.
	Skip string `json:"skip,omitempty"`
	Err  string `json:"error,omitempty"`
}

// fitSetup is what every window's fit and the combination share.
type fitSetup struct {
	opt    config // with defaults
	k0     gp.Kernel
	fo     gp.FitOptions
	method string
}

func newFitSetup(opt config) (*fitSetup, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if opt.compare() {
		return &fitSetup{opt: opt, method: compareMethod(opt)}, nil
	}
	k0, err := opt.kernel()
	if err != nil {
		return nil, err
	}
	fo := gp.PaperFitOptions()
	fitDesc := fmt.Sprintf("paper fit options (variance normalised to 1, lengthscale in [1, 40] s from %g s, nugget 0.0025)", opt.InitLengthscale)
	if opt.FitOptions != nil {
		fo = *opt.FitOptions
		fitDesc = "custom fit options"
	}
	cutDesc := "consecutive windows"
	if opt.PaperWindows {
		cutDesc = "the authors' windows (first of each trace)"
	}
	// FitRecord has no fields for the windowing, so Method records it.
	method := fmt.Sprintf("per-window MLE on %s of %v-%v with at most %d points (at least %d), %s",
		cutDesc, opt.MinDuration, opt.MaxDuration, opt.MaxPoints, opt.MinPoints, fitDesc)
	return &fitSetup{opt: opt, k0: k0, fo: fo, method: method}, nil
}

// Check reports whether fit would accept o: valid durations, points,
// family quantiles and initial lengthscale, and a kernel it can fit.
func (o config) Check() error {
	_, err := newFitSetup(o)
	return err
}

// FitWindow fits the window w of trace t (the trace w.Trace of the corpus;
// the index is recorded, not checked) by maximum likelihood, each
// coordinate separately, as Fit does. The error is for invalid options; a
// window that cannot be fitted is a WindowResult with Skip set.
func FitWindow(w Window, t *trace.Trace, m Mode) (WindowResult, error) {
	opt := m.config()
	s, err := newFitSetup(opt)
	if err != nil {
		return WindowResult{}, err
	}
	return s.fitWindow(w, t), nil
}

func (s *fitSetup) fitWindow(w Window, t *trace.Trace) WindowResult {
	first, last := w.Index[0], w.Index[len(w.Index)-1]
	r := WindowFit{
		Trace: w.Trace, UID: t.UID, Name: t.Name,
		First: first, Last: last, Points: len(w.T), Thinned: last - first + 1 - len(w.T),
		Start:     t.Points[first].Time,
		DurationS: w.T[len(w.T)-1],
	}
	r.VarianceM2 = [2]float64{popVariance(w.East), popVariance(w.North)}
	if min(r.VarianceM2[0], r.VarianceM2[1]) < minVariance {
		return WindowResult{Fit: r, Skip: SkipConstant}
	}
	failed := func(err error) WindowResult { return WindowResult{Fit: r, Skip: SkipFitFailed, Err: err.Error()} }
	period, err := gp.MedianPeriod(w.T)
	if err != nil { // unreachable: times strictly increase
		return failed(err)
	}
	r.PeriodS = period
	if s.opt.compare() {
		return s.fitCompare(w, r)
	}
	fits, err := gp.FitEach(s.k0, []gp.Series{{T: w.T, Y: w.East}, {T: w.T, Y: w.North}}, s.fo)
	if err != nil {
		return failed(err)
	}
	for d, f := range fits {
		l, ok := lengthscale(f.Kernel)
		if !ok {
			return failed(fmt.Errorf("kernel %T has no lengthscale", f.Kernel))
		}
		r.LengthscaleS[d] = l
		r.LEff[d] = gp.EffectiveLengthscale(l, period)
		r.Jitter = math.Max(r.Jitter, f.MaxJitter)
	}
	return WindowResult{Fit: r}
}

// Combine chooses the prior from the windows' results, given in the
// corpus's order (trace by trace, each trace's windows in time order), as
// Fit does: rep is the report of cutting the windows (Windows' report, or
// those of the corpus's pieces merged), which Combine completes and
// returns; centre is the corpus's public origin (Positions.Centre), or
// nil.
//
// Combine records no corpus index; CombineCorpus, given the corpus's
// Positions, returns the corpus's private index in the report
// (Report.CorpusIndex), bound to the prior, and records the centre.
func Combine(results []WindowResult, rep *Report, centre *geo.Origin, m Mode) (*Prior, *Report, error) {
	opt := m.config()
	s, err := newFitSetup(opt)
	if err != nil {
		return nil, nil, err
	}
	return s.combine(results, rep, centre, nil)
}

// CombineCorpus is Combine with the corpus's positions (its parts'
// Positions merged): the prior records their centre as its origin and the
// report carries their private index (Report.CorpusIndex), as Fit does.
func CombineCorpus(results []WindowResult, rep *Report, pos Positions, m Mode) (*Prior, *Report, error) {
	opt := m.config()
	s, err := newFitSetup(opt)
	if err != nil {
		return nil, nil, err
	}
	centreWarnings(rep, pos)
	return s.combine(results, rep, pos.Centre(s.opt.Corpus), pos.Index())
}

func (s *fitSetup) combine(results []WindowResult, rep *Report, centre *geo.Origin, index *trace.CorpusIndex) (*Prior, *Report, error) {
	opt := s.opt
	if rep.Skipped == nil {
		rep.Skipped = map[string]int{}
	}
	lb, hasBound := s.fo.Bounds["lengthscale"]
	for _, res := range results {
		f := res.Fit
		if res.Skip != "" {
			// The whole window is skipped, including the points Windows
			// counted as thinned.
			rep.skip(res.Skip, f.Last-f.First+1)
			rep.PointsThinned -= (f.Last - f.First + 1) - f.Points
			if res.Err != "" && len(rep.FitErrors) < maxFitErrors {
				rep.FitErrors = append(rep.FitErrors, fmt.Sprintf("trace %d (uid %q, name %q) points %d-%d: %v", f.Trace, f.UID, f.Name, f.First, f.Last, res.Err))
			}
			continue
		}
		rep.Windows++
		rep.PointsFitted += f.Points
		rep.MaxJitter = math.Max(rep.MaxJitter, f.Jitter)
		if hasBound {
			for _, l := range f.LengthscaleS {
				if l <= lb.Lo*(1+1e-6) {
					rep.AtLowerBound++
				}
				if l >= lb.Hi*(1-1e-6) {
					rep.AtUpperBound++
				}
			}
		}
		rep.Fits = append(rep.Fits, f)
	}
	if rep.Windows == 0 {
		return nil, rep, fmt.Errorf("%w (%d candidates, skipped %v)", ErrNoWindows, rep.Candidates, rep.Skipped)
	}

	var leff, vars, periods []float64
	for _, f := range rep.Fits {
		vars = append(vars, f.VarianceM2[0], f.VarianceM2[1])
		periods = append(periods, f.PeriodS)
	}
	rep.VarianceQuartiles = quartiles(vars)
	rep.PeriodQuartiles = quartiles(periods)

	skipped := make(map[string]int, len(rep.Skipped))
	for k, v := range rep.Skipped {
		if v > 0 {
			skipped[k] = v
		}
	}
	fq := opt.Family
	var (
		fams    []Family
		nominal Family
		nomLS   float64
		method  = s.method
	)
	if opt.compare() {
		var err error
		fams, nominal, nomLS, err = s.combineCompare(rep)
		if err != nil {
			return nil, rep, err
		}
		method += ". Result: " + rep.Comparison.summary()
	}
	leff = rep.LEff()
	rep.LEffQuartiles = quartiles(leff)
	rep.LEffQuartilesEast = quartiles(leff[:rep.Windows])
	rep.LEffQuartilesNorth = quartiles(leff[rep.Windows:])

	// The lengthscales in seconds (the nominal kernel's when comparing),
	// pooled; l_eff at the same quantiles is recorded for comparison with
	// the paper.
	var ls []float64
	for d := range 2 {
		for _, f := range rep.Fits {
			ls = append(ls, f.LengthscaleS[d])
		}
	}
	rep.LengthscaleQuartiles = quartiles(ls)
	lEff := rep.LEffQuantile(opt.Family[1])
	if !opt.compare() {
		lo, hi := quantile(ls, opt.Family[0]), quantile(ls, opt.Family[1])
		nomLS = math.Min(math.Max(quantile(ls, 0.5), lo), hi)
		nominal = Family{Kernel: opt.Kernel, LengthscaleMin: lo, LengthscaleMax: hi, Variance: quantile(vars, 1-opt.Family[1])}
		fams = []Family{nominal}
		rep.Censored = float64(rep.AtUpperBound) > (1-opt.Family[1])*float64(len(leff))
	}
	lq := rep.LengthscaleQuartiles
	p := &Prior{
		Version:     Version,
		Kernel:      nominal.Kernel,
		Variance:    nominal.Variance,
		Lengthscale: nomLS,
		FamilySet:   &FamilySet{Kernels: fams},
		Origin:      centre,
		Fit: &FitRecord{
			Corpus:                publicCorpus(opt.Corpus),
			Windows:               rep.Windows,
			Skipped:               skipped,
			Quantile:              opt.Family[1],
			FamilyQuantiles:       &fq,
			LEff:                  lEff,
			SamplingPeriod:        rep.PeriodQuartiles[1],
			LEffQuartiles:         rep.LEffQuartiles,
			LengthscaleQuartilesS: &lq,
			Method:                method,
		},
	}
	if opt.compare() {
		// Held-out coverage, leaving one person out: measured whenever the
		// corpus has two persons or more.
		if cov, err := s.leaveOnePersonOut(rep.Fits); err == nil {
			rep.HeldOutCoverage = cov
			share := cov.Share
			p.FamilySet.HeldOutCoverage = &share
		}
	}
	if index != nil {
		p.Fit.CorpusIndexed = true
	}
	if err := p.Validate(); err != nil {
		return nil, rep, fmt.Errorf("fitted prior is not usable: %w", err)
	}
	if index != nil {
		var err error
		if index.Prior, err = p.Digest(); err != nil {
			return nil, rep, err
		}
	}
	rep.CorpusIndex = index
	if 2*rep.Windows < rep.Candidates {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("only %d of %d windows could be fitted (skipped: %v): the family describes the windows that were, not the whole corpus", rep.Windows, rep.Candidates, rep.Skipped))
	}
	return p, rep, nil
}

// Merge adds to r the counts of cutting another part of a corpus into
// windows (Windows' report): traces, points, candidates, skipped windows
// by reason, and points thinned and skipped. The parts' reports merged
// equal the report of cutting the whole corpus, as windows never span two
// traces.
func (r *Report) Merge(o *Report) {
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	r.Traces += o.Traces
	r.Points += o.Points
	r.Candidates += o.Candidates
	for k, v := range o.Skipped {
		r.Skipped[k] += v
	}
	r.PointsThinned += o.PointsThinned
	r.PointsSkipped += o.PointsSkipped
}

// Positions counts the valid positions of a corpus by latitude and by
// longitude, for its centre, and keeps the keys of its fixes and its person
// ids, for the private corpus index (trace.CorpusIndex). Parts of a corpus
// add (Merge), so the centre and the index of a corpus spread over many
// workers are exactly those of the whole, in memory proportional to the
// distinct coordinates and fixes.
type Positions struct {
	Lat, Lon map[float64]int
	// Fixes are the sorted, distinct fix keys (trace.FixHashes).
	Fixes []uint64
	// UIDs are the corpus's person ids, as a set.
	UIDs map[string]bool
}

// Index returns the corpus's private index (trace.CorpusIndex); nil for
// a corpus without a valid fix.
func (p Positions) Index() *trace.CorpusIndex {
	if len(p.Fixes) == 0 {
		return nil
	}
	uids := make([]string, 0, len(p.UIDs))
	for u := range p.UIDs {
		uids = append(uids, u)
	}
	return trace.NewCorpusIndex(p.Fixes, uids)
}

// Add counts the valid points of traces and records their fix keys and
// person ids.
func (p *Positions) Add(traces ...*trace.Trace) {
	if p.Lat == nil {
		p.Lat, p.Lon = map[float64]int{}, map[float64]int{}
	}
	if p.UIDs == nil {
		p.UIDs = map[string]bool{}
	}
	p.Fixes = trace.MergeFixHashes(p.Fixes, trace.FixHashes(traces...))
	for _, t := range traces {
		if t.UID != "" {
			p.UIDs[t.UID] = true
		}
		for _, q := range t.Points {
			if q.Geo().Validate() == nil {
				p.Lat[q.Lat]++
				p.Lon[q.Lon]++
			}
		}
	}
}

// Merge adds o's counts, fix keys and person ids to p.
func (p *Positions) Merge(o Positions) {
	if p.Lat == nil {
		p.Lat, p.Lon = map[float64]int{}, map[float64]int{}
	}
	for v, n := range o.Lat {
		p.Lat[v] += n
	}
	for v, n := range o.Lon {
		p.Lon[v] += n
	}
	if len(o.Fixes) > 0 {
		p.Fixes = trace.MergeFixHashes(p.Fixes, o.Fixes)
	}
	if len(o.UIDs) > 0 && p.UIDs == nil {
		p.UIDs = map[string]bool{}
	}
	for k := range o.UIDs {
		p.UIDs[k] = true
	}
}

// Centre returns the centre of the corpus, the median latitude and
// longitude of its valid points rounded to 1e-4 degrees (about 10 m): a
// public origin for the region the prior describes (the corpus is public;
// the traces a prior protects are not in it). The median resists the odd
// trip to another city. Nil for an empty corpus; corpus names it in the
// origin's note.
func (p Positions) Centre(corpus string) *geo.Origin {
	if len(p.Lat) == 0 || p.Span() > MaxCentreSpanM {
		return nil
	}
	r := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
	note := "median position of the fitting corpus"
	if corpus != "" {
		note += " (" + publicCorpus(corpus) + ")"
	}
	return &geo.Origin{Lat: r(countQuantile(p.Lat, 0.5)), Lon: r(countQuantile(p.Lon, 0.5)), Note: note}
}

// MaxCentreSpanM is the largest Span of a corpus whose Centre is
// recorded: beyond it the corpus covers several regions and the median of
// its latitudes and of its longitudes may lie far from all of them (a
// release needs no origin: the prior then records none).
const MaxCentreSpanM = 200_000.0

// Span is the ground distance, in metres, across the 5th to 95th
// percentiles of the corpus's latitudes and of its longitudes (the
// diagonal of that box): small for a city, thousands of kilometres for
// people who travel.
func (p Positions) Span() float64 {
	if len(p.Lat) == 0 {
		return 0
	}
	a := geo.Point{Lat: countQuantile(p.Lat, 0.05), Lon: countQuantile(p.Lon, 0.05)}
	b := geo.Point{Lat: countQuantile(p.Lat, 0.95), Lon: countQuantile(p.Lon, 0.95)}
	return geo.Haversine(a, b)
}

// centreWarnings states what the prior could not record about the corpus
// and why the fit may describe less of it than it read.
func centreWarnings(rep *Report, pos Positions) {
	if len(pos.Lat) > 0 && pos.Span() > MaxCentreSpanM {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the corpus spans %.0f km (5th to 95th percentiles of latitude and longitude): no single centre describes it, so the prior records no origin (releases need none; give --origin to maps and attacks)", pos.Span()/1000))
	}
}

// countQuantile is quantile (type 7) of the values counted in c: the same
// order statistics and the same interpolation as on the values themselves.
func countQuantile(c map[float64]int, q float64) float64 {
	vals := make([]float64, 0, len(c))
	n := 0
	for v, k := range c {
		vals = append(vals, v)
		n += k
	}
	slices.Sort(vals)
	// at returns the k-th smallest value (from 0).
	at := func(k int) float64 {
		for _, v := range vals {
			if k < c[v] {
				return v
			}
			k -= c[v]
		}
		return vals[len(vals)-1]
	}
	h := q * float64(n-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= n {
		return at(n - 1)
	}
	a, b := at(i), at(i+1)
	return a + (h-lo)*(b-a)
}
