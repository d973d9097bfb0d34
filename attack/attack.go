// Package attack measures what an adversary recovers from a sanitised
// trace: the Gaussian-process posterior-mean reconstruction of Meehan and
// Chaudhuri's adversary (cip-math.md section 6), run on real releases and
// scored against the original trace.
//
// The adversary knows the mechanism (its noise covariance, recomputable
// from the public certificate), has a GP prior per metric dimension, and
// does not know the mean: it estimates a constant mean per dimension by the
// average of the release, m^ = mean(z), then reconstructs
//
//	x^ = m^ 1 + Sigma (Sigma + SigmaG)^-1 (z - m^ 1),
//
// the posterior mean given that mean. (The generalised least-squares mean
// 1^T M^-1 z / 1^T M^-1 1 is the textbook choice, but with the
// near-singular Gram matrices of smooth kernels M^-1 1 is dominated by
// rounding; the plain average is unbiased and stable.) Errors are measured in
// the plane (metres) at the secret points; the guarantee (the certified
// epsilon) bounds how much any adversary's beliefs can move, and this is
// one concrete adversary's outcome, for evaluation.
package attack

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
)

// Reconstruct returns the GLS posterior-mean reconstruction of one
// dimension from its release z, under prior covariance sigma and noise
// covariance sigmaG, and the posterior variance of each point.
func Reconstruct(sigma, sigmaG mat.Symmetric, z []float64) (xhat, postVar []float64, err error) {
	n := sigma.SymmetricDim()
	if sigmaG.SymmetricDim() != n || len(z) != n {
		return nil, nil, fmt.Errorf("attack: prior %d, noise %d and release %d points differ", n, sigmaG.SymmetricDim(), len(z))
	}
	post, err := cip.NewPosterior(sigma, sigmaG)
	if err != nil {
		return nil, nil, fmt.Errorf("attack: %w", err)
	}
	mean := 0.0
	for _, v := range z {
		mean += v / float64(n)
	}
	mu := make([]float64, n)
	for i := range mu {
		mu[i] = mean
	}
	if xhat, err = post.Mean(mu, z); err != nil {
		return nil, nil, fmt.Errorf("attack: %w", err)
	}
	postVar = make([]float64, n)
	for i := range n {
		postVar[i] = math.Max(post.Cov.At(i, i), 0)
	}
	return xhat, postVar, nil
}

// Report is the outcome of the attack at the secret points.
type Report struct {
	Points  int `json:"points"`
	Secrets int `json:"secret_points"`
	// RMSE and median of the planar error (metres) at the secret points,
	// of the release itself and of the reconstruction.
	ReleasedRMSE        float64 `json:"released_rmse_m"`
	ReleasedMedian      float64 `json:"released_median_m"`
	ReconstructedRMSE   float64 `json:"reconstructed_rmse_m"`
	ReconstructedMedian float64 `json:"reconstructed_median_m"`
	// WithinRadius is the fraction of secret points the reconstruction
	// puts within Radius metres of the truth.
	Radius       float64 `json:"radius_m"`
	WithinRadius float64 `json:"within_radius"`
	// Posterior2Sigma is the adversary's own planar 2-sigma uncertainty,
	// 2 sqrt(var_east + var_north), averaged over the secret points.
	Posterior2Sigma float64 `json:"posterior_2sigma_m"`
}

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

// Run reconstructs both dimensions of a release and scores the secret
// points (indices, deduplicated) against the truth.
func Run(sigma, sigmaG mat.Symmetric, truth, released Planar, secretPoints []int, radius float64) (*Report, Planar, error) {
	n := len(truth.East)
	if len(released.East) != n || len(truth.North) != n || len(released.North) != n {
		return nil, Planar{}, errors.New("attack: truth and release have different lengths")
	}
	if len(secretPoints) == 0 {
		return nil, Planar{}, errors.New("attack: no secret points to score")
	}
	xe, ve, err := Reconstruct(sigma, sigmaG, released.East)
	if err != nil {
		return nil, Planar{}, err
	}
	xn, vn, err := Reconstruct(sigma, sigmaG, released.North)
	if err != nil {
		return nil, Planar{}, err
	}
	rec := Planar{East: xe, North: xn}
	r := &Report{Points: n, Radius: radius}
	var relErr, recErr []float64
	seen := map[int]bool{}
	for _, i := range secretPoints {
		if i < 0 || i >= n {
			return nil, Planar{}, fmt.Errorf("attack: secret point %d out of range [0, %d)", i, n)
		}
		if seen[i] {
			continue
		}
		seen[i] = true
		relErr = append(relErr, math.Hypot(released.East[i]-truth.East[i], released.North[i]-truth.North[i]))
		d := math.Hypot(xe[i]-truth.East[i], xn[i]-truth.North[i])
		recErr = append(recErr, d)
		if d <= radius {
			r.WithinRadius++
		}
		r.Posterior2Sigma += 2 * math.Sqrt(ve[i]+vn[i])
	}
	k := float64(len(recErr))
	r.Secrets = len(recErr)
	r.WithinRadius /= k
	r.Posterior2Sigma /= k
	r.ReleasedRMSE, r.ReleasedMedian = rmseMedian(relErr)
	r.ReconstructedRMSE, r.ReconstructedMedian = rmseMedian(recErr)
	return r, rec, nil
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
