// Package sanitize releases location traces under conditional inferential
// privacy (CIP) with tracepriv's optimal correlated Gaussian noise: the
// end-to-end path from a trace and a public prior to a sanitised trace
// and a certificate of its guarantee.
//
// For each trace it
//
//  1. projects the points to local east/north metres around a public
//     origin (geo.ENU);
//  2. builds the prior covariance at the trace's own timestamps, in
//     seconds, from the prior file (gp.Prior; fitted on a separate corpus);
//  3. designs the least noise that gives every secret an (E1) loss of at
//     most the target epsilon at (lambda, r) (cip.OptimalTarget, the (E3)
//     program of cip-math.md, or the closed form (E2) for one basic
//     secret), once, since the two dimensions share the prior and the
//     timestamps;
//  4. certifies the design with the exact loss (E1) of every secret;
//  5. adds independent draws of N(0, SigmaG) to east and north with the
//     secure source (noise.MultiNormal.AddSnapped), and maps back to WGS84.
//
// Nothing in steps 2-4 reads a coordinate: the design depends only on the
// timestamps, the prior, the secrets and the privacy target, which are
// public. The origin is public when given; the default is the centre of
// the 0.1-degree cell holding the first point, which depends on that
// point only through its cell and only moves the (nearly isometric)
// projection, not the noise.
//
// # Two dimensions
//
// The prior class treats east and north as independent GPs (Meehan and
// Chaudhuri, Corollary 7.2.1, which adds the per-dimension losses). For a
// secret of k locations whose displacement has ||Delta||^2 <= k r^2 over
// both dimensions, the Rényi divergence of the two independent releases is
// lambda/2 (Delta_e^T Q_e Delta_e + Delta_n^T Q_n Delta_n) <=
// lambda/2 k r^2 max(L_e, L_n), with equality along the worse dimension, so
// the exact 2-D loss factor is the larger per-dimension one; with one
// design for both it is that design's loss factor. The certificate states
// this epsilon and, for reference, Corollary 7.2.1's sum.
//
// Altitude and per-point attributes are location information too; they
// are not released (the certificate says so).
package sanitize

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// CertificateVersion is the version of the certificate format.
const CertificateVersion = 1

// Options configures Trace.
type Options struct {
	// Prior is the public GP prior of each metric dimension.
	Prior *gp.Prior
	// Epsilon is the target Rényi CIP loss at order Lambda > 1 for every
	// secret, against displacements of each secret location by up to
	// Radius metres.
	Epsilon, Lambda, Radius float64
	// Secrets lists the secrets as sets of timestamps (each inner slice
	// one secret: one time for a basic secret, several for a compound
	// one); nil means every point is a basic secret. Every time must be a
	// point of the trace.
	Secrets [][]time.Time
	// Delta is the delta at which the certificate states the
	// prior-posterior gap of Theorem 3.1 (default 1e-5).
	Delta float64
	// Origin is the public origin of the tangent plane; nil for the
	// default (see the package documentation).
	Origin *geo.Point
	// Source is the random source; nil means crypto/rand.
	Source noise.Source
	// Progress, if set, is told the stage being worked on.
	Progress func(stage string)
}

// SecretCertificate is the guarantee of one secret.
type SecretCertificate struct {
	Times   []time.Time `json:"times"`
	Indices []int       `json:"indices"`
	// LossFactor is the exact (E1) loss factor of the noise released, per
	// dimension (both dimensions share it).
	LossFactor float64 `json:"loss_factor"`
	// Epsilon is lambda/2 k r^2 LossFactor, the exact 2-D loss at Lambda.
	Epsilon float64 `json:"epsilon"`
	// Gap is the prior-posterior gap of Theorem 3.1 at Delta.
	Gap float64 `json:"prior_posterior_gap"`
}

// Certificate is the machine-readable guarantee of one sanitised trace.
type Certificate struct {
	Version int    `json:"version"`
	UID     string `json:"uid,omitempty"`
	Name    string `json:"name,omitempty"`
	Points  int    `json:"points"`
	// Method names the designer: "optimal-e2" (one basic secret, closed
	// form) or the (E3) designer's method.
	Method string `json:"method"`
	// Randomness is "crypto" or "seeded:N" (not private).
	Randomness string    `json:"randomness"`
	Prior      *gp.Prior `json:"prior"`
	// Origin is the tangent-plane origin; OriginPublic says whether the
	// caller supplied it.
	Origin       geo.Point `json:"origin"`
	OriginPublic bool      `json:"origin_public"`
	Lambda       float64   `json:"lambda"`
	RadiusM      float64   `json:"radius_m"`
	// EpsilonTarget is the requested epsilon; EpsilonMax the certified
	// worst epsilon over the secrets (<= EpsilonTarget).
	EpsilonTarget float64 `json:"epsilon_target"`
	EpsilonMax    float64 `json:"epsilon_max"`
	// EpsilonSumDims is Corollary 7.2.1's (conservative) sum over the two
	// dimensions, for comparison with the paper.
	EpsilonSumDims float64 `json:"epsilon_sum_of_dimensions"`
	Delta          float64 `json:"delta"`
	GapMax         float64 `json:"prior_posterior_gap_max"`
	// SecretsSpec is "all" (every point a basic secret) or "listed".
	SecretsSpec string              `json:"secrets_spec"`
	Secrets     []SecretCertificate `json:"secrets"`
	// NoiseBudgetM2 is tr(SigmaG) per dimension (square metres), and
	// RMSNoiseM the root mean square displacement per point,
	// sqrt(2 tr(SigmaG) / N).
	NoiseBudgetM2 float64 `json:"noise_budget_m2_per_dimension"`
	RMSNoiseM     float64 `json:"rms_noise_m"`
	// LowerBoundM2 is the designer's proven lower bound on the least
	// per-dimension budget that meets the target (the optimality gap is
	// NoiseBudgetM2 - LowerBoundM2); zero when not available.
	LowerBoundM2 float64 `json:"lower_bound_m2_per_dimension,omitempty"`
	// Jitter is the diagonal jitter the certifying factorisation needed;
	// the losses are certified for SigmaG + Jitter I. SamplingJitter is
	// the further diagonal the sampler's factorisation added: the noise
	// released has covariance SigmaG + (Jitter + SamplingJitter) I, more
	// than certified, so the certificate holds (the loss falls as noise
	// grows).
	Jitter         float64 `json:"jitter"`
	SamplingJitter float64 `json:"sampling_jitter"`
	// Dimensions explains how the two dimensions combine.
	Dimensions string `json:"dimensions"`
	// Dropped lists released-trace fields removed because they are
	// location information too.
	Dropped []string `json:"dropped,omitempty"`
	Seconds float64  `json:"seconds"`
}

func (o *Options) check() error {
	if o.Prior == nil {
		return errors.New("sanitize: no prior")
	}
	if err := o.Prior.Validate(); err != nil {
		return fmt.Errorf("sanitize: prior: %w", err)
	}
	if _, err := cip.TargetLossFactor(o.Epsilon, o.Lambda, o.Radius, 1); err != nil {
		return fmt.Errorf("sanitize: %w", err)
	}
	if o.Delta == 0 {
		o.Delta = 1e-5
	}
	if !(o.Delta > 0 && o.Delta < 1) {
		return fmt.Errorf("sanitize: delta must be in (0, 1), got %v", o.Delta)
	}
	if o.Source == nil {
		o.Source = noise.Secure()
	}
	return nil
}

// Trace sanitises one trace. The returned trace has the same timestamps,
// sanitised positions and no altitude or attributes.
func Trace(t *trace.Trace, opt Options) (*trace.Trace, *Certificate, error) {
	start := time.Now()
	if err := opt.check(); err != nil {
		return nil, nil, err
	}
	if t.Len() == 0 {
		return nil, nil, errors.New("sanitize: empty trace")
	}
	if err := t.Validate(); err != nil {
		return nil, nil, fmt.Errorf("sanitize: %w", err)
	}
	step := func(s string) {
		if opt.Progress != nil {
			opt.Progress(s)
		}
	}
	ts, err := gp.Seconds(t.Times())
	if err != nil {
		return nil, nil, fmt.Errorf("sanitize: %w", err)
	}
	secrets, err := ResolveSecrets(t, opt.Secrets)
	if err != nil {
		return nil, nil, err
	}
	// Design and certificate: public inputs only.
	step("design")
	d, err := Design(ts, secrets, opt)
	if err != nil {
		return nil, nil, err
	}
	g, losses := d.SigmaG, d.LossFactors
	step("certify")
	cert := &Certificate{
		Version: CertificateVersion, UID: t.UID, Name: t.Name, Points: t.Len(),
		Method: d.Method, Randomness: noise.Describe(opt.Source), Prior: opt.Prior,
		Lambda: opt.Lambda, RadiusM: opt.Radius, EpsilonTarget: opt.Epsilon, Delta: opt.Delta,
		SecretsSpec: "all", NoiseBudgetM2: mat.Trace(g), LowerBoundM2: d.LowerBound, Jitter: d.Jitter,
		Dimensions: "east and north are independent under the prior and get independent noise of the same covariance; " +
			"epsilon is exact for displacements within radius_m in the plane (the larger per-dimension loss); " +
			"epsilon_sum_of_dimensions is Corollary 7.2.1's sum",
		Dropped: []string{"altitude", "attributes"},
	}
	if opt.Secrets != nil {
		cert.SecretsSpec = "listed"
	}
	cert.RMSNoiseM = math.Sqrt(2 * cert.NoiseBudgetM2 / float64(t.Len()))
	for i, s := range secrets {
		eps := cip.Epsilon(losses[i], opt.Lambda, opt.Radius, s.Locations())
		gap, err := cip.PriorPosteriorGap(eps, opt.Lambda, opt.Delta)
		if err != nil {
			return nil, nil, fmt.Errorf("sanitize: certificate: %w", err)
		}
		sc := SecretCertificate{Indices: s.Indices, LossFactor: losses[i], Epsilon: eps, Gap: gap}
		for _, j := range s.Indices {
			sc.Times = append(sc.Times, t.Points[j].Time)
		}
		cert.Secrets = append(cert.Secrets, sc)
		cert.EpsilonMax = math.Max(cert.EpsilonMax, eps)
		cert.EpsilonSumDims = math.Max(cert.EpsilonSumDims, 2*eps)
		cert.GapMax = math.Max(cert.GapMax, gap)
	}
	if cert.EpsilonMax > opt.Epsilon*(1+1e-9) {
		// The designers certify their own output; this is a last guard.
		return nil, nil, fmt.Errorf("sanitize: certified epsilon %v exceeds the target %v", cert.EpsilonMax, opt.Epsilon)
	}

	// Release: the only step that reads coordinates.
	step("sample")
	origin, public := defaultOrigin(t), false
	if opt.Origin != nil {
		if err := opt.Origin.Validate(); err != nil {
			return nil, nil, fmt.Errorf("sanitize: origin: %w", err)
		}
		origin, public = *opt.Origin, true
	}
	cert.Origin, cert.OriginPublic = origin, public
	// Sample from SigmaG + jitter, the covariance the certificate covers,
	// through a Cholesky factorisation (an eigendecomposition costs 10-50x
	// more at n in the thousands); any jitter it adds is more noise, which
	// can only lower the loss, and is reported.
	gs := mat.NewSymDense(g.SymmetricDim(), nil)
	gs.CopySym(g)
	for i := range g.SymmetricDim() {
		gs.SetSym(i, i, gs.At(i, i)+d.Jitter)
	}
	mn, err := noise.NewMultiNormalCholesky(gs)
	if err != nil {
		return nil, nil, fmt.Errorf("sanitize: noise: %w", err)
	}
	cert.SamplingJitter = mn.Jitter()
	enu := geo.NewENU(origin)
	n := t.Len()
	east, north := make([]float64, n), make([]float64, n)
	for i, p := range t.Points {
		east[i], north[i] = enu.Forward(p.Geo())
	}
	if east, err = mn.AddSnapped(nil, east, opt.Source); err != nil {
		return nil, nil, fmt.Errorf("sanitize: noise: %w", err)
	}
	if north, err = mn.AddSnapped(nil, north, opt.Source); err != nil {
		return nil, nil, fmt.Errorf("sanitize: noise: %w", err)
	}
	out := &trace.Trace{UID: t.UID, Name: t.Name, Points: make([]trace.Point, n)}
	for i, p := range t.Points {
		q := enu.Inverse(east[i], north[i])
		out.Points[i] = trace.Point{Time: p.Time, Lat: q.Lat, Lon: q.Lon, Alt: math.NaN()}
	}
	cert.Seconds = time.Since(start).Seconds()
	return out, cert, nil
}

// NoiseDesign is the noise of one trace dimension and its certificate.
type NoiseDesign struct {
	// Sigma is the prior covariance at the trace's timestamps and SigmaG
	// the noise covariance, both in square metres.
	Sigma, SigmaG *mat.SymDense
	// LossFactors are the exact (E1) loss factors of the secrets.
	LossFactors []float64
	Method      string
	// LowerBound is the designer's lower bound on the least budget (0 if
	// none); Jitter the certifying factorisation's diagonal jitter.
	LowerBound, Jitter float64
}

// Design returns the noise that Trace adds to each dimension of a trace
// with timestamps ts (seconds) and the given secrets, with its exact
// certificate. It reads only public inputs (opt's prior and target), so an
// auditor or an adversary can recompute it from a certificate.
func Design(ts []float64, secrets []cip.Secret, opt Options) (*NoiseDesign, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	k, err := opt.Prior.KernelFunc()
	if err != nil {
		return nil, fmt.Errorf("sanitize: %w", err)
	}
	sigma := gp.Gram(k, ts)
	targets := make([]float64, len(secrets))
	for i, s := range secrets {
		if err := s.Validate(len(ts)); err != nil {
			return nil, fmt.Errorf("sanitize: %w", err)
		}
		if targets[i], err = cip.TargetLossFactor(opt.Epsilon, opt.Lambda, opt.Radius, s.Locations()); err != nil {
			return nil, fmt.Errorf("sanitize: %w", err)
		}
	}
	d := &NoiseDesign{Sigma: sigma}
	if len(secrets) == 1 && len(secrets[0].Indices) == 1 {
		e2, err := cip.OptimalBasicTarget(sigma, secrets[0].Indices[0], targets[0])
		if err != nil {
			return nil, fmt.Errorf("sanitize: %w", err)
		}
		d.SigmaG, d.Method = e2.SigmaG, "optimal-e2"
		d.LossFactors, d.Jitter = []float64{e2.LossFactor}, e2.Jitter
		return d, nil
	}
	// Both designers certify their output with cip.Evaluator, the exact
	// (E1) loss of the SigmaG they return (plus the reported jitter); that
	// certificate is used as it is rather than recomputed at O(n^3).
	e3, err := cip.OptimalTarget(sigma, secrets, targets, nil)
	if err != nil {
		return nil, fmt.Errorf("sanitize: %w", err)
	}
	d.SigmaG, d.Method, d.LowerBound = e3.SigmaG, e3.Method, e3.LowerBound
	d.LossFactors, d.Jitter = e3.PerSecret, e3.Jitter
	return d, nil
}

// defaultOrigin is the centre of the 0.1-degree cell of the first point.
func defaultOrigin(t *trace.Trace) geo.Point {
	p := t.Points[0]
	return geo.Point{Lat: math.Floor(p.Lat*10)/10 + 0.05, Lon: math.Floor(p.Lon*10)/10 + 0.05}
}

// ResolveSecrets maps secret timestamps (nil: every point a basic secret)
// to the point indices of t.
func ResolveSecrets(t *trace.Trace, spec [][]time.Time) ([]cip.Secret, error) {
	if spec == nil {
		return cip.EveryPoint(t.Len()), nil
	}
	if len(spec) == 0 {
		return nil, errors.New("sanitize: an empty list of secrets protects nothing")
	}
	idx := make(map[int64]int, t.Len())
	for i, p := range t.Points {
		idx[p.Time.UnixNano()] = i
	}
	out := make([]cip.Secret, len(spec))
	for k, times := range spec {
		for _, tm := range times {
			i, ok := idx[tm.UnixNano()]
			if !ok {
				return nil, fmt.Errorf("sanitize: secret %d: %s is not the time of a point of the trace", k+1, tm.Format(time.RFC3339Nano))
			}
			if slices.Contains(out[k].Indices, i) {
				return nil, fmt.Errorf("sanitize: secret %d: %s is listed twice", k+1, tm.Format(time.RFC3339Nano))
			}
			out[k].Indices = append(out[k].Indices, i)
		}
		if len(out[k].Indices) == 0 {
			return nil, fmt.Errorf("sanitize: secret %d is empty", k+1)
		}
	}
	return out, nil
}
