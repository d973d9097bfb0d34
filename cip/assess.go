package cip

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/param"
)

// Assessment is what the exact loss (E1) says about Gaussian noise
// N(0, SigmaG) added to one dimension of a trace under the prior Sigma,
// secret by secret: the report of "tracepriv cip loss" and "cip design".
type Assessment struct {
	N int `json:"n"`
	// Budget is tr(SigmaG), the total noise variance (mean squared error
	// summed over the points).
	Budget float64 `json:"budget"`
	// LossFactor is the worst certified loss factor over the secrets.
	LossFactor float64 `json:"loss_factor"`
	// Epsilon is the worst epsilon(lambda) over the secrets, with
	// AssessOptions.Lambda and Radius (nil without them).
	Epsilon *float64 `json:"epsilon,omitempty"`
	Lambda  *float64 `json:"lambda,omitempty"`
	Radius  *float64 `json:"radius,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	// Posterior2Sigma is the paper's posterior metric for the secret set
	// (Posterior.SecretsTwoSigma): 2 sqrt(posterior variance) for one basic
	// secret, 2 sqrt(lambda_min) of the posterior block for one compound
	// secret, 2 sqrt(mean posterior variance over the secrets' points)
	// otherwise.
	Posterior2Sigma float64            `json:"posterior_2sigma"`
	Secrets         []SecretAssessment `json:"secrets"`
	// BlockDiagonalBound is BlockDiagonalLossBound per secret, with
	// AssessOptions.BlockDiagonalBound and noise without cross terms
	// between any secret and the rest (nil otherwise).
	BlockDiagonalBound []float64 `json:"theorem_3_4_bound,omitempty"`
	// Jitter is the diagonal jitter the certifying factorisation needed:
	// the loss factors hold for SigmaG + Jitter I.
	Jitter float64 `json:"jitter"`
}

// SecretAssessment is one secret of an Assessment.
type SecretAssessment struct {
	Indices    []int    `json:"indices"`
	LossFactor float64  `json:"loss_factor"`
	Epsilon    *float64 `json:"epsilon,omitempty"`
	// Gap is the prior-posterior gap of Theorem 3.1 at Delta
	// (PriorPosteriorGap); nil without Delta or for an infinite epsilon.
	Gap *float64 `json:"prior_posterior_gap,omitempty"`
}

// AssessOptions says what an Assessment states beyond loss factors.
type AssessOptions struct {
	// Lambda (> 1) and Radius (> 0), given together, turn loss factors
	// into epsilons for secrets whose locations each lie within Radius.
	Lambda, Radius float64
	// Delta in (0, 1), with Lambda, adds each secret's prior-posterior gap.
	Delta float64
	// BlockDiagonalBound adds the paper's Theorem 3.4 bound when the noise
	// has no cross terms between a secret and the rest.
	BlockDiagonalBound bool
}

func (o AssessOptions) check() error {
	if (o.Lambda == 0) != (o.Radius == 0) {
		return param.Invalid("Radius", o.Radius, "lambda and radius go together")
	}
	if o.Lambda != 0 {
		if err := param.First(param.Greater("Lambda", o.Lambda, 1), param.Positive("Radius", o.Radius), param.Finite("Lambda", o.Lambda), param.Finite("Radius", o.Radius)); err != nil {
			return err
		}
	}
	if o.Delta != 0 {
		if o.Lambda == 0 {
			return param.Invalid("Delta", o.Delta, "the prior-posterior gap needs Lambda and Radius")
		}
		return param.InOpen("Delta", o.Delta, 0, 1)
	}
	return nil
}

// Assess certifies the exact loss (E1) of the noise sigmaG under the prior
// sigma for each secret, from one factorisation (Evaluator), and states
// what opt asks for. Noise from DesignNoise is assessed with
// (*NoiseDesign).Assess, which reuses the design's certified factors.
func Assess(sigma, sigmaG mat.Symmetric, secrets []Secret, opt AssessOptions) (*Assessment, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	ev, err := NewEvaluator(sigma, sigmaG)
	if err != nil {
		return nil, err
	}
	losses, err := ev.LossFactors(secrets)
	if err != nil {
		return nil, err
	}
	return assess(sigma, sigmaG, secrets, losses, ev.Jitter(), opt)
}

// Assess states d's certified loss factors (d must be a dense design for
// secrets under the prior sigma) as an Assessment.
func (d *NoiseDesign) Assess(sigma mat.Symmetric, secrets []Secret, opt AssessOptions) (*Assessment, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if d.SigmaG == nil {
		return nil, param.Invalid("design", "kernel-only", "has no matrix to assess: form it with Family.SigmaG")
	}
	if len(d.LossFactors) != len(secrets) {
		return nil, param.Invalid("secrets", len(secrets), "the design certifies a different number of secrets")
	}
	return assess(sigma, d.SigmaG, secrets, d.LossFactors, d.Jitter, opt)
}

func assess(sigma, sigmaG mat.Symmetric, secrets []Secret, losses []float64, jitter float64, opt AssessOptions) (*Assessment, error) {
	a := &Assessment{N: sigma.SymmetricDim(), Budget: mat.Trace(sigmaG), Jitter: jitter}
	withEps := opt.Lambda != 0
	var eps []float64
	if withEps {
		var worst float64
		eps, worst = Epsilons(secrets, losses, opt.Lambda, opt.Radius)
		a.Epsilon, a.Lambda, a.Radius = &worst, ptr(opt.Lambda), ptr(opt.Radius)
		if opt.Delta != 0 {
			a.Delta = ptr(opt.Delta)
		}
	}
	for i, s := range secrets {
		sa := SecretAssessment{Indices: s.Indices, LossFactor: losses[i]}
		a.LossFactor = math.Max(a.LossFactor, losses[i])
		if withEps {
			sa.Epsilon = ptr(eps[i])
			if a.Delta != nil && !math.IsInf(eps[i], 1) {
				gap, err := PriorPosteriorGap(eps[i], opt.Lambda, opt.Delta)
				if err != nil {
					return nil, err
				}
				sa.Gap = &gap
			}
		}
		a.Secrets = append(a.Secrets, sa)
	}
	post, err := NewPosterior(sigma, sigmaG)
	if err != nil {
		return nil, err
	}
	if a.Posterior2Sigma, err = post.SecretsTwoSigma(secrets); err != nil {
		return nil, err
	}
	if opt.BlockDiagonalBound {
		for _, s := range secrets {
			b, err := BlockDiagonalLossBound(sigma, sigmaG, s)
			if errors.Is(err, ErrCrossTerms) {
				a.BlockDiagonalBound = nil // the bound does not apply
				break
			}
			if err != nil {
				return nil, err
			}
			a.BlockDiagonalBound = append(a.BlockDiagonalBound, b)
		}
	}
	return a, nil
}

func ptr(v float64) *float64 { return &v }
