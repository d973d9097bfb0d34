// Package noise holds tracepriv's randomness and every noise sampler its
// mechanisms release through, each with the guarantee it gives stated
// below and checked by falsification tests.
//
// For example, a geo-indistinguishable location and a differentially
// private count, both from crypto/rand:
//
//	// Locations 200 m apart are 4-indistinguishable: ε = ln(4)/200 per metre.
//	pl := noise.PlanarLaplace{Epsilon: math.Log(4) / 200}      // Src nil: crypto/rand
//	dx, dy := pl.Rand()                                        // metres east and north
//	fmt.Printf("90%% within %.0f m\n", pl.AccuracyRadius(0.9)) // 90% within 561 m
//	// A count with ε = 0.5, released on a power-of-two lattice.
//	count := noise.Laplace{Epsilon: 0.5, Sensitivity: 1}.Add(120)
//	fmt.Printf("moved (%.0f, %.0f) m; count %g\n", dx, dy, count)
//
// What uses what:
//   - sanitize's dense path: MultiNormal (a certified Cholesky factor of
//     the noise covariance, NewMultiNormalCholesky) and AddOnGrid, which
//     releases x + noise rounded to a grid exactly.
//   - sanitize's linear path: MarkovRelease, the same exact release for
//     state-space (Matérn-sum) noise in O(n) time and memory, by a
//     Kalman-type recursion on keyed AES-CTR streams.
//   - geoind: PlanarLaplace (exact radius, Lambert-W quantiles).
//   - risk's audits and the scalar mechanisms of the CLI: the secure
//     samplers Laplace and Gaussian (Google's lattice construction; the
//     analytic Gaussian calibration is accountant.GaussianSigma);
//     trajdb: Geometric and TwoSidedGeometric.
//   - tests and reproductions: Seeded sources; the Rand methods
//     (floating-point draws) are for simulation only.
//
// # Randomness
//
// Every sampler draws from a Source. Secure (crypto/rand) is the default
// everywhere, and a nil Src field or argument means it; Seeded gives
// reproducible ChaCha8 streams for tests and experiments, and Describe
// reports which was used ("crypto", "seeded:N") so that output can say so;
// IsSecure tells them apart. Derive gives each unit of work (a person) its
// own stream of a seeded source, so seeded releases do not depend on how
// the work is split or ordered; a secure source is returned as it is.
// Nothing here uses math/rand's global generator. Invalid parameters give
// errors that wrap param.ErrInvalid.
//
// # How the samplers work
//
// Uniform and Exponential are exact in their tails; Geometric and
// TwoSidedGeometric compare random words, never a float probability;
// Laplace and Gaussian follow Google's secure lattice construction;
// LazyNormal is Karney's exact normal sampler; MultiNormal.AddOnGrid and
// MarkovRelease round the exact real x + noise to a grid, with rigorous
// bounds on every floating-point step; PlanarLaplace draws its radius
// exactly as (E₁+E₂)/ε. How each works, why the released noise is exactly
// the mechanism it certifies (the rounding-error analysis of the Cholesky
// factor and of the state-space recursion, the white-noise correction η,
// the replayable AES-CTR streams) and the references are in docs/noise.md.
package noise
