// Package risk measures disclosure risk as reconstruction advantage (RAD),
// following Chapter 5 of Guerra-Balboa's thesis: exact and black-box RAD
// bounds, calibration of a mechanism's parameter from an accepted risk, and
// RAD-based auditing by Monte Carlo.
//
// For example, the largest ε for randomised response over 100 location
// cells that keeps an informed adversary's reconstruction advantage at 10 %:
//
//	eps, err := risk.CalibrateGRR(0.1, 100)
//	if err != nil {
//		return err
//	}
//	rad, err := risk.GRR(eps, 100)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("ε = %.4f, RAD = %.4f\n", eps, rad) // ε = 2.5044, RAD = 0.1000
//
// # Reconstruction advantage
//
// An informed adversary knows every record but one, X₁ ~ π, sees the output
// θ ~ M(D_{X₁}) and guesses. The η-RAD of an attack A is how much more often
// its guess lands within η of the true record than within η of an
// independent draw X₀ ~ π (Def 5.1):
//
//	η-RAD = Pr[ℓ(X₁, A(θ)) ≤ η | θ ~ M(D_{X₁})] − Pr[ℓ(X₁, A(θ)) ≤ η | θ ~ M(D_{X₀})].
//
// It lies in [−1, 1−κ_π], κ_π = Σ π_x², and is 0 for any attack that ignores
// θ, so it counts only what the release itself discloses. With the
// mechanism's likelihood known, Theorem 5.3 gives the exact supremum over
// attacks, attained by the Bayes attack (Algorithm 1, Corollary 5.9).
// Exact evaluates Theorem 5.3 for any finite mechanism, prior, auxiliary
// knowledge and tolerance η, and ExactDensity does so by quadrature for a
// real-valued output; with a uniform prior, no auxiliary knowledge and η = 0
// the bound reads
//
//	0-RAD = (1/m)(Σ_θ max_x p(θ|x) − 1),
//
// from which the closed forms here follow (GRR, OUE, subset selection;
// Laplace (A.15, A.18) and Gaussian (A.10, A.12), whose worst case over m
// query values spread over a unit range has equal gaps, by Jensen). Without
// the likelihood, Theorem 5.2 bounds RAD by TV(M)(1−κ_π) for any
// auxiliary knowledge; with none, Theorem 5.11 bounds it by max(1−f(α)−α)
// over an α range fixed by the prior, for any trade-off function f of the
// mechanism, and EpsDeltaBallBound, EpsDeltaPrior and EpsDeltaUniform
// (Proposition 5.13, Theorem 5.15 and Corollary 5.16) specialise
// to (ε, δ)-DP.
//
// # Calibration and auditing
//
// Every bound here grows with ε (shrinks with σ), so the largest ε (smallest
// σ) whose bound stays below an accepted risk γ is a one-dimensional root;
// closed forms are used where the thesis gives them and checked bisection
// otherwise. Auditing runs the reverse: an attack's empirical RAD γ̃, with a
// Clopper–Pearson interval, is turned into an ε that the mechanism must at
// least have, by inverting a bound (Eq. 5.60 for any ε-DP mechanism).
//
// The bounds take f-DP trade-off functions from the accountant package
// (accountant.TradeOff, accountant.MaxAdvantage), the one home of f-DP.
//
// # The table of mechanisms
//
// Mechanisms lists the mechanisms the RAD tools know (Laplace, Gaussian,
// GRR, OUE, subset selection, DP-SGD), each with its RAD evaluator, its
// calibrator and, where tracepriv implements it, a builder for audits
// (Mechanism.Audit, run by Auditor.Audit). The tracepriv commands "risk
// rad", "risk calibrate" and "audit" only look names up in it; a new
// mechanism is one more entry.
//
// # References
//
//   - P. Guerra-Balboa, "Privacy in the Presence of Correlation and Risk"
//     (PhD thesis, KIT), Chapter 5 and Appendix A.3; the paper
//     Guerra-Balboa, Sauer, Arcolezi, Strufe, "Understanding Disclosure Risk
//     in Differential Privacy with Applications to Noise Calibration and
//     Auditing".
//   - J. Hayes, S. Mahloujifar, B. Balle, "Bounding training data
//     reconstruction in DP-SGD", NeurIPS 2023 (ReRo from f-DP, Eq. 2.6).
//   - B. Balle, G. Cherubin, J. Hayes, "Reconstructing training data with
//     informed adversaries", IEEE S&P 2022 (ReRo from (ε, δ), Eq. 2.3).
//   - J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS B 2022.
package risk
