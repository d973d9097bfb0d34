package attack

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// DefaultPlaceMaxPoints bounds the points of one stay the place adversary
// uses: its estimate factorises their m x m noise covariance (O(m^3); 2,000
// points take about a second). A longer stay is subsampled evenly, and the
// report says so (StayReport.PointsUsed).
const DefaultPlaceMaxPoints = 2000

// Place is the place adversary's estimate of where a person stood still:
// the generalised least squares estimate of a constant position from the
// released points of a stay,
//
//	c^ = (1^T K^-1 z) / (1^T K^-1 1)     per coordinate,
//
// with K the release's noise covariance at those points (public: from the
// certificate). It is the best linear unbiased estimate of the place when
// the person did not move, and its error has standard deviation
// SD = (1^T K^-1 1)^(-1/2) per coordinate whatever the place: the
// adversary states its own accuracy without the truth.
type Place struct {
	East, North float64
	// SD is the estimate's standard deviation per coordinate (metres),
	// from the noise law alone.
	SD float64
	// Jitter is the diagonal jitter the factorisation of K needed,
	// counted as noise.
	Jitter float64
}

// EstimatePlace computes the place adversary's estimate from the released
// east and north values of a stay's points and the noise covariance k of
// one dimension at those points (the dimensions are independent with the
// same covariance, as sanitize releases them). It factorises k by
// Cholesky (gp.Factorize, jitter reported) and solves with the whitened
// constant, never an inverse.
func EstimatePlace(east, north []float64, k mat.Symmetric) (*Place, error) {
	n := len(east)
	if n == 0 || len(north) != n || k == nil || k.SymmetricDim() != n {
		dim := 0
		if k != nil {
			dim = k.SymmetricDim()
		}
		return nil, fmt.Errorf("attack: place: %d east, %d north values and a %dx%d noise covariance", n, len(north), dim, dim)
	}
	for i := range n {
		if math.IsNaN(east[i]+north[i]) || math.IsInf(east[i]+north[i], 0) {
			return nil, fmt.Errorf("attack: place: point %d is not finite", i)
		}
	}
	f, err := gp.Factorize(k, 0)
	if err != nil {
		return nil, fmt.Errorf("attack: place: noise covariance: %w", err)
	}
	b := mat.NewDense(n, 3, nil)
	for i := range n {
		b.Set(i, 0, 1)
		b.Set(i, 1, east[i])
		b.Set(i, 2, north[i])
	}
	var w mat.Dense
	if err := f.HalfSolveTo(&w, b); err != nil {
		return nil, fmt.Errorf("attack: place: whitening: %w", err)
	}
	// With L^-1 1 = w1: 1^T K^-1 1 = |w1|^2 and 1^T K^-1 z = w1 . L^-1 z
	// (a one-column QR of the whitened design).
	w1 := w.ColView(0)
	info := mat.Dot(w1, w1)
	if !(info > 0) || math.IsInf(info, 0) {
		return nil, errors.New("attack: place: the constant is not identifiable from the noise covariance")
	}
	return &Place{
		East:   mat.Dot(w1, w.ColView(1)) / info,
		North:  mat.Dot(w1, w.ColView(2)) / info,
		SD:     1 / math.Sqrt(info),
		Jitter: f.Jitter(),
	}, nil
}

// evenSubset returns n indices spread evenly over [0, m) (all of them when
// m <= n), deterministically: the first and last are always kept.
func evenSubset(m, n int) []int {
	if m <= n {
		idx := make([]int, m)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = int(math.Round(float64(i) * float64(m-1) / float64(n-1)))
	}
	return idx
}

// StayReport is the place attack on one stay of the true trace.
type StayReport struct {
	UID string `json:"uid"`
	// Start and End are the stay's first and last points (0-based, in the
	// person's points in time order, over all their traces).
	Start     int       `json:"start_index"`
	End       int       `json:"end_index"`
	StartTime time.Time `json:"start_time"`
	EndTime   time.Time `json:"end_time"`
	Points    int       `json:"points"`
	DurationS float64   `json:"duration_s"`
	// PointsUsed is the number of the stay's points the place adversary
	// used: Points, or PlaceOptions.MaxPoints evenly spread when the stay
	// has more.
	PointsUsed int `json:"points_used"`
	// ErrorM is the distance (metres) from the place adversary's estimate
	// ("stood still": GLS of a constant under the release's noise
	// covariance) to the stay's true centroid; StatedSDM the adversary's
	// own standard deviation per coordinate, sqrt(1 / 1^T K^-1 1), so
	// that its planar RMS error is about sqrt(2) StatedSDM.
	ErrorM    float64 `json:"error_m"`
	StatedSDM float64 `json:"stated_sd_m"`
	// PlainMeanErrorM is the error of the plain mean of all the stay's
	// released points, the naive attack.
	PlainMeanErrorM float64 `json:"plain_mean_error_m"`
	// ReleaseRMSM is the planar RMS distance of the stay's released points
	// from their true positions (what reading the release point by point
	// gives), and NoiseRMSM the noise's planar RMS per point from the
	// certificate, sqrt(2 mean K_ii).
	ReleaseRMSM float64 `json:"release_rms_m"`
	NoiseRMSM   float64 `json:"noise_rms_m"`
	// Jitter is the diagonal jitter the factorisation of K needed.
	Jitter float64 `json:"jitter"`
}

// PlaceOptions configures the place attack of FromCertificate.
type PlaceOptions struct {
	// Stays is the stay-point rule applied to the true trace.
	Stays StayOptions
	// MaxPoints bounds the points per stay the adversary uses (default
	// DefaultPlaceMaxPoints); longer stays are subsampled evenly.
	MaxPoints int
	// Off skips the place attack.
	Off bool
}

// StayRule states the stay-point rule a report used.
type StayRule struct {
	RadiusM      float64 `json:"radius_m"`
	MinDurationS float64 `json:"min_duration_s"`
	MaxPoints    int     `json:"max_points_per_stay"`
	Rule         string  `json:"rule"`
}

const stayRuleText = "Li et al. (2008) stay points on the true trace: runs within radius_m of their first point lasting min_duration_s or more"

// placeAttack runs the place adversary on every stay of one person. ts,
// truth and rel are the person's points in time order; noise returns the
// per-dimension noise covariance (with any nugget) at a subset of them.
func placeAttack(uid string, stays []Stay, times []time.Time, truth, rel Planar, maxPoints int, noise func(idx []int) (*mat.SymDense, error)) ([]StayReport, error) {
	var out []StayReport
	for _, s := range stays {
		m := s.Points()
		used := evenSubset(m, maxPoints)
		idx := make([]int, len(used))
		ze, zn := make([]float64, len(used)), make([]float64, len(used))
		for k, u := range used {
			idx[k] = s.Start + u
			ze[k], zn[k] = rel.East[idx[k]], rel.North[idx[k]]
		}
		k, err := noise(idx)
		if err != nil {
			return nil, err
		}
		p, err := EstimatePlace(ze, zn, k)
		if err != nil {
			return nil, fmt.Errorf("stay at points %d-%d: %w", s.Start, s.End, err)
		}
		var te, tn, me, mn, se float64
		for i := s.Start; i <= s.End; i++ {
			te += truth.East[i]
			tn += truth.North[i]
			me += rel.East[i]
			mn += rel.North[i]
			de, dn := rel.East[i]-truth.East[i], rel.North[i]-truth.North[i]
			se += de*de + dn*dn
		}
		fm := float64(m)
		te, tn, me, mn = te/fm, tn/fm, me/fm, mn/fm
		diag := 0.0
		for i := range idx {
			diag += k.At(i, i)
		}
		out = append(out, StayReport{
			UID: uid, Start: s.Start, End: s.End, StartTime: times[s.Start], EndTime: times[s.End],
			Points: m, DurationS: times[s.End].Sub(times[s.Start]).Seconds(), PointsUsed: len(idx),
			ErrorM: math.Hypot(p.East-te, p.North-tn), StatedSDM: p.SD,
			PlainMeanErrorM: math.Hypot(me-te, mn-tn),
			ReleaseRMSM:     math.Sqrt(se / fm), NoiseRMSM: math.Sqrt(2 * diag / float64(len(idx))),
			Jitter: p.Jitter,
		})
	}
	return out, nil
}

// median returns the median of v (NaN when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	_, m := rmseMedian(v)
	return m
}
