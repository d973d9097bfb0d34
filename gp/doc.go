// Package gp provides the Gaussian-process machinery tracepriv's privacy
// accounting is built on: covariance kernels, Gram matrices at (public)
// timestamps, stable factorisations of nearly singular covariances, Gaussian
// conditioning, and maximum-likelihood fitting of kernel hyperparameters.
//
// For example, what an adversary who learns a trace's first point infers
// about the next three under a Matérn 5/2 prior:
//
//	k, err := gp.NewKernel(gp.KernelMatern52, 100, 30, 0) // variance 100 m², lengthscale 30 s
//	if err != nil {
//		return err
//	}
//	sigma := gp.Gram(k, []float64{0, 10, 30, 90}) // at public timestamps, in seconds
//	c, err := gp.Condition(sigma, []int{0})
//	if err != nil {
//		return err
//	}
//	mean, err := c.Mean(nil, []float64{20}) // the first point 20 m east of the prior mean
//	if err != nil {
//		return err
//	}
//	fmt.Printf("%.1f %.1f %.1f m\n", mean[0], mean[1], mean[2]) // 18.3 10.5 0.6 m
//
// # Model
//
// One coordinate of a location trace sampled at times t_1..t_n is modelled
// as X ~ N(mu, Sigma) with Sigma_ij = k(t_i, t_j) for a kernel k. For an
// index set S and its complement U, the conditional law of X_U given
// X_S = x_S is Gaussian with
//
//	mean  mu_U + A (x_S - mu_S),   A = Sigma_US Sigma_SS^-1,
//	cov   C = Sigma_U|S = Sigma_UU - Sigma_US Sigma_SS^-1 Sigma_SU,
//
// which is what Conditional computes, always through triangular solves with
// a Cholesky factor, never an explicit inverse.
//
// Gram matrices of smooth kernels (RBF at an effective lengthscale of a few
// samples) have condition numbers beyond 1e12 and are often numerically
// singular. Factorize adds the smallest diagonal jitter, from a geometric
// ladder, with which the Cholesky factorisation succeeds and reports it;
// callers that need a certificate must pass the jitter on. Factor solves
// with LAPACK directly, without the condition estimates mat.Cholesky makes
// after every factorisation and solve (the jitter already answers for
// near-singularity), with mat's arithmetic bit for bit. FactorizeEigen is
// the explicit pseudo-inverse alternative for callers that want it.
//
// # Kernels
//
// RBF, Periodic (the form exp(-2 sin^2(pi |t-s| / p) / l^2) used by Meehan
// and Chaudhuri), Matern32, Matern52, and Sum and Product of kernels. Times
// are float64 in the kernel's units: seconds (Seconds) or sample indices
// (Indices). The effective lengthscale of Meehan and Chaudhuri is the
// lengthscale in seconds divided by the sampling period
// (EffectiveLengthscale with MeanPeriod, or MedianPeriod as the authors'
// code does).
//
// # Fitting
//
// Fit maximises the log marginal likelihood
//
//	log p(y) = -1/2 y^T K^-1 y - 1/2 log|K| - n/2 log 2 pi,  K = Gram + noise I,
//
// summed over one or more series, with its analytic gradient
// d/d theta = 1/2 tr((alpha alpha^T - K^-1) dK/d theta), alpha = K^-1 y, in
// log-hyperparameter space with box bounds (a logistic reparametrisation),
// using L-BFGS from gonum/optimize and deterministic restarts. The paper's
// preprocessing (preprocess_geolife.py) fits one RBF per series with the
// lengthscale in [1, 40] seconds started at 8 on de-meaned, unit-variance
// data (times in seconds from the start); PaperFitOptions reproduces it, and
// package prior applies it to a corpus of traces.
//
// References:
//   - C. E. Rasmussen and C. K. I. Williams, Gaussian Processes for Machine
//     Learning, MIT Press, 2006 (chapters 2, 4 and 5).
//   - C. Meehan and K. Chaudhuri, Location Trace Privacy Under Conditional
//     Priors, AISTATS 2021.
package gp
