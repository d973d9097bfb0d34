package sanitize

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// NoiseDesign is the noise of one dimension of one person's points and its
// certificate.
type NoiseDesign struct {
	Design string
	// SigmaG is the noise covariance in square metres at the person's
	// timestamps; nil on the linear path, which never forms it.
	SigmaG *mat.SymDense
	// Budget is tr(SigmaG) and MaxVariance its largest diagonal entry.
	Budget, MaxVariance float64
	// Alpha scales the envelope kernel (envelope and proportional
	// designs): SigmaG = Alpha Gram(k_D).
	Alpha float64
	// LossFactors are the certified loss factors of the secrets, exact or
	// upper bounds as Kind says.
	LossFactors []float64
	Kind        string
	// LowerBound is the (E3) designer's lower bound on the least budget
	// (0 if none); Jitter the certifying factorisation's diagonal jitter.
	LowerBound, Jitter float64

	targets, minEigen []float64
}

// Design returns the noise that Release adds to each dimension of a person
// with timestamps ts (seconds) and the given secrets, with its
// certificate. It reads only public inputs (opt's prior, design and
// target), so an auditor or an adversary can recompute it from a
// certificate (see Certificate.NoiseCovariance).
func Design(ts []float64, secrets []cip.Secret, opt Options) (*NoiseDesign, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	fam := opt.Prior.Family()
	design, err := opt.design(fam)
	if err != nil {
		return nil, err
	}
	method, design, err := opt.path(fam, design, len(ts))
	if err != nil {
		return nil, err
	}
	d := &designer{opt: opt, family: fam, kind: design}
	if design != DesignE3 {
		if d.env, err = cip.NewEnvelope(fam, &cip.EnvelopeOptions{StateSpace: method == MethodLinear}); err != nil {
			return nil, fmt.Errorf("sanitize: %w", err)
		}
	}
	return d.design(ts, secrets)
}

func (d *designer) design(ts []float64, secrets []cip.Secret) (*NoiseDesign, error) {
	opt := d.opt
	targets := make([]float64, len(secrets))
	for i, s := range secrets {
		if err := s.Validate(len(ts)); err != nil {
			return nil, err
		}
		var err error
		if targets[i], err = cip.TargetLossFactor(opt.Epsilon, opt.Lambda, opt.Radius, s.Locations()); err != nil {
			return nil, err
		}
	}
	nd := &NoiseDesign{Design: d.kind, targets: targets}
	if d.kind == DesignE3 {
		return nd, d.designE3(nd, ts, secrets)
	}
	fd, err := cip.DesignFamily(d.env, ts, secrets, targets)
	if err != nil {
		return nil, err
	}
	nd.Alpha, nd.LossFactors, nd.minEigen = fd.Alpha, fd.Bounds, fd.MinEigen
	// The noise is stationary: every point has variance alpha k_D(0),
	// alpha times the envelope's overhead.
	nd.MaxVariance = fd.Alpha * d.env.Overhead
	nd.Budget = float64(len(ts)) * nd.MaxVariance
	if !d.linear {
		nd.SigmaG = fd.SigmaG(ts)
	}
	nd.Kind = EpsilonUpperBound
	if fd.Exact {
		nd.Kind = EpsilonExact
	}
	return nd, nil
}

// designE3 is the least-noise design for one prior: (E2) for one basic
// secret, (E3) otherwise; both certify their output by (E1).
func (d *designer) designE3(nd *NoiseDesign, ts []float64, secrets []cip.Secret) error {
	k, err := d.opt.Prior.Family().Member(d.opt.Prior.Variance, d.family.LengthscaleMin)
	if err != nil {
		return err
	}
	sigma := gp.Gram(k, ts)
	nd.Kind = EpsilonExact
	if len(secrets) == 1 && len(secrets[0].Indices) == 1 {
		e2, err := cip.OptimalBasicTarget(sigma, secrets[0].Indices[0], nd.targets[0])
		if err != nil {
			return err
		}
		nd.SigmaG, nd.LossFactors, nd.Jitter = e2.SigmaG, []float64{e2.LossFactor}, e2.Jitter
		nd.setBudget()
		return nil
	}
	e3, err := cip.OptimalTarget(sigma, secrets, nd.targets, nil)
	if err != nil {
		return err
	}
	nd.SigmaG, nd.LowerBound, nd.LossFactors, nd.Jitter = e3.SigmaG, e3.LowerBound, e3.PerSecret, e3.Jitter
	nd.setBudget()
	return nil
}

// setBudget reads Budget and MaxVariance off a dense SigmaG.
func (nd *NoiseDesign) setBudget() {
	nd.Budget = mat.Trace(nd.SigmaG)
	for i := range nd.SigmaG.SymmetricDim() {
		nd.MaxVariance = math.Max(nd.MaxVariance, nd.SigmaG.At(i, i))
	}
}

// explain says which secrets set the noise level and why.
func (d *designer) explain(nd *NoiseDesign, secrets []cip.Secret, ts []float64) string {
	opt := d.opt
	basicVar := opt.Lambda * opt.Radius * opt.Radius / (2 * opt.Epsilon)
	var b strings.Builder
	fmt.Fprintf(&b, "A basic secret must hide a displacement of up to %g m at epsilon %g (Rényi order %g): that takes noise of variance lambda r^2/(2 epsilon) = %.4g m^2 per coordinate (standard deviation %.3g m), correlated like the prior. ",
		opt.Radius, opt.Epsilon, opt.Lambda, basicVar, math.Sqrt(basicVar))
	switch d.kind {
	case DesignE3:
		fmt.Fprintf(&b, "The (E3) design spends the least total noise (%.4g m^2 per coordinate over %d points; lower bound %.4g) that meets the target for the %d listed secrets under the single prior %v.",
			nd.Budget, len(ts), nd.LowerBound, len(secrets), d.family)
		return b.String()
	case DesignEnvelope:
		fmt.Fprintf(&b, "To hold for every lengthscale in [%.4g, %.4g] s the noise follows a spectral envelope of the family, %.3gx the variance one lengthscale alone would need. ",
			d.family.LengthscaleMin, d.family.LengthscaleMax, d.env.Overhead)
	}
	// The secret with the largest 1/(t_S mu_S) sets alpha.
	drv, worst := 0, 0.0
	for i := range secrets {
		if v := 1 / (nd.targets[i] * nd.minEigen[i]); v > worst {
			drv, worst = i, v
		}
	}
	s := secrets[drv]
	if len(s.Indices) == 1 {
		if opt.Secrets == nil {
			b.WriteString("Every point is a basic secret, and every one gets this protection.")
		} else {
			b.WriteString("The listed basic secrets set the noise; a proven bound over a family covers the whole trace at once, so a subset of points costs as much noise as every point.")
		}
		return b.String()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, i := range s.Indices {
		lo, hi = math.Min(lo, ts[i]), math.Max(hi, ts[i])
	}
	span := hi - lo
	fmt.Fprintf(&b, "Compound secret %d (%d points within %.3g s) sets the noise at %.3gx that of a basic secret: the prior makes its points strongly correlated "+
		"(the smallest eigenvalue of their correlation is %.3g), so moving each of them by up to %g m independently is a displacement the prior finds implausible, "+
		"and hiding it needs that much more noise.",
		drv+1, len(s.Indices), span, worst/basicVar, nd.minEigen[drv], opt.Radius)
	return b.String()
}

// NoiseCovariance recomputes from the certificate the per-dimension noise
// covariance the person's release was drawn from: SigmaG plus the reported
// jitters (the matrix the sampler factorised; see
// PersonCertificate.SamplingJitter). For the kernel designs (envelope,
// proportional) the noise is stationary and ts may be any of the person's
// timestamps (a window, shifted to start at 0); for e3 they must be all of
// them. ts are the person's timestamps in seconds from their first.
func (c *Certificate) NoiseCovariance(p *PersonCertificate, ts []float64) (*mat.SymDense, error) {
	var g *mat.SymDense
	switch c.Design {
	case DesignEnvelope, DesignProportional:
		var k gp.Kernel
		for _, t := range c.NoiseKernel {
			kt, err := gp.NewKernel(t.Kernel, t.Weight*p.NoiseScaleM2, t.Lengthscale, t.Period)
			if err != nil {
				return nil, fmt.Errorf("sanitize: certificate noise kernel: %w", err)
			}
			if k == nil {
				k = kt
			} else {
				k = gp.Sum{K1: k, K2: kt}
			}
		}
		if k == nil {
			return nil, fmt.Errorf("sanitize: certificate has no noise kernel")
		}
		g = gp.Gram(k, ts)
	case DesignE3:
		if len(ts) != p.Points {
			return nil, fmt.Errorf("sanitize: %d timestamps for a person with %d points", len(ts), p.Points)
		}
		secrets := make([]cip.Secret, len(p.SecretList))
		for i, s := range p.SecretList {
			secrets[i] = cip.Secret{Indices: s.Points}
		}
		nd, err := Design(ts, secrets, Options{Prior: c.Prior, Epsilon: c.EpsilonTarget, Lambda: c.Lambda, Radius: c.RadiusM, Design: DesignE3, Delta: c.Delta})
		if err != nil {
			return nil, err
		}
		g = nd.SigmaG
	default:
		return nil, fmt.Errorf("sanitize: certificate design %q is unknown", c.Design)
	}
	return withDiagonal(g, p.Jitter+p.SamplingJitter), nil
}
