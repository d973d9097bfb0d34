package sanitize

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/scaletest"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// NoiseAuditOptions configures AuditNoise. Zero fields take the defaults
// given.
type NoiseAuditOptions struct {
	// Release is the release to audit (prior, epsilon, lambda, radius,
	// design, path); its Source is the audit's randomness (nil:
	// crypto/rand), each release drawing from noise.Derive(Source,
	// "audit/cip/<i>").
	Release Options
	// Draws is the number of whitened noise coordinates tested (default
	// 2000), from as many releases as needed, at most MaxReleases
	// (default 50).
	Draws       int
	MaxReleases int
	// NoiseFactor in (0, 1) audits the weakened build (each person's noise
	// scaled by the factor after sampling: NOT PRIVATE, never returned);
	// 0 or 1 is the sampler as documented.
	NoiseFactor float64
	// Confidence is the level of EpsilonLower; a release whose noise has
	// the certified covariance is flagged with probability at most
	// 1 − Confidence (default 0.95).
	Confidence float64
}

// NoiseAuditReport is the outcome of AuditNoise.
type NoiseAuditReport struct {
	NoiseFactor float64 `json:"noise_factor"`
	// Epsilon is the certificate's epsilon_max, the claim tested.
	Epsilon  float64 `json:"epsilon"`
	Releases int     `json:"releases"`
	// Components is the number of whitened directions used per person and
	// coordinate: the eigenvectors of the certified covariance whose
	// standard deviation is at least MinStdM, so that the 1 mm output grid
	// moves them by at most a hundredth of a standard deviation.
	Components int     `json:"components"`
	MinStdM    float64 `json:"min_std_m"`
	// Test is the exact test of the whitened noise (internal/scaletest):
	// KappaLower bounds the ratio of the certified noise variance to the
	// true one.
	Test scaletest.Result `json:"test"`
	// EpsilonLower = KappaLower·Epsilon: at Confidence, the Rényi loss the
	// noise actually allows is at least this (it scales with the inverse
	// of the noise variance).
	EpsilonLower float64 `json:"epsilon_lower"`
	Confidence   float64 `json:"confidence"`
	Violation    bool    `json:"violation"`
}

// AuditNoise releases traces (one person) with opt.Release again and again
// and tests the noise each release drew against the covariance its
// certificate states (Certificate.NoiseCovariance, recomputed from the
// certificate alone): the white-box audit of the CIP sampler. The noise is
// observed in Earth-centred coordinates before the projection to the
// surface (the projection drops the height, so the released latitudes and
// longitudes alone do not hold it). With K = V diag(λ) Vᵀ the certified
// covariance, each coordinate axis's noise g gives w_j = v_jᵀg/√λ_j,
// independent standard normals under the certificate; the observation is
// (|w_j| + b_j)² with χ²(1) survival, b_j = ‖rounding‖/√λ_j bounding what
// the output grid moved it (conservative: it can only make the noise look
// larger). Only the directions with √λ_j >= MinStdM are used; the set is
// fixed by the certificate, not by the noise.
func AuditNoise(traces []*trace.Trace, opt NoiseAuditOptions) (*NoiseAuditReport, error) {
	if opt.Draws == 0 {
		opt.Draws = 2000
	}
	if opt.MaxReleases == 0 {
		opt.MaxReleases = 50
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	if opt.NoiseFactor == 0 {
		opt.NoiseFactor = 1
	}
	switch {
	case opt.Draws < 1 || opt.MaxReleases < 1:
		return nil, &param.Error{Name: "draws", Value: opt.Draws, Why: "positive draws and releases"}
	case !(opt.NoiseFactor > 0 && opt.NoiseFactor <= 1):
		return nil, &param.Error{Name: "noise-factor", Value: opt.NoiseFactor, Why: "in (0, 1]: 1 is the sampler as documented, below 1 the weakened build"}
	case !(opt.Confidence > 0 && opt.Confidence < 1):
		return nil, &param.Error{Name: "confidence", Value: opt.Confidence, Why: "in (0, 1)"}
	}
	rep := &NoiseAuditReport{NoiseFactor: opt.NoiseFactor, Confidence: opt.Confidence}
	var obs []scaletest.Obs
	base := opt.Release.Source
	for i := 0; len(obs) < opt.Draws && i < opt.MaxReleases; i++ {
		o := opt.Release
		o.Source = noise.Derive(base, "audit/cip/"+strconv.Itoa(i))
		o.noiseFactor = opt.NoiseFactor
		type seen struct {
			uid     string
			ts      []float64
			in, out [Dims][]float64
		}
		var got []seen
		o.ecefTap = func(uid string, ts []float64, in, out [Dims][]float64) {
			got = append(got, seen{uid, ts, in, out})
		}
		_, cert, err := Release(traces, o)
		if err != nil {
			return nil, fmt.Errorf("audit: release %d: %w", i, err)
		}
		rep.Releases++
		if len(got) != 1 || len(cert.Persons) != 1 {
			return nil, fmt.Errorf("audit: the noise audit takes the traces of one person, got %d", len(cert.Persons))
		}
		rep.Epsilon = cert.EpsilonMax
		p := got[0]
		k, err := cert.NoiseCovariance(cert.Persons[0], p.ts)
		if err != nil {
			return nil, err
		}
		var eig mat.EigenSym
		if !eig.Factorize(k, true) {
			return nil, fmt.Errorf("audit: the certified covariance has no eigendecomposition")
		}
		vals := eig.Values(nil)
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		n := len(p.ts)
		// The output grid moves each coordinate by at most half a step.
		round := OutputGrid / 2 * math.Sqrt(float64(n))
		rep.MinStdM = 100 * round
		rep.Components = 0
		g := make([]float64, n)
		for c := range Dims {
			for t := range n {
				g[t] = p.out[c][t] - p.in[c][t]
			}
			for j, l := range vals {
				sd := math.Sqrt(l)
				if !(sd >= rep.MinStdM) {
					continue
				}
				if c == 0 {
					rep.Components++
				}
				w := 0.0
				for t := range n {
					w += vecs.At(t, j) * g[t]
				}
				w = math.Abs(w)/sd + round/sd
				if len(obs) < opt.Draws {
					obs = append(obs, scaletest.ChiSquare(w*w, 1))
				}
			}
		}
	}
	if len(obs) == 0 {
		return nil, fmt.Errorf("audit: no noise direction above %g m", rep.MinStdM)
	}
	var err error
	if rep.Test, err = scaletest.Test(obs, opt.Confidence); err != nil {
		return nil, err
	}
	rep.EpsilonLower = math.Min(rep.Test.KappaLower*rep.Epsilon, math.MaxFloat64)
	rep.Violation = rep.Test.Violation
	return rep, nil
}
