package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// Posterior is what a Gaussian-process adversary who knows the prior
// covariance Sigma and the noise covariance SigmaG learns from a release
// Z = X + G (cip-math.md section 6).
type Posterior struct {
	// Cov is Sigma_x|z = (Sigma^-1 + SigmaG^-1)^-1, computed as
	// Sigma M^-1 SigmaG with M = Sigma + SigmaG (then symmetrised), which
	// needs no inverse of a singular Sigma or SigmaG and does not subtract
	// nearly equal matrices as Sigma - Sigma M^-1 Sigma would.
	Cov *mat.SymDense
	// Jitter is the diagonal jitter added to M, treated as extra noise.
	Jitter float64

	sigma mat.Symmetric
	m     *gp.Factor
}

// NewPosterior computes the adversary's posterior covariance.
func NewPosterior(sigma, sigmaG mat.Symmetric) (*Posterior, error) {
	n, f, err := factorSum(sigma, sigmaG)
	if err != nil {
		return nil, err
	}
	g := mat.NewSymDense(n, nil)
	g.CopySym(sigmaG)
	for i := range n {
		g.SetSym(i, i, g.At(i, i)+f.Jitter())
	}
	var x, p mat.Dense
	if err := f.SolveTo(&x, g); err != nil {
		return nil, err
	}
	p.Mul(sigma, &x)
	return &Posterior{Cov: symmetrize(&p), Jitter: f.Jitter(), sigma: sigma, m: f}, nil
}

// Mean returns the posterior mean E[X | Z = z] = mu + Sigma M^-1 (z - mu),
// the reconstruction attack. mu nil means a zero prior mean.
func (p *Posterior) Mean(mu, z []float64) ([]float64, error) {
	n := p.Cov.SymmetricDim()
	if len(z) != n || (mu != nil && len(mu) != n) {
		return nil, param.Invalid("z", len(z), fmt.Sprintf("the release must have the prior's %d values (and mu, if given)", n))
	}
	d := mat.NewVecDense(n, nil)
	for i := range n {
		d.SetVec(i, z[i])
		if mu != nil {
			d.SetVec(i, z[i]-mu[i])
		}
	}
	var y, m mat.VecDense
	if err := p.m.SolveVecTo(&y, d); err != nil {
		return nil, err
	}
	m.MulVec(p.sigma, &y)
	out := make([]float64, n)
	for i := range n {
		out[i] = m.AtVec(i)
		if mu != nil {
			out[i] += mu[i]
		}
	}
	return out, nil
}

// TwoSigma returns the paper's posterior uncertainty interval for a
// secret: 2 sqrt(posterior variance) for a basic secret and
// 2 sqrt(lambda_min(posterior block)) for a compound one.
func (p *Posterior) TwoSigma(s Secret) (float64, error) {
	if err := s.Validate(p.Cov.SymmetricDim()); err != nil {
		return 0, err
	}
	lo, _, err := eigExtremes(gp.Sub(p.Cov, s.Indices))
	if err != nil {
		return 0, err
	}
	return 2 * math.Sqrt(math.Max(lo, 0)), nil
}

// MeanTwoSigma returns 2 sqrt(mean posterior variance) over the given
// basic-secret indices (all coordinates if idx is nil), the paper's
// metric for "all basic secrets".
func (p *Posterior) MeanTwoSigma(idx []int) float64 {
	if idx == nil {
		idx = allIndices(p.Cov.SymmetricDim())
	}
	s := 0.0
	for _, i := range idx {
		s += p.Cov.At(i, i)
	}
	return 2 * math.Sqrt(math.Max(s/float64(len(idx)), 0))
}

// SecretsTwoSigma returns the paper's posterior metric for a set of
// secrets: TwoSigma of the secret when there is one, and otherwise
// MeanTwoSigma over the distinct points of all of them.
func (p *Posterior) SecretsTwoSigma(secrets []Secret) (float64, error) {
	if len(secrets) == 1 {
		return p.TwoSigma(secrets[0])
	}
	n := p.Cov.SymmetricDim()
	var idx []int
	seen := make([]bool, n)
	for _, s := range secrets {
		if err := s.Validate(n); err != nil {
			return 0, err
		}
		for _, i := range s.Indices {
			if !seen[i] {
				seen[i] = true
				idx = append(idx, i)
			}
		}
	}
	if len(idx) == 0 {
		return 0, param.Invalid("secrets", "[]", "no secrets")
	}
	return p.MeanTwoSigma(idx), nil
}
