package attack

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// DefaultWindow was the number of points FromCertificate attacked at once
// before the linear-time path; CertOptions.Window = DefaultWindow still
// attacks a person in consecutive windows of that many points, each by its
// own adversary.
const DefaultWindow = 1000

// CertOptions configures FromCertificate. The zero value attacks with the
// certificate's prior family, a linear-trend mean and the guard on, all of
// each person's points at once, and runs the place attack on the stays of
// the true trace.
type CertOptions struct {
	// Prior, if set, replaces the certificate's family as the adversary's
	// class (to play an adversary outside it).
	Prior *prior.Prior
	// Mean, Grid and Unguarded are as in Adversary.
	Mean      MeanModel
	Grid      int
	Unguarded bool
	// Window, if positive, attacks a person in consecutive windows of at
	// most Window points, each reconstructed from its own part of the
	// release by its own adversary (a weaker attack; the report says how
	// many windows were used). Zero attacks all of a person's points at
	// once: in linear time when prior and noise have a state-space form
	// (PathStateSpace), otherwise by the bounded dense path (PathLocal
	// beyond DenseWindow points).
	Window int
	// DenseWindow is Adversary.DenseWindow: the most points the dense path
	// factorises at once (zero: DefaultDenseWindow).
	DenseWindow int
	// Places configures the place attack (see PlaceOptions).
	Places PlaceOptions
	// SelectKernels, if not empty, also runs the truth-free
	// model-selection adversary over these kernels (gp.KernelNames): it
	// does not know the prior family, fits each kernel's lengthscale and
	// variance to the release alone, keeps the kernel of the highest
	// restricted likelihood and reconstructs with it (PersonReport.Selection).
	SelectKernels []string
	// Progress, if set, is called as work is done with the steps done,
	// the total and what is being done (calls may come from several
	// goroutines, never at once).
	Progress func(done, total int, detail string)
}

// PersonReport is the attack on one person of a certificate.
type PersonReport struct {
	UID string `json:"uid"`
	// EpsilonCertified is the person's certified epsilon_max, to read the
	// attack against the guarantee.
	EpsilonCertified float64 `json:"epsilon_certified"`
	// CertifiedPoints is the person's number of points in the certificate;
	// Points (of Report) those attacked, fewer when only some of the
	// person's traces were given (one file of a corpus release): the
	// attack then uses the noise law of those points, the marginal of the
	// certified one, and sees only their part of the release.
	CertifiedPoints int `json:"certified_points"`
	// Windows is the number of windows the person was attacked in (1: all
	// points at once).
	Windows int `json:"windows"`
	*Report
	// Selection is the model-selection adversary's outcome (with
	// CertOptions.SelectKernels).
	Selection *Selection `json:"model_selection,omitempty"`
}

// CertReport is the attack on a whole release: the figures pooled over
// every secret point of every person, then each person's report.
type CertReport struct {
	SecretPoints int `json:"secret_points"`
	// RMSE is the reconstruction's planar root mean square error at the
	// secret points, ReleaseRMSE the release's read as it is, and
	// WithinRadius the share of secret points the reconstruction puts
	// within the certificate's radius of the truth.
	RMSE         float64 `json:"rmse_m"`
	ReleaseRMSE  float64 `json:"release_rmse_m"`
	WithinRadius float64 `json:"within_radius_fraction"`
	// ReleaseWithinRadius is the same share for the release itself.
	ReleaseWithinRadius float64 `json:"release_within_radius_fraction"`
	// Coverage95 is the share of secret points inside the adversary's 95 %
	// posterior ellipse (about 0.95 for a calibrated adversary).
	Coverage95 float64 `json:"coverage_95"`
	RadiusM    float64 `json:"radius_m"`
	// StayErrorM is the median over the stays of the true trace (of every
	// person; StayRule) of the distance from the place adversary's
	// estimate to the stay's true centroid: the stay's location is
	// recovered to within StayErrorM metres in half the stays. Nil (JSON
	// null) when there is no stay or the place attack is off.
	// StayPlainMeanErrorM is the same median for the plain mean of the
	// stay's released points.
	StayErrorM          *float64     `json:"stay_error_m"`
	StayPlainMeanErrorM *float64     `json:"stay_plain_mean_error_m"`
	StayRule            *StayRule    `json:"stay_rule,omitempty"`
	Stays               []StayReport `json:"stays"`
	// ModelSelectionRMSE is the model-selection adversary's planar RMSE at
	// the secret points, pooled (with CertOptions.SelectKernels).
	ModelSelectionRMSE *float64       `json:"model_selection_rmse_m,omitempty"`
	Persons            []PersonReport `json:"persons"`
}

// FromCertificate attacks a release of package sanitize from its public
// certificate: for each person it recomputes the noise law from the
// certificate and the released timestamps (the noise kernel of
// Certificate.NoiseCovariance, or its matrix for the e3 design), projects
// release and truth to the certificate's tangent plane, and runs the
// adversary of Attack with the certificate's prior family (or opt.Prior),
// the output grid's rounding as a nugget, on all of the person's points
// jointly (in linear time when the family and the noise are Matérn
// kernels; see CertOptions.Window). truth and released are the original
// and released traces, pairwise (released[i] is the release of truth[i]):
// the traces of a single-file release in the order sanitize saw them, or
// any of the traces of a corpus release (matched to the certificate's
// traces by their times and number of points). A person of whom only some
// traces are given is attacked on those (PersonReport.CertifiedPoints). It
// returns the report and the reconstruction, one trace per released trace.
//
// Unless opt.Places.Off, it also runs the place adversary (EstimatePlace)
// on every stay of each person's true trace (Stays; the truth only says
// where to look and scores the estimate), and with opt.SelectKernels the
// truth-free model-selection adversary.
func FromCertificate(cert *sanitize.Certificate, truth, released []*trace.Trace, opt CertOptions) (*CertReport, []*trace.Trace, error) {
	return FromCertificates([]*sanitize.Certificate{cert}, truth, released, opt)
}

// MinWindow is the fewest points of a window (CertOptions.Window) that
// a prior can be fitted on.
const MinWindow = 10

// Check returns a *param.Error named after the field (window,
// dense_window) that no attack can run with, before any work.
func (o CertOptions) Check() error {
	if o.Window != 0 && o.Window < MinWindow {
		return param.Invalid("window", o.Window, fmt.Sprintf("a window of %d points is too short to fit a prior: want at least %d (0: all of a person's points at once)", o.Window, MinWindow))
	}
	return checkDenseWindow(o.DenseWindow)
}

// FromCertificates is FromCertificate for a release covered by several
// certificates (a corpus release writes one per group of people): every
// released trace must belong to a person of one of them; people none of
// whose traces are given are not attacked.
func FromCertificates(certs []*sanitize.Certificate, truth, released []*trace.Trace, opt CertOptions) (*CertReport, []*trace.Trace, error) {
	if len(certs) == 0 {
		return nil, nil, errors.New("attack: no certificate")
	}
	if len(truth) != len(released) {
		return nil, nil, fmt.Errorf("attack: %d original traces, %d released", len(truth), len(released))
	}
	if err := opt.Check(); err != nil {
		return nil, nil, fmt.Errorf("attack: %w", err)
	}
	if opt.Places.MaxPoints == 0 {
		opt.Places.MaxPoints = DefaultPlaceMaxPoints
	}
	if opt.Places.MaxPoints < 2 {
		return nil, nil, fmt.Errorf("attack: at most %d points per stay: need at least 2", opt.Places.MaxPoints)
	}
	stayOpt, err := opt.Places.Stays.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	for _, k := range opt.SelectKernels {
		if _, err := gp.NewKernel(k, 1, 1, 1); err != nil || k == gp.KernelPeriodic {
			return nil, nil, fmt.Errorf("attack: model selection: kernel %q: want one of %v other than %s", k, gp.KernelNames, gp.KernelPeriodic)
		}
	}
	if opt.Prior != nil {
		if err := opt.Prior.Validate(); err != nil {
			return nil, nil, fmt.Errorf("attack: prior: %w", err)
		}
	}
	for i := range truth {
		if err := samePoints(truth[i], released[i]); err != nil {
			return nil, nil, fmt.Errorf("attack: released trace %d: %w", i+1, err)
		}
	}
	groups, err := matchTraces(certs, released)
	if err != nil {
		return nil, nil, err
	}
	out := &CertReport{RadiusM: certs[0].RadiusM, Stays: []StayReport{}}
	if !opt.Places.Off {
		out.StayRule = &StayRule{RadiusM: stayOpt.RadiusM, MinDurationS: stayOpt.MinDuration.Seconds(), MaxPoints: opt.Places.MaxPoints, Rule: stayRuleText}
	}
	pr := &progress{f: opt.Progress}
	var persons []*person
	for _, gr := range groups {
		cert := gr.cert
		fam := cert.Prior.Family() // the nominal kernel's family (prior.Prior.Family)
		if opt.Prior != nil {
			fam = opt.Prior.Family()
		}
		adv := Adversary{Family: fam, Nugget: cert.OutputGridM * cert.OutputGridM / 12, Mean: opt.Mean, Grid: opt.Grid,
			Unguarded: opt.Unguarded, DenseWindow: opt.DenseWindow}
		p, err := newPerson(cert, gr.pc, gr.traces, truth, released, opt.Window, adv)
		if err != nil {
			return nil, nil, fmt.Errorf("attack: person %q: %w", gr.pc.UID, err)
		}
		persons = append(persons, p)
		pr.total += p.windows * 2 * (1 + len(opt.SelectKernels)) * runUnits
		if !opt.Places.Off {
			pr.total += runUnits
		}
	}
	recs := make([]*trace.Trace, len(released))
	var se, rse, within, relWithin, covered, selSE float64
	for _, p := range persons {
		uid := p.pc.UID
		rep, err := p.attack(recs, pr)
		if err != nil {
			return nil, nil, fmt.Errorf("attack: person %q: %w", uid, err)
		}
		pRep := PersonReport{UID: uid, EpsilonCertified: p.pc.EpsilonMax, CertifiedPoints: p.pc.Points, Windows: p.windows, Report: rep}
		k := float64(rep.Secrets)
		if len(opt.SelectKernels) > 0 {
			if pRep.Selection, err = p.selectModel(opt.SelectKernels, pr); err != nil {
				return nil, nil, fmt.Errorf("attack: person %q: model selection: %w", uid, err)
			}
			selSE += k * pRep.Selection.RMSE * pRep.Selection.RMSE
		}
		if !opt.Places.Off {
			stays, err := p.places(stayOpt, opt.Places.MaxPoints)
			if err != nil {
				return nil, nil, fmt.Errorf("attack: person %q: place attack: %w", uid, err)
			}
			out.Stays = append(out.Stays, stays...)
			pr.advance(runUnits, fmt.Sprintf("place attack on %d stays of person %q", len(stays), uid))
		}
		out.SecretPoints += rep.Secrets
		se += k * rep.ReconstructedRMSE * rep.ReconstructedRMSE
		rse += k * rep.ReleasedRMSE * rep.ReleasedRMSE
		within += k * rep.WithinRadius
		relWithin += k * rep.ReleaseWithinRadius
		covered += k * rep.Coverage95
		out.Persons = append(out.Persons, pRep)
	}
	if k := float64(out.SecretPoints); k > 0 {
		out.RMSE, out.ReleaseRMSE = math.Sqrt(se/k), math.Sqrt(rse/k)
		out.WithinRadius, out.ReleaseWithinRadius, out.Coverage95 = within/k, relWithin/k, covered/k
		if len(opt.SelectKernels) > 0 {
			v := math.Sqrt(selSE / k)
			out.ModelSelectionRMSE = &v
		}
	}
	if len(out.Stays) > 0 {
		var e, pm []float64
		for _, s := range out.Stays {
			e, pm = append(e, s.ErrorM), append(pm, s.PlainMeanErrorM)
		}
		me, mp := median(e), median(pm)
		out.StayErrorM, out.StayPlainMeanErrorM = &me, &mp
	}
	return out, recs, nil
}

// samePoints checks that a released trace has its original's timestamps.
func samePoints(t, r *trace.Trace) error {
	if t.Len() != r.Len() {
		return fmt.Errorf("original %d points, release %d (give the originals in the order of the released traces)", t.Len(), r.Len())
	}
	for i := range t.Points {
		if !t.Points[i].Time.Equal(r.Points[i].Time) {
			return fmt.Errorf("point %d: original time %v, release %v (give the originals in the order of the released traces)", i+1, t.Points[i].Time, r.Points[i].Time)
		}
	}
	return nil
}

// personTraces is one person of a certificate with the released traces
// that are theirs: traces[k] is the index (into the released traces) of
// the person's k-th certificate trace, -1 if not given.
type personTraces struct {
	cert   *sanitize.Certificate
	pc     *sanitize.PersonCertificate
	traces []int
}

// matchTraces assigns every released trace to a trace of a person of the
// certificates. A single-file release lists its traces by their index in
// the input, so released[i] is the certificate's trace of index i when
// its number of points, first and last times agree; otherwise (a file or
// a directory of a corpus release) a released trace is matched to the
// certificate's trace with the same number of points, first and last
// times (and name, to tell apart traces that agree on those).
func matchTraces(certs []*sanitize.Certificate, released []*trace.Trace) ([]*personTraces, error) {
	type ref struct {
		g *personTraces
		k int
	}
	type key struct {
		n          int
		start, end int64
	}
	var groups []*personTraces
	byKey := map[key][]ref{}
	byIndex := map[int][]ref{}
	for _, c := range certs {
		for _, pc := range c.Persons {
			g := &personTraces{cert: c, pc: pc, traces: make([]int, len(pc.Traces))}
			for k, ti := range pc.Traces {
				g.traces[k] = -1
				kk := key{ti.Points, ti.Start.UnixNano(), ti.End.UnixNano()}
				byKey[kk] = append(byKey[kk], ref{g, k})
				byIndex[ti.Index] = append(byIndex[ti.Index], ref{g, k})
			}
			groups = append(groups, g)
		}
	}
	fits := func(r ref, t *trace.Trace) bool {
		ti := r.g.pc.Traces[r.k]
		return r.g.traces[r.k] < 0 && ti.Points == t.Len() && t.Len() > 0 &&
			ti.Start.Equal(t.Points[0].Time) && ti.End.Equal(t.Points[t.Len()-1].Time)
	}
	for i, t := range released {
		var found *ref
		if len(certs) == 1 {
			for _, r := range byIndex[i] {
				if fits(r, t) {
					found = &r
					break
				}
			}
		}
		if found == nil && t.Len() > 0 {
			var cands []ref
			for _, r := range byKey[key{t.Len(), t.Points[0].Time.UnixNano(), t.Points[t.Len()-1].Time.UnixNano()}] {
				if fits(r, t) {
					cands = append(cands, r)
				}
			}
			for _, r := range cands {
				if name := r.g.pc.Traces[r.k].Name; len(cands) == 1 || (name != "" && name == t.Name) {
					found = &r
					break
				}
			}
			if found == nil && len(cands) > 0 {
				found = &cands[0]
			}
		}
		if found == nil {
			desc := "no points"
			if t.Len() > 0 {
				desc = fmt.Sprintf("%d points from %s to %s", t.Len(), t.Points[0].Time.Format(time.RFC3339), t.Points[t.Len()-1].Time.Format(time.RFC3339))
			}
			return nil, fmt.Errorf("attack: released trace %d (%s) is not a trace of the certificate: give the certificate of the release it comes from (--certificate; a corpus release keeps them under certificates/ and lists them in manifest.json)", i+1, desc)
		}
		found.g.traces[found.k] = i
	}
	var out []*personTraces
	for _, g := range groups {
		for _, i := range g.traces {
			if i >= 0 {
				out = append(out, g)
				break
			}
		}
	}
	return out, nil
}

// progress counts units of work for CertOptions.Progress. Every
// reconstruction of one dimension is runUnits units, advanced by one per
// likelihood evaluation (a search takes 50 to 100) and completed when it
// ends.
type progress struct {
	mu          sync.Mutex
	f           func(done, total int, detail string)
	done, total int
}

const runUnits = 100

func (p *progress) advance(units int, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += units
	if p.f != nil {
		p.f(p.done, p.total, detail)
	}
}

// run returns the per-evaluation hook of one reconstruction and a function
// that completes its units.
func (p *progress) run(detail string) (func(evals int), func()) {
	used := 0
	return func(evals int) {
			if used < runUnits-10 {
				used++
				p.advance(1, fmt.Sprintf("%s (%d likelihoods)", detail, evals))
			}
		}, func() {
			p.advance(runUnits-used, detail+", done")
		}
}

// person is one person's points in time order, truth and release on the
// plane, their secret points and their noise law.
type person struct {
	cert      *sanitize.Certificate
	pc        *sanitize.PersonCertificate
	adv       Adversary
	pts       []personPoint
	times     []time.Time
	ts        []float64
	truthP    Planar
	relP      Planar
	truthPts  []trace.Point
	secretPts []int
	// noise is the noise law at all the person's points given (with the
	// nugget and the certificate's jitters as white noise).
	noise   *noiseLaw
	window  int
	windows int
	enu     *geo.ENU
}

type personPoint struct {
	tr, i int
	t     time.Time
}

func newPerson(cert *sanitize.Certificate, pc *sanitize.PersonCertificate, traces []int, truth, released []*trace.Trace, window int, adv Adversary) (*person, error) {
	p := &person{cert: cert, pc: pc, adv: adv}
	partial := false
	for _, tr := range traces {
		if tr < 0 {
			partial = true
			continue
		}
		for i, q := range truth[tr].Points {
			p.pts = append(p.pts, personPoint{tr, i, q.Time})
		}
	}
	// Time order over the person's traces, as sanitize ordered them (ties
	// keep the certificate's trace order).
	pts := p.pts
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].t.Before(pts[b].t) })
	n := len(pts)
	var rel []geo.Point
	for _, q := range pts {
		rel = append(rel, released[q.tr].Points[q.i].Geo())
	}
	enu := geo.NewENU(centre(rel))
	p.enu = enu
	p.times = make([]time.Time, n)
	p.truthPts = make([]trace.Point, n)
	p.truthP = Planar{East: make([]float64, n), North: make([]float64, n)}
	p.relP = Planar{East: make([]float64, n), North: make([]float64, n)}
	for k, q := range pts {
		p.times[k] = q.t
		p.truthPts[k] = truth[q.tr].Points[q.i]
		p.truthP.East[k], p.truthP.North[k] = enu.Forward(truth[q.tr].Points[q.i].Geo())
		p.relP.East[k], p.relP.North[k] = enu.Forward(released[q.tr].Points[q.i].Geo())
	}
	var err error
	if p.ts, err = gp.Seconds(p.times); err != nil {
		return nil, err
	}
	secret := make([]bool, n)
	switch {
	case pc.Secrets.Spec == "all":
		for k := range secret {
			secret[k] = true
		}
	case partial:
		// The certificate's indices count all the person's points: match
		// the secrets' times instead.
		at := map[int64][]int{}
		for k, t := range p.times {
			at[t.UnixNano()] = append(at[t.UnixNano()], k)
		}
		for _, s := range pc.SecretList {
			for _, t := range s.Times {
				for _, k := range at[t.UnixNano()] {
					secret[k] = true
				}
			}
		}
	default:
		for _, s := range pc.SecretList {
			for _, k := range s.Points {
				if k < 0 || k >= n {
					return nil, fmt.Errorf("the certificate's secret point %d is outside the person's %d points", k, n)
				}
				secret[k] = true
			}
		}
	}
	for k, s := range secret {
		if s {
			p.secretPts = append(p.secretPts, k)
		}
	}
	if len(p.secretPts) == 0 {
		return nil, errors.New("none of the person's secrets is among the points given")
	}
	if p.noise, err = certNoise(cert, pc, p.ts, partial, adv.Nugget); err != nil {
		return nil, err
	}
	p.window, p.windows = n, 1
	if window > 0 {
		p.window = window
		p.windows = (n + window - 1) / window
	}
	return p, nil
}

// centre returns the point of the surface below the mean Earth-centred
// position of pts: the attack's tangent plane for a person. The release's
// noise is drawn in Earth-centred coordinates, independent with the same
// covariance on each axis, and projected to the surface (sanitize's
// CoordinatesECEF), so at a point at angle theta from the plane's centre
// its east and north parts in the plane have that covariance times
// I - a a^T, |a| = sin theta: within 0.03 % of the attack's model for a
// person within 100 km of the centre, 1.5 % at 1,100 km. The centre is
// computed from the release, which is public.
func centre(pts []geo.Point) geo.Point {
	var x, y, z float64
	for _, p := range pts {
		a, b, c := geo.ECEF(p)
		x, y, z = x+a, y+b, z+c
	}
	return geo.FromECEF(x, y, z)
}

// certNoise returns the noise law of a person's points at ts (seconds from
// their first) with the nugget: for the kernel designs (envelope,
// proportional) the stationary kernel of Certificate.NoiseCovariance,
// with the certificate's jitters as white noise; for e3, the matrix
// (which needs all the person's points).
func certNoise(cert *sanitize.Certificate, pc *sanitize.PersonCertificate, ts []float64, partial bool, nugget float64) (*noiseLaw, error) {
	switch cert.Design {
	case sanitize.DesignEnvelope, sanitize.DesignProportional:
		terms, err := cert.NoiseKernels(pc)
		if err != nil {
			return nil, err
		}
		g := &noiseLaw{ts: ts, terms: terms, white: pc.Jitter + pc.SamplingJitter + nugget}
		return g, nil
	}
	if partial {
		return nil, fmt.Errorf("the %s design's noise covariance depends on all of the person's %d points: give all of their traces (the directory of the release)", cert.Design, pc.Points)
	}
	full, err := cert.NoiseCovariance(pc, ts)
	if err != nil {
		return nil, err
	}
	return &noiseLaw{ts: ts, dense: full, white: nugget}, nil
}

// noiseAt returns the noise covariance of the points idx (increasing),
// with the nugget of the output grid on the diagonal.
func (p *person) noiseAt(idx []int) (*mat.SymDense, error) { return p.noise.block(idx), nil }

// window returns the noise law of the points lo..hi-1.
func (p *person) noiseWindow(lo, hi int) *noiseLaw {
	g := &noiseLaw{ts: p.ts[lo:hi], terms: p.noise.terms, white: p.noise.white}
	if p.noise.dense != nil {
		g.dense = p.noise.dense.(*mat.SymDense).SliceSym(lo, hi)
	}
	return g
}

// reconstruct runs the adversary advFor gives on every window, both
// dimensions concurrently, and joins the estimates; it returns them with
// the restricted log likelihood summed over windows and dimensions.
func (p *person) reconstruct(advFor func(wts []float64) Adversary, pr *progress, what string) ([2]*Estimate, float64, error) {
	n := len(p.pts)
	var est [2]*Estimate
	for d := range est {
		est[d] = &Estimate{Mean: make([]float64, n), Variance: make([]float64, n), Risk: make([]float64, n)}
	}
	ll := 0.0
	for w := range p.windows {
		lo, hi := w*n/p.windows, (w+1)*n/p.windows
		wts := p.ts[lo:hi]
		g := p.noiseWindow(lo, hi)
		var we [2]*Estimate
		var errs [2]error
		var wg sync.WaitGroup
		for d, z := range [2][]float64{p.relP.East[lo:hi], p.relP.North[lo:hi]} {
			detail := fmt.Sprintf("%s, person %q, %s", what, p.pc.UID, [2]string{"east", "north"}[d])
			if p.windows > 1 {
				detail += fmt.Sprintf(", window %d/%d", w+1, p.windows)
			}
			wadv := advFor(wts)
			var done func()
			wadv.progress, done = pr.run(detail)
			wg.Go(func() {
				we[d], errs[d] = reconstruct(wts, z, g, wadv)
				done()
			})
		}
		wg.Wait()
		for d, e := range we {
			if errs[d] != nil {
				return est, 0, fmt.Errorf("window %d of %d: %w", w+1, p.windows, errs[d])
			}
			copy(est[d].Mean[lo:], e.Mean)
			copy(est[d].Variance[lo:], e.Variance)
			copy(est[d].Risk[lo:], e.Risk)
			if w == 0 {
				est[d].Fit = e.Fit
			}
			ll += e.Fit.LogLikelihood
		}
	}
	return est, ll, nil
}

// attack runs the adversary of the prior class, writes the reconstruction
// into recs and scores it at the person's secret points.
func (p *person) attack(recs []*trace.Trace, pr *progress) (*Report, error) {
	est, _, err := p.reconstruct(func([]float64) Adversary { return p.adv }, pr, "GP attack")
	if err != nil {
		return nil, err
	}
	rep, err := score(p.truthP, p.relP, est, p.secretPts, p.cert.RadiusM)
	if err != nil {
		return nil, err
	}
	rec := Planar{East: est[0].Mean, North: est[1].Mean}
	count := map[int]int{}
	for _, q := range p.pts {
		count[q.tr]++
	}
	for tr, c := range count {
		recs[tr] = &trace.Trace{UID: p.pc.UID, Name: "reconstruction", Points: make([]trace.Point, c)}
	}
	for k, q := range p.pts {
		g := p.enu.InverseClamped(rec.East[k], rec.North[k])
		recs[q.tr].Points[q.i] = trace.Point{Time: q.t, Lat: g.Lat, Lon: g.Lon, Alt: math.NaN()}
	}
	return rep, nil
}

// places runs the place adversary on the stays of the person's true trace.
func (p *person) places(opt StayOptions, maxPoints int) ([]StayReport, error) {
	stays, err := Stays(p.truthPts, opt)
	if err != nil {
		return nil, err
	}
	return placeAttack(p.pc.UID, stays, p.times, p.truthP, p.relP, maxPoints, p.noiseAt)
}
