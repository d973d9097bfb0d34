// Package numeric holds the numerical building blocks that several
// tracepriv packages share, so that each is written (and tested) once:
//
//   - the standard normal distribution: Phi, PhiInv and LogPhi, accurate
//     in both tails (privacy profiles such as δ(ε) of the Gaussian mechanism
//     live far out in the lower tail, where 1 − Φ rounds to 0 and Φ⁻¹ of a
//     tiny probability is needed to full relative accuracy);
//   - bracketed monotone search: Bisect narrows a bracket around the point
//     where a monotone predicate changes value, to a tolerance or to
//     adjacent floats, and returns both ends, because privacy calibration
//     must take the conservative side rather than an approximate root;
//   - MaximizeUnimodal, golden-section search for the maximum of a
//     unimodal (for instance concave) function on an interval;
//   - JitterLadder, the schedule of diagonal jitters tried when a Cholesky
//     factorisation of a nearly singular covariance fails;
//   - the error-free transformations TwoSum and TwoProd, from which the
//     exact samplers and the certified transitions build double-double
//     arithmetic, and the upward-rounding SqrtUp, FloatUp and PowUp with
//     which they bound what they cannot compute exactly.
//
// The package is internal: public packages expose what they compute (a δ, a
// σ, a RAD bound) and use these as tools.
package numeric
