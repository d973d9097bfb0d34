package attack

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// DefaultWindow bounds the points FromCertificate attacks at once: each
// likelihood evaluation factorises an n x n matrix, so a longer person is
// attacked in consecutive windows of this many points.
const DefaultWindow = 1000

// CertOptions configures FromCertificate. The zero value attacks with the
// certificate's prior family, a linear-trend mean and the guard on, and
// runs the place attack on the stays of the true trace.
type CertOptions struct {
	// Prior, if set, replaces the certificate's family as the adversary's
	// class (to play an adversary outside it).
	Prior *gp.Prior
	// Mean, Grid and Unguarded are as in Adversary.
	Mean      MeanModel
	Grid      int
	Unguarded bool
	// Window bounds the points attacked at once (default DefaultWindow): a
	// person with more points is attacked in consecutive windows, each
	// reconstructed from its own part of the release. An adversary that
	// uses the whole release at once can only do better; the report says
	// how many windows were used.
	Window int
	// Places configures the place attack (see PlaceOptions).
	Places PlaceOptions
	// SelectKernels, if not empty, also runs the truth-free
	// model-selection adversary over these kernels (gp.KernelNames): it
	// does not know the prior family, fits each kernel's lengthscale and
	// variance to the release alone, keeps the kernel of the highest
	// restricted likelihood and reconstructs with it (PersonReport.Selection).
	SelectKernels []string
	// Progress, if set, is called after each step of work with the steps
	// done, the total and what was done.
	Progress func(done, total int, detail string)
}

// PersonReport is the attack on one person of a certificate.
type PersonReport struct {
	UID string `json:"uid"`
	// EpsilonCertified is the person's certified epsilon_max, to read the
	// attack against the guarantee.
	EpsilonCertified float64 `json:"epsilon_certified"`
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
// certificate: for each person it recomputes the noise covariance from the
// certificate and the released timestamps (Certificate.NoiseCovariance),
// projects release and truth to the certificate's tangent plane, and runs
// the adversary of Attack with the certificate's prior family (or
// opt.Prior), the output grid's rounding as a nugget, on all of the
// person's points jointly. truth and released are the input and output
// traces in the order sanitize saw them. It returns the report and the
// reconstruction, one trace per released trace.
//
// Unless opt.Places.Off, it also runs the place adversary (EstimatePlace)
// on every stay of each person's true trace (Stays; the truth only says
// where to look and scores the estimate), and with opt.SelectKernels the
// truth-free model-selection adversary.
func FromCertificate(cert *sanitize.Certificate, truth, released []*trace.Trace, opt CertOptions) (*CertReport, []*trace.Trace, error) {
	if len(truth) != len(released) {
		return nil, nil, fmt.Errorf("attack: %d original traces, %d released", len(truth), len(released))
	}
	if opt.Window == 0 {
		opt.Window = DefaultWindow
	}
	if opt.Window < 10 {
		return nil, nil, fmt.Errorf("attack: a window of %d points is too short to fit a prior", opt.Window)
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
	fam := cert.Prior.Family() // the nominal kernel's family (gp.Prior.Family)
	if opt.Prior != nil {
		if err := opt.Prior.Validate(); err != nil {
			return nil, nil, fmt.Errorf("attack: prior: %w", err)
		}
		fam = opt.Prior.Family()
	}
	adv := Adversary{Family: fam, Nugget: cert.OutputGridM * cert.OutputGridM / 12, Mean: opt.Mean, Grid: opt.Grid, Unguarded: opt.Unguarded}
	origin := cert.Origin.Point()
	enu := geo.NewENU(origin)
	out := &CertReport{RadiusM: cert.RadiusM, Stays: []StayReport{}}
	if !opt.Places.Off {
		out.StayRule = &StayRule{RadiusM: stayOpt.RadiusM, MinDurationS: stayOpt.MinDuration.Seconds(), MaxPoints: opt.Places.MaxPoints, Rule: stayRuleText}
	}
	pr := &progress{f: opt.Progress}
	for _, pc := range cert.Persons {
		w := (pc.Points + opt.Window - 1) / opt.Window
		pr.total += w * (1 + len(opt.SelectKernels))
		if !opt.Places.Off {
			pr.total++
		}
	}
	recs := make([]*trace.Trace, len(released))
	var se, rse, within, relWithin, covered, selSE float64
	for _, pc := range cert.Persons {
		p, err := newPerson(cert, pc, truth, released, enu, opt.Window, adv.Nugget)
		if err != nil {
			return nil, nil, fmt.Errorf("attack: person %q: %w", pc.UID, err)
		}
		rep, err := p.attack(adv, recs, pr)
		if err != nil {
			return nil, nil, fmt.Errorf("attack: person %q: %w", pc.UID, err)
		}
		pRep := PersonReport{UID: pc.UID, EpsilonCertified: pc.EpsilonMax, Windows: p.windows, Report: rep}
		k := float64(rep.Secrets)
		if len(opt.SelectKernels) > 0 {
			if pRep.Selection, err = p.selectModel(adv, opt.SelectKernels, pr); err != nil {
				return nil, nil, fmt.Errorf("attack: person %q: model selection: %w", pc.UID, err)
			}
			selSE += k * pRep.Selection.RMSE * pRep.Selection.RMSE
		}
		if !opt.Places.Off {
			stays, err := p.places(stayOpt, opt.Places.MaxPoints)
			if err != nil {
				return nil, nil, fmt.Errorf("attack: person %q: place attack: %w", pc.UID, err)
			}
			out.Stays = append(out.Stays, stays...)
			pr.step(fmt.Sprintf("place attack on %d stays of person %q", len(stays), pc.UID))
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
	for i, r := range recs {
		if r == nil {
			return nil, nil, fmt.Errorf("attack: released trace %d belongs to no person of the certificate", i+1)
		}
	}
	return out, recs, nil
}

// progress counts steps of work for CertOptions.Progress.
type progress struct {
	f           func(done, total int, detail string)
	done, total int
}

func (p *progress) step(detail string) {
	p.done++
	if p.f != nil {
		p.f(p.done, p.total, detail)
	}
}

// person is one person's points in time order, truth and release on the
// plane, their secret points and what recomputes their noise covariance.
type person struct {
	cert      *sanitize.Certificate
	pc        *sanitize.PersonCertificate
	pts       []personPoint
	times     []time.Time
	ts        []float64
	truthP    Planar
	relP      Planar
	truthPts  []trace.Point
	secretPts []int
	// full is the noise covariance over all points for a design that is
	// not a kernel (e3): windows and stays take its blocks.
	full    *mat.SymDense
	window  int
	windows int
	nugget  float64
	enu     *geo.ENU
}

type personPoint struct {
	tr, i int
	t     time.Time
}

func newPerson(cert *sanitize.Certificate, pc *sanitize.PersonCertificate, truth, released []*trace.Trace, enu *geo.ENU, window int, nugget float64) (*person, error) {
	p := &person{cert: cert, pc: pc, window: window, nugget: nugget, enu: enu}
	for _, ti := range pc.Traces {
		if ti.Index < 0 || ti.Index >= len(truth) {
			return nil, fmt.Errorf("the certificate names trace %d, the input has %d", ti.Index+1, len(truth))
		}
		tt, rt := truth[ti.Index], released[ti.Index]
		if tt.Len() != rt.Len() || tt.Len() != ti.Points {
			return nil, fmt.Errorf("trace %d: original %d points, release %d, certificate %d", ti.Index+1, tt.Len(), rt.Len(), ti.Points)
		}
		for i := range tt.Points {
			if !tt.Points[i].Time.Equal(rt.Points[i].Time) {
				return nil, fmt.Errorf("trace %d point %d: original time %v, release %v", ti.Index+1, i+1, tt.Points[i].Time, rt.Points[i].Time)
			}
			p.pts = append(p.pts, personPoint{ti.Index, i, tt.Points[i].Time})
		}
	}
	pts := p.pts
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].t.Before(pts[b].t) })
	p.times = make([]time.Time, len(pts))
	p.truthPts = make([]trace.Point, len(pts))
	p.truthP = Planar{East: make([]float64, len(pts)), North: make([]float64, len(pts))}
	p.relP = Planar{East: make([]float64, len(pts)), North: make([]float64, len(pts))}
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
	secret := make([]bool, len(pts))
	if pc.Secrets.Spec == "all" {
		for k := range secret {
			secret[k] = true
		}
	} else {
		for _, s := range pc.SecretList {
			for _, k := range s.Points {
				if k < 0 || k >= len(pts) {
					return nil, fmt.Errorf("the certificate's secret point %d is outside the person's %d points", k, len(pts))
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
	if len(cert.NoiseKernel) == 0 {
		if p.full, err = cert.NoiseCovariance(pc, p.ts); err != nil {
			return nil, err
		}
	}
	p.windows = (len(pts) + window - 1) / window
	return p, nil
}

// noiseWindow returns the noise covariance of the points lo..hi-1.
func (p *person) noiseWindow(lo, hi int) (mat.Symmetric, error) {
	if p.full != nil {
		return p.full.SliceSym(lo, hi), nil
	}
	// Stationary noise: its covariance at the window's times.
	return p.cert.NoiseCovariance(p.pc, shift(p.ts[lo:hi]))
}

// noiseAt returns the noise covariance of the points idx (increasing),
// with the nugget of the output grid on the diagonal.
func (p *person) noiseAt(idx []int) (*mat.SymDense, error) {
	n := len(idx)
	var g *mat.SymDense
	if p.full != nil {
		g = mat.NewSymDense(n, nil)
		for a, i := range idx {
			for b := a; b < n; b++ {
				g.SetSym(a, b, p.full.At(i, idx[b]))
			}
		}
	} else {
		ts := make([]float64, n)
		for a, i := range idx {
			ts[a] = p.ts[i] - p.ts[idx[0]]
		}
		var err error
		if g, err = p.cert.NoiseCovariance(p.pc, ts); err != nil {
			return nil, err
		}
	}
	for a := range n {
		g.SetSym(a, a, g.At(a, a)+p.nugget)
	}
	return g, nil
}

// reconstruct runs adv on every window, both dimensions concurrently, and
// joins the estimates; it returns them with the restricted log likelihood
// summed over windows and dimensions.
// advFor gives the adversary of a window from its times.
func (p *person) reconstruct(advFor func(wts []float64) Adversary, pr *progress, what string) ([2]*Estimate, float64, error) {
	n := len(p.pts)
	// Each window reconstructs both dimensions from its own part of the
	// release; the estimates are joined and the person scored once.
	var est [2]*Estimate
	for d := range est {
		est[d] = &Estimate{Mean: make([]float64, n), Variance: make([]float64, n), Risk: make([]float64, n)}
	}
	ll := 0.0
	for w := range p.windows {
		lo, hi := w*n/p.windows, (w+1)*n/p.windows
		wts := p.ts[lo:hi]
		sigmaG, err := p.noiseWindow(lo, hi)
		if err != nil {
			return est, 0, err
		}
		wadv := advFor(wts)
		var we [2]*Estimate
		var errs [2]error
		var wg sync.WaitGroup
		for d, z := range [2][]float64{p.relP.East[lo:hi], p.relP.North[lo:hi]} {
			wg.Go(func() { we[d], errs[d] = Reconstruct(wts, z, sigmaG, wadv) })
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
		pr.step(fmt.Sprintf("%s, person %q window %d/%d", what, p.pc.UID, w+1, p.windows))
	}
	return est, ll, nil
}

// attack runs the adversary of the prior class, writes the reconstruction
// into recs and scores it at the person's secret points.
func (p *person) attack(adv Adversary, recs []*trace.Trace, pr *progress) (*Report, error) {
	est, _, err := p.reconstruct(func([]float64) Adversary { return adv }, pr, "GP attack")
	if err != nil {
		return nil, err
	}
	rep, err := score(p.truthP, p.relP, est, p.secretPts, p.cert.RadiusM)
	if err != nil {
		return nil, err
	}
	rec := Planar{East: est[0].Mean, North: est[1].Mean}
	for _, ti := range p.pc.Traces {
		recs[ti.Index] = &trace.Trace{UID: p.pc.UID, Name: "reconstruction", Points: make([]trace.Point, ti.Points)}
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

// shift returns ts minus its first value (the noise kernels are
// stationary, and NoiseCovariance expects seconds from the first point).
func shift(ts []float64) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t - ts[0]
	}
	return out
}
