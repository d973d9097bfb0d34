package attack

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/geo"
)

// Planar holds one trace dimension pair in local metres.
type Planar struct {
	East, North []float64
}

// Project maps points to local metres around origin.
func Project(origin geo.Point, pts []geo.Point) Planar {
	enu := geo.NewENU(origin)
	p := Planar{East: make([]float64, len(pts)), North: make([]float64, len(pts))}
	for i, q := range pts {
		p.East[i], p.North[i] = enu.Forward(q)
	}
	return p
}

// chi2Planar95 is the 95 % quantile of the chi-square distribution with two
// degrees of freedom, -2 ln 0.05: the adversary's 95 % posterior region of
// a point is the ellipse de^2/var_e + dn^2/var_n <= chi2Planar95.
var chi2Planar95 = -2 * math.Log(0.05)

// Report is the outcome of an attack at the secret points: the
// reconstruction beside the release read as it is.
type Report struct {
	Points  int `json:"points"`
	Secrets int `json:"secret_points"`
	// ReconstructedRMSE and ReconstructedMedian are the RMSE and median of
	// the reconstruction's planar error (metres); ReleasedRMSE and
	// ReleasedMedian those of the release itself.
	ReconstructedRMSE   float64 `json:"rmse_m"`
	ReconstructedMedian float64 `json:"median_m"`
	ReleasedRMSE        float64 `json:"release_rmse_m"`
	ReleasedMedian      float64 `json:"release_median_m"`
	// WithinRadius is the share of secret points the reconstruction puts
	// within Radius metres of the truth; ReleaseWithinRadius the share the
	// release itself does.
	Radius              float64 `json:"radius_m"`
	WithinRadius        float64 `json:"within_radius_fraction"`
	ReleaseWithinRadius float64 `json:"release_within_radius_fraction"`
	// Posterior2Sigma is twice the adversary's stated planar RMS error,
	// 2 sqrt(mean over secret points of var_east + var_north): for a
	// calibrated adversary it is about twice ReconstructedRMSE.
	Posterior2Sigma float64 `json:"posterior_2sigma_m"`
	// EstimatedRMSE is the adversary's own estimate of its planar RMSE,
	// from the release and the public noise law only (the mean of
	// Estimate.Risk, both dimensions): what the attack can say without the
	// truth.
	EstimatedRMSE float64 `json:"estimated_rmse_m"`
	// Coverage95 is the share of secret points whose truth lies in the
	// adversary's 95 % posterior ellipse; about 0.95 for a calibrated
	// adversary.
	Coverage95 float64 `json:"coverage_95"`
	// Adversary is the prior and mean the adversary chose per dimension.
	Adversary PlanarFit `json:"adversary"`
}

// PlanarFit is what the adversary chose for each dimension.
type PlanarFit struct {
	East  Fit `json:"east"`
	North Fit `json:"north"`
}

// Attack runs the adversary on both dimensions of a release at times ts
// (seconds), each with noise covariance sigmaG, and scores the secret
// points (indices, deduplicated) against the truth. It returns the report
// and the reconstruction. The two dimensions are reconstructed
// concurrently.
func Attack(ts []float64, truth, released Planar, sigmaG mat.Symmetric, adv Adversary, secretPoints []int, radius float64) (*Report, Planar, error) {
	if err := checkPlanar(len(ts), truth, released); err != nil {
		return nil, Planar{}, err
	}
	var est [2]*Estimate
	var errs [2]error
	var wg sync.WaitGroup
	for d, z := range [2][]float64{released.East, released.North} {
		wg.Go(func() { est[d], errs[d] = Reconstruct(ts, z, sigmaG, adv) })
	}
	wg.Wait()
	for d, name := range [2]string{"east", "north"} {
		if errs[d] != nil {
			return nil, Planar{}, fmt.Errorf("%s: %w", name, errs[d])
		}
	}
	r, err := score(truth, released, est, secretPoints, radius)
	if err != nil {
		return nil, Planar{}, err
	}
	return r, Planar{East: est[0].Mean, North: est[1].Mean}, nil
}

func checkPlanar(n int, truth, released Planar) error {
	if len(truth.East) != n || len(truth.North) != n || len(released.East) != n || len(released.North) != n {
		return fmt.Errorf("attack: %d times, truth %d/%d and release %d/%d points (east/north)",
			n, len(truth.East), len(truth.North), len(released.East), len(released.North))
	}
	return nil
}

// score compares reconstruction and release with the truth at the secret
// points.
func score(truth, released Planar, est [2]*Estimate, secretPoints []int, radius float64) (*Report, error) {
	n := len(truth.East)
	if len(secretPoints) == 0 {
		return nil, errors.New("attack: no secret points to score")
	}
	if !(radius >= 0) {
		return nil, fmt.Errorf("attack: radius %v", radius)
	}
	r := &Report{Points: n, Radius: radius}
	r.Adversary.East, r.Adversary.North = est[0].Fit, est[1].Fit
	xe, xn := est[0].Mean, est[1].Mean
	ve, vn := est[0].Variance, est[1].Variance
	var relErr, recErr []float64
	postVar, risk := 0.0, 0.0
	seen := map[int]bool{}
	for _, i := range secretPoints {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("attack: secret point %d out of range [0, %d)", i, n)
		}
		if seen[i] {
			continue
		}
		seen[i] = true
		rel := math.Hypot(released.East[i]-truth.East[i], released.North[i]-truth.North[i])
		relErr = append(relErr, rel)
		if rel <= radius {
			r.ReleaseWithinRadius++
		}
		de, dn := xe[i]-truth.East[i], xn[i]-truth.North[i]
		d := math.Hypot(de, dn)
		recErr = append(recErr, d)
		if d <= radius {
			r.WithinRadius++
		}
		postVar += ve[i] + vn[i]
		risk += est[0].Risk[i] + est[1].Risk[i]
		if de*de/ve[i]+dn*dn/vn[i] <= chi2Planar95 {
			r.Coverage95++
		}
	}
	k := float64(len(recErr))
	r.Secrets = len(recErr)
	r.WithinRadius /= k
	r.ReleaseWithinRadius /= k
	r.Coverage95 /= k
	r.Posterior2Sigma = 2 * math.Sqrt(postVar/k)
	r.EstimatedRMSE = rms(risk, r.Secrets)
	r.ReleasedRMSE, r.ReleasedMedian = rmseMedian(relErr)
	r.ReconstructedRMSE, r.ReconstructedMedian = rmseMedian(recErr)
	return r, nil
}

func rmseMedian(e []float64) (float64, float64) {
	s := 0.0
	for _, v := range e {
		s += v * v
	}
	c := slices.Clone(e)
	slices.Sort(c)
	med := c[len(c)/2]
	if len(c)%2 == 0 {
		med = (c[len(c)/2-1] + c[len(c)/2]) / 2
	}
	return math.Sqrt(s / float64(len(e))), med
}
