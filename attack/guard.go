package attack

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// The guard moves the reconstruction only when its weight is estimated
// from at least minGuardDOF effective degrees of freedom of the noise,
// (tr SigmaG)^2 / |SigmaG|_F^2 (the risk estimate's relative standard
// deviation is about sqrt(2/dof)), or when the estimate is decisive: a
// weight below decisiveGuard means |x^ - z|^2 is more than ten times what
// the prior predicts, which a chi-square with one degree of freedom exceeds
// with probability 0.16 %.
const (
	minGuardDOF   = 10
	decisiveGuard = 0.1
)

// noiseDOF returns (tr g)^2 / |g|_F^2, the effective number of degrees of
// freedom of noise with covariance g: n for white noise, 1 for noise along
// one direction.
func noiseDOF(g mat.Symmetric) float64 {
	n := g.SymmetricDim()
	tr, f := 0.0, 0.0
	for i := range n {
		tr += g.At(i, i)
		for j := range n {
			v := g.At(i, j)
			f += v * v
		}
	}
	return tr * tr / f
}

// guardDiag estimates the risk of a reconstruction without the truth and, if
// apply, shrinks it towards the release where that lowers the estimate.
//
// The noise law is public, so for a reconstruction x^ = A z linear in the
// release (fixed hyperparameters) Stein's unbiased risk estimate
//
//	E (x^_i - x_i)^2 = E [ (x^_i - z_i)^2 - G_ii + 2 (A SigmaG)_ii ]
//
// holds for every truth x, whatever the prior; for universal kriging
// (A SigmaG)_ii is the posterior variance V_i. Along x^_a = z + a (x^ - z)
// the summed estimate is least at
//
//	a* = (tr SigmaG - sum V_i) / |x^ - z|^2,
//
// which is about 1 when the prior fits the release (then E|x^ - z|^2 =
// tr SigmaG - sum V_i exactly) and smaller when the prior smooths more than
// the release supports. Clipped to [0, 1], a* never makes the estimated
// risk exceed that of the release (a = 0) or of the posterior mean (a = 1).
// Under the model the error variance of x^_a is (1-a)^2 G_ii +
// (1 - (1-a)^2) V_i, between the posterior's and the release's.
//
// It returns the weight a used (1 if the guard is not applied; see
// minGuardDOF) and sets est.Risk to the pointwise risk estimates of the
// returned reconstruction. The noise enters through its variances gd and
// its degrees of freedom dof (computed only when needed).
func guardDiag(est *Estimate, z, gd []float64, dof func() float64, apply bool) float64 {
	n := len(z)
	dz, excess := 0.0, 0.0
	for i := range n {
		d := est.Mean[i] - z[i]
		dz += d * d
		excess += gd[i] - est.Variance[i]
	}
	a := 1.0
	if dz > 0 {
		a = min(max(excess/dz, 0), 1)
	}
	if !apply || (a >= decisiveGuard && dof() < minGuardDOF) {
		a = 1
	}
	est.Risk = make([]float64, n)
	for i := range n {
		v, gi := est.Variance[i], gd[i]
		est.Mean[i] = z[i] + a*(est.Mean[i]-z[i])
		d := est.Mean[i] - z[i]
		est.Risk[i] = d*d - gi + 2*((1-a)*gi+a*v)
		est.Variance[i] = (1-a)*(1-a)*gi + (1-(1-a)*(1-a))*v
	}
	return a
}

// rms returns sqrt(max(sum, 0) / k).
func rms(sum float64, k int) float64 { return math.Sqrt(math.Max(sum, 0) / float64(k)) }
