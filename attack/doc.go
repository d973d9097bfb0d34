// Package attack measures what an adversary recovers from a sanitised
// trace: the strongest Gaussian-process adversary of the public prior class
// (Meehan and Chaudhuri's adversary, cip-math.md section 6), run on a
// release and scored against the original trace beside the release itself.
//
//	released, cert, err := sanitize.Release(truth, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100})
//	if err != nil { ... }
//	rep, reconstruction, err := attack.FromCertificate(cert, truth, released, attack.CertOptions{})
//	if err != nil { ... }
//	fmt.Printf("release %.0f m, reconstruction %.0f m from the truth (RMS)\n", rep.ReleaseRMSE, rep.RMSE)
//
// Entry points, from the most to the least assembled: FromCertificate
// (FromCertificates for a corpus release, one certificate per group of
// people) attacks a release of package sanitize from its certificate
// alone (the certificate is all the adversary needs: it recomputes the
// noise law from it and the released timestamps, projects each person's
// points to a tangent plane at the centre of their release, and attacks
// all of each person's points jointly, or only the traces given: one
// file of a corpus release); Attack runs the adversary on both dimensions
// of one release with a given noise covariance and scores it at the
// secret points; Reconstruct (an explicit noise covariance) and
// ReconstructKernel (a noise kernel) run it on one dimension.
// sanitize.FindCertificates finds a release's certificates, and
// PairTraces pairs each released trace with its original by timestamps.
//
// # Model
//
// Each metric dimension (east, north, in metres) of a release is
// Z = X + G at public times t_1..t_n, with G ~ N(0, SigmaG) and SigmaG public
// (recomputable from the certificate). The adversary class is a GP prior
// X = H beta + F, F ~ N(0, s^2 K_l), with a kernel from a public family
// (prior.Family: kernel, lengthscale l in [l_min, l_max], variance s^2 at least
// the family's) and any mean. The adversary of Adversary
//
//   - knows the mean (MeanKnown), or estimates it by generalised least
//     squares as a constant (MeanConstant, H = 1) or a linear trend in time
//     (MeanLinear, the default: H = [1, (t - tbar)/T]), which is universal
//     kriging;
//   - picks l and s^2 in the class that maximise the restricted (REML)
//     likelihood of the release itself (no truth is used), or uses a fixed
//     prior;
//   - reconstructs every point by the posterior mean and states the
//     posterior variance including the uncertainty of the estimated mean.
//
// With M = s^2 K_l + SigmaG = L L^T (gp.Factorize; its jitter is reported
// and counted as noise) and the whitened design L^-1 H = Q R (QR, not the
// normal equations),
//
//	beta^ = R^-1 Q^T L^-1 z,      Cov(beta^) = (H^T M^-1 H)^-1 = R^-1 R^-T,
//	REML  = -1/2 [ (n-p) log 2 pi + log|M| + log|R^T R| - log|H^T H|
//	               + |L^-1 (z - H beta^)|^2 ],
//	x^    = H beta^ + Sigma M^-1 (z - H beta^),         Sigma = s^2 K_l,
//	V_i   = Var(x_i - x^_i) = [Sigma M^-1 SigmaG]_ii + u_i^T (R^T R)^-1 u_i,
//	        u_i = row i of SigmaG M^-1 H.
//
// V is the exact posterior variance under a flat prior on beta (Rasmussen
// and Williams section 2.7): the first term is cip.Posterior's known-mean
// variance, the second what estimating the mean costs. The second term
// decides calibration when the prior variance is small against the noise
// (the certificate's prior against a release's noise): on such synthetic
// data the nominal 95 % intervals cover 94 % with it and 77 % without
// (TestSyntheticCalibration).
//
// The lengthscale is searched on a log-spaced grid (DefaultGrid points) over
// [l_min, l_max] and refined by Brent's method in log l between the best
// grid point's neighbours; for each lengthscale the variance is bracketed
// and refined by Brent's method in log s^2, bounded below by the family's
// variance: 50 to 100 likelihoods per dimension. Attack runs the two
// dimensions concurrently.
//
// # Linear time
//
// When the family's kernel and every component of the noise are Matérn
// kernels of half-integer smoothness (the bundled prior, and sanitize's
// envelope and proportional noise of it), prior plus noise is a linear
// state-space model (gp.StateSpace: one block per component, in whitened
// coordinates) observed with white noise (the nugget and the
// certificate's jitters). The Kalman filter's innovations are L^-1 z for
// the Cholesky factor L of M taken in time order, and their variances
// multiply to |M|: the restricted likelihood above, exactly, in O(n d^2)
// time and O(d^2) memory for a state of dimension d (35 for a
// certificate's envelope of 19 components). The posterior mean and
// variance, with the mean's share, come from the modified Bryson-Frazier
// smoother run on the GLS residual and on the design's columns, with the
// filter recomputed segment by segment from sqrt(n) checkpoints (memory
// O(sqrt(n) d^2)). This is Fit.Path "state space": on random irregular
// traces it agrees with dense kriging to 1e-11 of the noise's standard
// deviation in the mean, 1e-8 of its variance in the variance and 1e-7
// nats in the likelihood (TestLinearMatchesDense), and a transition 2 %
// off fails that comparison (TestLinearWrongTransitionFails). The guard's
// noise degrees of freedom are exact too: the squared Frobenius norm of a
// sum of Matérn Gram matrices follows from a forward recursion over
// moments, O(n) per pair of components.
//
// Other kernels (RBF, periodic) and explicit noise matrices (the e3
// design) take the dense path: exact up to Adversary.DenseWindow points
// (Fit.Path "dense"; one Cholesky factorisation per likelihood, O(n^3)),
// beyond that bounded (Fit.Path "dense, local windows"): the prior is
// chosen by the restricted likelihood summed over at most six blocks of
// DenseWindow/2 points, and every point is kriged from a window of
// DenseWindow/2 of its neighbours with a mean estimated in the window.
// That is an approximation of the adversary, and acceptable for what an
// attack is: a measurement of what one adversary recovers, never a bound
// (the certificate is the bound); a weaker adversary measures less. On a
// synthetic release whose prior is twice a window long it recovers the
// truth to 1.5 m where the exact path does to 1.2 m (TestLocalPath).
//
// # The plane
//
// sanitize adds its noise in Earth-centred coordinates, the same
// covariance on each axis, and projects the noisy point to the surface;
// at a point at angle theta from the centre of the plane the release's
// east and north noise in the plane has that covariance times I - a a^T,
// |a| = sin theta. FromCertificate attacks each person in the tangent
// plane at the centre of their released points (public), so the model is
// exact to 0.03 % of the noise variance within 100 km of the centre and
// 1.5 % at 1,100 km; errors are measured in that plane.
//
// # The release guard
//
// Real traces are not GP samples, and the best prior of a class can still
// smooth a release more than it supports (a GPS step, a sharp turn). The
// noise law is public, so the adversary can check itself without the
// truth: for a reconstruction linear in z, Stein's unbiased risk estimate
// E(x^_i - x_i)^2 = E[(x^_i - z_i)^2 - G_ii + 2 V_i] holds whatever the
// truth. By default the reconstruction is moved towards the release,
// z + a (x^ - z), with the a in [0, 1] that minimises the summed estimate
// (about 1 when the prior fits); Estimate.Risk and Report.EstimatedRMSE give
// the estimate, Fit.ReleaseWeight = 1 - a. The weight is itself estimated,
// so it is used only when the noise has at least 10 effective degrees of
// freedom or the estimate is decisive. On 55 GeoLife traces (500 points,
// 100 m correlated noise, RBF family 5 s - 10 min) the reconstruction was
// worse than the release on 13 traces without the guard and on 1 with it.
// No adversary can be better than the release in every draw of the noise;
// the guard makes it so in expectation, up to the estimate's noise.
//
// # Numerics of the GLS mean
//
// The mean is estimated by GLS through the QR factorisation of the
// whitened design above (solveGLS), never by a plain average. (An earlier
// version used the average, saying the GLS mean 1^T M^-1 z / 1^T M^-1 1
// was dominated by rounding for smooth kernels; that is not so.) Checked
// against a 256-bit solution of the same system
// (TestGLSMatchesExtendedPrecision): whenever SigmaG has any
// component the prior lacks (white noise, a different kernel) the GLS
// coefficients agree to 1e-12 standard errors, by QR and by the normal
// equations alike. When SigmaG is proportional to the prior, M is singular
// to working precision and the GLS mean is ill-posed for any algorithm
// (thousands of standard errors apart, decided by the jitter); the white
// noise of rounding the release to sanitize's 2^-10 m grid, given as
// Adversary.Nugget, already brings it to within 1 % of a standard error.
//
// # Places
//
// A release certified point by point can still give away where a person
// stayed: noise that is not common to all the points of a stay averages
// out over them. FromCertificate therefore also finds the stays of the
// true trace (Stays: Li et al.'s stay-point rule, 200 m and 15 minutes by
// default; the truth only says where to look) and plays the place
// adversary on each (EstimatePlace): the GLS estimate of one fixed
// position from the stay's released points under the certificate's noise
// covariance K, c^ = 1^T K^-1 z / 1^T K^-1 1, with standard deviation
// (1^T K^-1 1)^(-1/2) per coordinate. CertReport.StayErrorM is the median
// over stays of its distance to the stay's true centroid, beside the plain
// mean of the released points (the naive attack) and the per-point error.
// Noise with a common component (one offset for all the points) is the
// only kind that averaging cannot remove: 1^T K^-1 1 then stays below its
// inverse variance however long the stay (TestAttackPlaceCommonOffsetControl).
//
// # Model selection
//
// With CertOptions.SelectKernels an adversary that does not know the prior
// family fits each kernel's lengthscale (from the sampling interval to the
// window's length) and variance to the release alone by the restricted
// likelihood above, keeps the kernel of highest likelihood and
// reconstructs with it (Selection).
//
// Errors are measured in the plane (metres) at the secret points. The
// guarantee (the certified epsilon) bounds how far any adversary's beliefs
// can move; this is one concrete adversary's outcome, for evaluation.
//
// References:
//   - C. Meehan and K. Chaudhuri, Location Trace Privacy Under Conditional
//     Priors, AISTATS 2021.
//   - C. E. Rasmussen and C. K. I. Williams, Gaussian Processes for Machine
//     Learning, MIT Press, 2006, section 2.7 (explicit basis functions).
//   - D. A. Harville, Maximum likelihood approaches to variance component
//     estimation, JASA 72, 1977 (restricted likelihood).
//   - C. M. Stein, Estimation of the mean of a multivariate normal
//     distribution, Annals of Statistics 9, 1981 (unbiased risk estimate).
//   - R. P. Brent, Algorithms for Minimization without Derivatives, 1973.
//   - Q. Li, Y. Zheng, X. Xie, Y. Chen, W. Liu and W.-Y. Ma, Mining user
//     similarity based on location history, ACM SIGSPATIAL GIS 2008
//     (stay points).
package attack
