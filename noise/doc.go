// Package noise holds tracepriv's randomness and its noise samplers.
//
// Every sampler draws from a Source. Secure (crypto/rand) is the default
// everywhere, and a nil Src field or argument means it; Seeded gives
// reproducible streams for tests and experiments and is reported as such by
// Describe. Nothing here uses math/rand's global generator.
//
// # Basic draws
//
// Uniform returns a float in (0, 1) with full resolution near 0 (a random
// binade 2^-g chosen by a fair geometric g, then 52 random mantissa bits), so
// Exponential = -ln U has an exact tail. Normal is the math/rand/v2 ziggurat
// driven by the Source. Geometric(λ) draws the binary digits of X-1, which
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
// N(0, σ²) far below float resolution. DeltaForGaussian and SigmaForGaussian
// calibrate σ by Balle & Wang's analytic Gaussian mechanism (Theorem 8).
//
// # Multivariate Gaussian
//
// MultiNormal samples N(0, Σ) for positive semi-definite, possibly singular
// Σ from a symmetric eigendecomposition (no Cholesky, no jitter): eigenvalues
// within PSDTolerance·λ_max of zero are clipped and reported, clearly
// negative ones are an error. It is a floating-point sampler; AddSnapped
// rounds to a lattice as a hardening.
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
//   - Google DP team, Secure noise generation (common_docs), and
//     google/differential-privacy go/noise, go/rand.
//   - K. Bringmann, F. Kuhn, K. Panagiotou, U. Peter, H. Thomas, Internal DLA:
//     efficient simulation of a physical growth model, ICALP 2014.
//   - B. Balle, Y.-X. Wang, Improving the Gaussian mechanism for differential
//     privacy: analytical calibration and optimal denoising, ICML 2018.
//   - M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis, C. Palamidessi,
//     Geo-indistinguishability, CCS 2013.
//   - R. M. Corless et al., On the Lambert W function, Adv. Comput. Math. 1996.
package noise
