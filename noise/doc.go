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
// errors that wrap ErrParam.
//
// # Basic draws
//
// Uniform returns a float in (0, 1) with full resolution near 0 (a random
// binade 2^-g chosen by a fair geometric g, then 52 random mantissa bits), so
// Exponential = -ln U has an exact tail. Normal is the math/rand/v2 ziggurat
// driven by the Source (a floating-point sampler; LazyNormal is the exact
// one). Geometric(λ) draws the binary digits of X-1, which
// are independent Bernoulli(1/(1+e^{λ2^i})) variables, each by an exact
// comparison of a random word, so no float probability of a single trial is
// ever formed (tiny λ fall back to Google's bisection); TwoSidedGeometric is
// the discrete Laplace P(k) ∝ e^{-λ|k|}.
//
// # Secure Laplace and Gaussian
//
// Textbook samplers such as b·ln(U) leak the input through the low-order
// bits of the floating-point result (Mironov, CCS 2012). Laplace and Gaussian
// follow Google's construction instead (Secure_Noise_Generation.pdf in
// google/differential-privacy): the input is rounded to a power-of-two
// lattice gZ and an integer multiple of g is added. For Laplace with scale
// b = Δ/ε, g is the smallest power of two >= b/2^40 and the multiple is
// two-sided geometric with λ = gε/(Δ+g), which is exactly ε-DP on the
// lattice. For Gaussian with standard deviation σ, g is the smallest power of
// two >= 2σ/2^57 and the multiple is a centred Binomial(n, 1/2) with
// √n = 2σ/g, drawn by Bringmann et al.'s rejection sampler; it matches
// N(0, σ²) far below float resolution. accountant.GaussianSigma calibrates
// σ by Balle & Wang's analytic Gaussian mechanism (Theorem 8).
//
// # Exact normal deviates
//
// LazyNormal is Karney's exact standard normal sampler (algorithm N): an
// integer k >= 0 with probability ∝ e^{-k/2}, accepted with probability
// e^{-k(k-1)/2}, and a fraction x accepted with probability e^{-x(2k+x)/2},
// every probability realised by comparisons of random digit strings and
// integer coin flips, with no floating point; the deviate s·(k + x) has
// density ∝ e^{-(k+x)²/2} exactly. Only a few digits of x are drawn, and
// the rest are uniform given everything the algorithm did, so a deviate is
// an exact real number known to lie in an interval (Enclosure) that Refine
// narrows on demand. A deviate costs about 0.3-0.6 µs with the secure
// source and 4.7 random words on average.
//
// # Multivariate Gaussian
//
// MultiNormal samples N(0, Σ) through a real factor L with L Lᵀ ≈ Σ: the
// Cholesky factor of Σ + jI (NewMultiNormalCholesky), or V_k Λ_k^{1/2} from
// an eigendecomposition that allows singular Σ (NewMultiNormal). It has two
// outputs with different guarantees.
//
// Rand returns fl(L z) for floating-point ziggurat normals z. Its possible
// outputs are a sparse set of floats (a ziggurat value is a multiple of one
// of 128 strip widths, 1.3e-10 to 1.6e-9, so a scaled one is spaced about
// that many standard deviations from the next), and after rounding the set
// depends on the input (Mironov 2012): in the falsifier tests, 82% of the
// releases of a one-point trace under the previous snapped release were
// impossible from a point 0.3 m away. Rand is for simulation only.
//
// AddOnGrid(dst, x, g, src) releases y = g·round((x + L z)/g) for exact
// deviates z and a power-of-two grid g, rounding the exact real x + L z,
// with L's float entries read as real numbers. W = L z is computed in
// floating point with a rigorous error bound per coordinate (Higham's
// inner-product bound plus the deviates' enclosures and the final
// addition); a coordinate whose enclosure lies inside one grid cell is
// decided there, and any other is refined with more digits of its deviates
// in directed-rounding big-float arithmetic until it is (ties have
// probability zero; refinement stops with an error at 4096 bits, an event
// of probability about 2^-4000). So the release is exactly the Gaussian
// mechanism with covariance L Lᵀ followed by rounding, which is
// post-processing and costs no privacy; it depends on x only through the
// exact sum, and every point of gZⁿ is a possible output whatever the
// low-order bits of x. AddSnapped is AddOnGrid with g = Granularity(), the
// smallest power of two >= 2^-24·√(max_i Σ_ii). Inputs must be finite with
// |x_i| <= 2^52·g, and the noise standard deviation at most 2^40·g.
//
// Cholesky rounding could make L Lᵀ smaller than Σ in some direction, and
// the release's noise is exactly L Lᵀ. The computed factor satisfies
// L Lᵀ = Σ + jI + D + ΔA with |ΔA| <= γ_{n+1}|L||L|ᵀ elementwise (Higham;
// γ_{n+4} is used to cover gonum's blocked algorithm) and D the rounding of
// the stored diagonal, so NewMultiNormalCholesky bounds ‖ΔA‖₂ by γ times a
// Collatz–Wielandt upper bound on ρ(|L||L|ᵀ) and
// refactorises with a larger j until the bound fits: Σ ⪯ L Lᵀ ⪯ Σ + 2jI is
// guaranteed, and Jitter reports j (about 1e-13 relative for n = 1,000),
// which callers state. The eigendecomposition path clips rounding-size
// negative eigenvalues instead and does not certify its own rounding.
// Both factors sit behind a small internal interface (a float product with
// an error bound, and an interval enclosure of one coordinate). The
// state-space release below reuses the deviates, the float cell test and
// the exact cell decision, not that interface: its deviates are
// regenerated from keyed streams rather than held, and its coordinates are
// recomputed by a recursion rather than a row of a factor.
//
// # Linear-time release of state-space noise
//
// A kernel that is a sum of Matérn kernels of half-integer smoothness
// nu = p + 1/2 (a cip.Envelope's) is the covariance of a sum of
// independent linear SDEs with states of dimension p+1 <= 4
// (gp.StateSpace; Hartikainen & Särkkä 2010). MarkovRelease draws such
// noise at n irregular timestamps by a Kalman-type recursion with exact
// discretisation, in whitened coordinates, one per component c:
//
//	s_1 = z_1,  s_k = Â_k s_(k-1) + B̂_k z_k,  W_k = Σ_c h_c s_(c,k,0) + ω ξ_k,
//
// and releases y = g·round((x + W)/g) exactly, as AddOnGrid does, in O(n)
// time and O(1) memory per point (a step id per point, a float state every
// 256 points; deviates are never stored). Timestamps may be fed in chunks
// (streaming) given N, the number of points, up front.
//
// The implemented map. Â_k is the model's float64 rounding of the exact
// whitened transition Ã(Δ_k), with a rigorous e_k >= ||Â_k - Ã(Δ_k)||_2
// (StateSpace.WhitenedTransition, double-double ball arithmetic in gp);
// Δ_k is the exact difference of the float timestamps (with its rounding
// error when fl(t_k - t_(k-1)) is inexact), and transitions are cached per
// distinct step (GPS steps repeat; DistinctSteps reports the cache).
// B̂_k is the Cholesky factor of I - Â_k Â_kᵀ, computed in double-double
// and rounded, and r_k >= ||Â_k Â_kᵀ + B̂_k B̂_kᵀ - I||_2 is bounded from
// error-free products summed by Ogita, Rump and Oishi's Sum2. h_c is the
// least float found with h_c² >= alpha·v_c, v_c the component's variance.
// The released noise is the Gaussian vector this recursion defines in
// exact real arithmetic with these floats, with covariance Ĉ + ω²I.
//
// Exact sampling. z and ξ are exact deviates (LazyNormal). W is computed in
// float64 with a rigorous bound per coordinate: each component's state
// error obeys ε_k = Â_k ε_(k-1) + λ_k, λ_k the step's rounding (Higham's
// inner-product bound γ_2d·Σ|terms|) plus B̂_k(z - z^f). Since
// Â Âᵀ ⪯ Â Âᵀ + B̂ B̂ᵀ ⪯ (1 + r) I, ||Â_k||_2 <= sqrt(1 + r_k): in the 2-norm
// of whitened coordinates the radius grows additively, not geometrically.
// It also decays: the model certifies ||Ã(τ)||_2 <= theta < 1 for τ >= h
// (Contraction), Ã is a semigroup of contractions, so over steps spanning
// j horizons ||Â_k···Â_(m+1)|| <= theta^j + κ·Σe (the exact product is
// Ã(t_k - t_m); the difference telescopes into Σ_i Â···(Â_i - Ã_i)Ã···,
// κ = Π sqrt(1 + r)). The radius therefore stays at about the rounding of
// a few dozen steps however long the trace (ball in MarkovRelease). A
// component whose horizon is longer than the trace (lengthscales of days,
// as in the envelope of a family reaching them) never contracts; a
// one-dimensional component (Matérn 1/2) therefore carries its state in
// double-double, with the products made exact by FMA and the sums by
// TwoSum, and bounds the deviate's error by |B̂| instead of ||Â||, so its
// radius grows by about 2^-53·|B̂| per step (measured: 6e-12 m over 20,000
// points where plain float64 reached 3e-9 m, and a million points need no
// exact recomputation instead of quadratic time). A
// coordinate whose enclosure of x + W lies in one cell is decided there
// (in the benchmarks, at most one in two million is not); any other is
// recomputed in big-float ball arithmetic with its deviates refined to
// b = 64, 128, … bits, starting from a saved float state whose error ball
// has decayed below 2^-b by then, or from the first point, until decided
// (test hooks force this path for every coordinate, and the outputs are
// the float path's, bit for bit).
//
// Replayable randomness. The deviate of slot j of component c, coordinate
// dim, point k, is Karney's algorithm run on its own stream: the
// AES-256-CTR keystream with counter blocks (index, 0), (index, 1), …,
// index = (k·Dims + dim)·slots + slot, under a 256-bit key read from the
// Source when the release is created (crypto/rand by default). Refining a
// deviate reruns the algorithm on its stream and reads on. AES-256 is a
// pseudorandom permutation, hence a pseudorandom function up to q²/2^129
// after q blocks, and no counter block repeats, so all streams together are
// indistinguishable from independent fair bits without the key: a
// standard counter-mode generator (as NIST SP 800-90A's CTR_DRBG, without
// its reseeding). The key is never returned or written; the expanded key
// schedule stays in memory until garbage-collected. With a seeded Source
// the key, hence the release, is a function of the seed (Randomness
// reports it), and in every case the output does not depend on how the
// points are chunked or on the number of workers.
//
// The white-noise correction. Let C = alpha·Σ_c Gram(k_c) at the
// timestamps, Ĉ_c the covariance of h_c s_(c,·,0), and C'_c =
// (h_c²/(alpha·v_c))·C_c ⪰ C_c. If ||Ĉ_c - C'_c||_2 <= η_c and ω² >= η =
// Σ η_c, then Ĉ + ω²I ⪰ Σ C'_c ⪰ C: the release's noise dominates
// alpha·Gram(k_D) in the PSD order, and every (E1) certificate computed for
// alpha·Gram(k_D) holds for it (more noise never hurts). The bound, per
// component (h = h_c, R = Σ_m r_m, Ŝ_j = Cov(ŝ_j), Ã_i··· = Ã_i···Ã_(j+1)):
//
//  1. ||Â_k||_2 <= sqrt(1 + r_k), as above.
//  2. Ŝ_1 = I and Ŝ_k - I = Â_k (Ŝ_(k-1) - I) Â_kᵀ + (Â_k Â_kᵀ + B̂_k B̂_kᵀ
//     - I), so δ_j := ||Ŝ_j - I|| <= Π_(m<=j)(1 + r_m) - 1 <= e^(R_j) - 1,
//     R_j = Σ_(m<=j) r_m.
//  3. Â_i···Â_(j+1) - Ã_i···Ã_(j+1) = Σ_(m=j+1..i) Â_i···Â_(m+1) (Â_m - Ã_m)
//     Ã_(m-1)···Ã_(j+1), of norm <= e^(R/2) Σ_(m=j+1..i) e_m (||Ã|| <= 1).
//  4. Cov(ŝ_i, ŝ_j) = Â_i···Â_(j+1) Ŝ_j and the exact covariance is
//     Ã_i···Ã_(j+1) = Ã(t_i - t_j), so for i >= j
//     |Ĉ_ij - C'_ij| <= h²·||Â_i··· (Ŝ_j - I) + (Â_i··· - Ã_i···)||
//     <= h² e^(3R/2) (R_j + Σ_(m=j+1..i) e_m),
//     and ||Ĉ - C'||_2 <= max_i Σ_j |Ĉ_ij - C'_ij| (symmetric matrix).
//  5. With every e_m <= ē = d·2^-53 and r_m <= r̄ = d·2^-51 (budgets fixed
//     in advance and checked per step: gp's models reach about 0.5ē and
//     0.35r̄), both sums in a row are at most N(N-1)/2, whence
//     η_c = h² e^(3(N-1)r̄/2) N(N-1)/2 (ē + r̄),
//     fixed from N before the first output: 1.1e-9 of the noise variance
//     at N = 1,000, 1.1e-5 at 10^5, 1.1e-3 at 10^6.
//  6. When all timestamps are known (MarkovOptions.Times) the decay is
//     used too: ||Ã(t_i - t_j)|| <= theta^floor((t_i - t_j)/h) <=
//     theta^-2 ψ_i/ψ_j with ψ_k = theta^β_k, β_k the floor of the float
//     (t_k - t_1)/h (rounding can move a floor by one, whence the -2),
//     and ||Â_i···Â_(j+1)|| <= that + ε₁, ε₁ = e^(R/2) Σ e. Put in 4
//     and in δ_j = ||Σ_(m<=j) Â_j···(Â_mÂ_mᵀ + B̂_mB̂_mᵀ - I)···ᵀ||, the row
//     sums become geometric sums that O(n) recurrences bound with each
//     step's own e_m and r_m (decayEta), and η is the smaller of the two
//     bounds: 1.5e-11 of the noise variance at n = 10^6 for GPS-like
//     sampling, and independent of n, where 5 grows as N².
//
// A negative control in the tests shows the bound has teeth: transitions
// for steps 1e-3 too long put Ĉ 300 m² from C (alpha = 10^4 m²), far
// beyond η, and a model that states that error is refused.
//
// # Planar Laplace
//
// PlanarLaplace has density ε²/(2π)e^{-ε‖z‖}; its radius is Gamma(2, 1/ε)
// with CDF C(r) = 1-(1+εr)e^{-εr} and its angle uniform. Rand draws the
// radius exactly as (E₁+E₂)/ε. RadiusQuantile inverts C by the Lambert W₋₁
// function, C⁻¹(p) = -(W₋₁((p-1)/e)+1)/ε; LambertWm1 and LambertW0 are
// exported. The 0.9 quantile is 3.889720169867429/ε, the mean 2/ε.
//
// # References
//
//   - I. Mironov, On significance of the least significant bits for
//     differential privacy, CCS 2012.
//   - C. F. F. Karney, Sampling exactly from the normal distribution, ACM
//     TOMS 42(1), 2016 (arXiv:1303.6257).
//   - N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
//     SIAM 2002: §3.1 (inner products), Theorem 10.3 (Cholesky).
//   - R. A. Horn, C. R. Johnson, Matrix Analysis, 2nd ed., Cambridge 2013,
//     ch. 8 (the Collatz–Wielandt bound on the spectral radius of a
//     non-negative matrix).
//   - Google DP team, Secure noise generation (common_docs), and
//     google/differential-privacy go/noise, go/rand.
//   - K. Bringmann, F. Kuhn, K. Panagiotou, U. Peter, H. Thomas, Internal DLA:
//     efficient simulation of a physical growth model, ICALP 2014.
//   - B. Balle, Y.-X. Wang, Improving the Gaussian mechanism for differential
//     privacy: analytical calibration and optimal denoising, ICML 2018.
//   - M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis, C. Palamidessi,
//     Geo-indistinguishability, CCS 2013.
//   - R. M. Corless et al., On the Lambert W function, Adv. Comput. Math. 1996.
//   - J. Hartikainen, S. Särkkä, Kalman filtering and smoothing solutions to
//     temporal Gaussian process regression models, MLSP 2010; S. Särkkä,
//     A. Solin, Applied Stochastic Differential Equations, Cambridge 2019,
//     ch. 12; A. Solin, Stochastic differential equation methods for
//     spatio-temporal Gaussian process regression, PhD thesis, Aalto 2016.
//   - T. Ogita, S. M. Rump, S. Oishi, Accurate sum and dot product, SIAM J.
//     Sci. Comput. 26(6), 2005 (Sum2, Proposition 4.5).
//   - M. Bellare, A. Desai, E. Jokipii, P. Rogaway, A concrete security
//     treatment of symmetric encryption, FOCS 1997 (counter mode); NIST SP
//     800-90A Rev. 1 (CTR_DRBG).
package noise
