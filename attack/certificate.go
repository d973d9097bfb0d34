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
// certificate's prior family, a linear-trend mean and the guard on.
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
	Coverage95 float64        `json:"coverage_95"`
	RadiusM    float64        `json:"radius_m"`
	Persons    []PersonReport `json:"persons"`
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
	fam := cert.PriorFamily
	if opt.Prior != nil {
		if err := opt.Prior.Validate(); err != nil {
			return nil, nil, fmt.Errorf("attack: prior: %w", err)
		}
		fam = opt.Prior.Family()
	}
	adv := Adversary{Family: fam, Nugget: cert.OutputGridM * cert.OutputGridM / 12, Mean: opt.Mean, Grid: opt.Grid, Unguarded: opt.Unguarded}
	origin := cert.Origin.Point()
	enu := geo.NewENU(origin)
	out := &CertReport{RadiusM: cert.RadiusM}
	recs := make([]*trace.Trace, len(released))
	var se, rse, within, relWithin, covered float64
	for _, pc := range cert.Persons {
		rep, windows, err := attackPerson(cert, pc, truth, released, adv, enu, recs, opt.Window)
		if err != nil {
			return nil, nil, fmt.Errorf("attack: person %q: %w", pc.UID, err)
		}
		k := float64(rep.Secrets)
		out.SecretPoints += rep.Secrets
		se += k * rep.ReconstructedRMSE * rep.ReconstructedRMSE
		rse += k * rep.ReleasedRMSE * rep.ReleasedRMSE
		within += k * rep.WithinRadius
		relWithin += k * rep.ReleaseWithinRadius
		covered += k * rep.Coverage95
		out.Persons = append(out.Persons, PersonReport{UID: pc.UID, EpsilonCertified: pc.EpsilonMax, Windows: windows, Report: rep})
	}
	if k := float64(out.SecretPoints); k > 0 {
		out.RMSE, out.ReleaseRMSE = math.Sqrt(se/k), math.Sqrt(rse/k)
		out.WithinRadius, out.ReleaseWithinRadius, out.Coverage95 = within/k, relWithin/k, covered/k
	}
	for i, r := range recs {
		if r == nil {
			return nil, nil, fmt.Errorf("attack: released trace %d belongs to no person of the certificate", i+1)
		}
	}
	return out, recs, nil
}

// attackPerson attacks one person's points in time order, in windows of at
// most window points, writes their reconstruction into recs and returns
// the report over all the person's secret points and the windows used.
func attackPerson(cert *sanitize.Certificate, pc *sanitize.PersonCertificate, truth, released []*trace.Trace, adv Adversary, enu *geo.ENU, recs []*trace.Trace, window int) (*Report, int, error) {
	type at struct {
		tr, i int
		t     time.Time
	}
	var pts []at
	for _, ti := range pc.Traces {
		if ti.Index < 0 || ti.Index >= len(truth) {
			return nil, 0, fmt.Errorf("the certificate names trace %d, the input has %d", ti.Index+1, len(truth))
		}
		tt, rt := truth[ti.Index], released[ti.Index]
		if tt.Len() != rt.Len() || tt.Len() != ti.Points {
			return nil, 0, fmt.Errorf("trace %d: original %d points, release %d, certificate %d", ti.Index+1, tt.Len(), rt.Len(), ti.Points)
		}
		for i := range tt.Points {
			if !tt.Points[i].Time.Equal(rt.Points[i].Time) {
				return nil, 0, fmt.Errorf("trace %d point %d: original time %v, release %v", ti.Index+1, i+1, tt.Points[i].Time, rt.Points[i].Time)
			}
			pts = append(pts, at{ti.Index, i, tt.Points[i].Time})
		}
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].t.Before(pts[b].t) })
	times := make([]time.Time, len(pts))
	truthP := Planar{East: make([]float64, len(pts)), North: make([]float64, len(pts))}
	relP := Planar{East: make([]float64, len(pts)), North: make([]float64, len(pts))}
	for k, p := range pts {
		times[k] = p.t
		truthP.East[k], truthP.North[k] = enu.Forward(truth[p.tr].Points[p.i].Geo())
		relP.East[k], relP.North[k] = enu.Forward(released[p.tr].Points[p.i].Geo())
	}
	ts, err := gp.Seconds(times)
	if err != nil {
		return nil, 0, err
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
					return nil, 0, fmt.Errorf("the certificate's secret point %d is outside the person's %d points", k, len(pts))
				}
				secret[k] = true
			}
		}
	}
	// A design that is not a kernel (e3) has one covariance over all the
	// person's points: computed once, windows take their blocks.
	var full *mat.SymDense
	if len(cert.NoiseKernel) == 0 {
		if full, err = cert.NoiseCovariance(pc, ts); err != nil {
			return nil, 0, err
		}
	}
	windows := (len(pts) + window - 1) / window
	// Each window reconstructs both dimensions from its own part of the
	// release; the estimates are joined and the person scored once.
	var est [2]*Estimate
	for d := range est {
		est[d] = &Estimate{Mean: make([]float64, len(pts)), Variance: make([]float64, len(pts)), Risk: make([]float64, len(pts))}
	}
	for w := range windows {
		lo, hi := w*len(pts)/windows, (w+1)*len(pts)/windows
		wts := ts[lo:hi]
		var sigmaG mat.Symmetric
		if full != nil {
			sigmaG = full.SliceSym(lo, hi)
		} else if sigmaG, err = cert.NoiseCovariance(pc, shift(wts)); err != nil {
			// Stationary noise: its covariance at the window's times.
			return nil, 0, err
		}
		var we [2]*Estimate
		var errs [2]error
		var wg sync.WaitGroup
		for d, z := range [2][]float64{relP.East[lo:hi], relP.North[lo:hi]} {
			wg.Go(func() { we[d], errs[d] = Reconstruct(wts, z, sigmaG, adv) })
		}
		wg.Wait()
		for d, e := range we {
			if errs[d] != nil {
				return nil, 0, fmt.Errorf("window %d of %d: %w", w+1, windows, errs[d])
			}
			copy(est[d].Mean[lo:], e.Mean)
			copy(est[d].Variance[lo:], e.Variance)
			copy(est[d].Risk[lo:], e.Risk)
			if w == 0 {
				est[d].Fit = e.Fit
			}
		}
	}
	var secretPts []int
	for k, s := range secret {
		if s {
			secretPts = append(secretPts, k)
		}
	}
	rep, err := score(truthP, relP, est, secretPts, cert.RadiusM)
	if err != nil {
		return nil, 0, err
	}
	rec := Planar{East: est[0].Mean, North: est[1].Mean}
	for _, ti := range pc.Traces {
		recs[ti.Index] = &trace.Trace{UID: pc.UID, Name: "reconstruction", Points: make([]trace.Point, ti.Points)}
	}
	for k, p := range pts {
		q := enu.InverseClamped(rec.East[k], rec.North[k])
		recs[p.tr].Points[p.i] = trace.Point{Time: p.t, Lat: q.Lat, Lon: q.Lon, Alt: math.NaN()}
	}
	return rep, windows, nil
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
