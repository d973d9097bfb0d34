// Package stattest holds the statistical test helpers shared by tracepriv's
// tests: sample moments with z-value tolerances, goodness-of-fit tests and an
// empirical differential-privacy falsifier. It is modelled on Google's
// differential-privacy stattestutils and statistical_tests_utils.
//
// # Moment checks
//
// With n i.i.d. samples of mean μ, variance σ² and kurtosis κ = μ₄/σ⁴, the
// sample mean has standard error √(σ²/n) and the sample variance
// √((κ-1)/n)·σ² (large n). CheckMean and CheckVariance accept when the
// deviation is within z standard errors; the default Z = 4.41717 is the
// two-sided 99.9995% normal quantile, Google's choice, so a correct sampler
// fails a single check with probability 1e-5. Google's variance tolerance
// z·√5·σ²/√n is the κ = 6 (Laplace) case of this formula; Gaussian noise has
// κ = 3, Gamma(2) radii κ = 6, a uniform angle κ = 9/5.
//
// # Goodness of fit
//
// ChiSquare compares binned counts with expected probabilities (Pearson's
// statistic, p-value from the χ² distribution with bins-1 degrees of
// freedom); KS is the one-sample Kolmogorov–Smirnov test with Stephens'
// finite-n correction of the asymptotic Kolmogorov p-value, and KS2 the
// two-sample test (effective size n_a n_b/(n_a + n_b)), for comparing two
// samplers of one law. CovarianceSE is the standard error of a sample
// covariance of normal pairs, √((σ_i²σ_j² + σ_ij²)/n), for entrywise
// covariance checks at a stated z.
//
// # DP falsification
//
// A mechanism M is (ε, δ)-DP only if P(M(x) ∈ S) <= e^ε·P(M(x') ∈ S) + δ for
// every event S and neighbours x, x'. DPCheck estimates both sides per bin
// of a histogram from two independent sample sets and rejects when some
// bin's excess p̂_a - e^ε p̂_b - δ is above z standard errors, the standard
// error being √((p̂_a + e^{2ε} p̂_b)/n) (a binomial bound on the variance of
// the difference). Bins with fewer than MinCount samples in total are pooled
// into one event, which is still a valid event for the inequality, so no
// sample is dropped. The test can only show that a mechanism is NOT DP (it is
// semi-decidable; arXiv:1909.01917 §5.3, cited by Google's cc/testing
// README), so tests
// pair it with a negative control that must be rejected.
//
// ApproxDPTestValue and VerifyApproximateDP reproduce Google's
// VerifyApproximateDp (cc/testing/statistical_tests_utils.h): the statistic
// Σ_bins max(0, (c_a - e^ε c_b)/n) estimates the smallest δ', and the test
// accepts if it is below δ + α in both directions. Google states its error
// probability as at most (1+e^{2ε})/(n(α - √(m/n)(1+e^{2ε}))²) for α above
// √(m/n)(1+e^{2ε}), m the support size; ApproxDPErrorBound returns it.
//
// Vote runs a randomised check several times and takes the majority (Google's
// VotingUtil / RunBallot), so fixed-seed tests stay both strict and stable.
//
// # Float-safety falsifiers
//
// A mechanism whose set of possible outputs depends on its input is not
// (ε, δ)-DP for any ε when δ is below the probability of an output that the
// neighbour cannot produce (Mironov, CCS 2012). SupportAttack counts the
// releases from x that a support model of the mechanism at x' proves
// impossible; the model must over-approximate the support, so each count
// is a proof, and DeltaLowerBound turns the rate into a confidence bound
// on that δ. CoverLattice is the black-box counterpart for lattice
// mechanisms: every output must be an exact multiple of the step, and
// every lattice point of non-negligible probability must occur;
// MissProbability bounds its false-alarm rate.
//
// NormalCellProbs and BivariateNormalRect give the exact probabilities of
// the cells of a rounded one- or two-dimensional Gaussian (the latter by
// Gauss–Legendre quadrature of a one-dimensional integral), and PoolSmall
// merges sparse bins, so ChiSquare can test a lattice release for
// exactness.
package stattest
