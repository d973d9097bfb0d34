// Package accountant composes privacy guarantees: it turns a record of
// releases (a ledger of privacy events) into the (ε, δ), Rényi, zCDP,
// Gaussian-DP or metric-privacy guarantee of the whole.
//
// For example, 1000 releases of a unit-sensitivity query with Gaussian
// noise of σ = 40, accounted in Rényi DP and converted to (ε, δ):
//
//	acc, err := accountant.NewRDPAccountant(nil) // nil: dp_accounting's orders
//	if err != nil {
//		return err
//	}
//	if err := acc.Compose(accountant.Gaussian{Sigma: 40, Sensitivity: 1}, 1000); err != nil {
//		return err
//	}
//	eps, order, err := acc.Epsilon(1e-5)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("(%.2f, 1e-5)-DP at order %g\n", eps, order) // (3.62, 1e-5)-DP at order 6.6
//
// # Events
//
// An Event is an immutable description of one mechanism run: Laplace,
// Gaussian, their discrete versions, randomized response (GRR), black-box
// (ε, δ), zCDP, an arbitrary Rényi curve (RDPCurve; the CIP Gaussian
// mechanism's exact loss α/2·k r² L is the linear curve ρα), metric-privacy
// events such as the planar Laplace mechanism, and SelfComposed and
// Composed events. A Ledger is the versioned JSON/YAML form of a list of
// events with counts.
//
// # Rényi DP
//
// A mechanism is (α, ε(α))-RDP when the Rényi divergence of order α between
// its outputs on neighbouring inputs is at most ε(α); curves add under
// adaptive composition. The package uses the exact curves: α/(2σ²)·Δ² for
// the Gaussian, Mironov's (2017, Prop. 6) closed form for Laplace, the
// exact sums for randomized response and the discrete Laplace, and the
// Canonne–Kamath–Steinke bound for the discrete Gaussian. The
// RDPAccountant keeps the curve on dp_accounting's grid of orders and
// converts it with Prop. 12 of Canonne, Kamath & Steinke (2020):
//
//	ε(δ) = min_α  ε(α) + log(1 − 1/α) − log(αδ)/(α − 1),
//
// reporting the optimal order. ZCDPEpsilon and ZCDPDelta apply the same
// conversion to a ρ-zCDP curve over every real α, as OpenDP does.
//
// # Gaussian DP and f-DP
//
// A trade-off function f(α) is the least type-II error of a test between
// neighbouring outputs at type-I error α (Dong, Roth & Su 2022). μ-GDP means
// f ≥ G_μ(α) = Φ(Φ⁻¹(1−α) − μ); the Gaussian mechanism is Δ/σ-GDP, GDP
// composes as ‖μ‖₂, and it is exactly equivalent to the privacy profile
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),
//
// which with μ = Δ/σ is the analytic Gaussian mechanism of Balle & Wang
// (2018). GDPDelta evaluates it in log space so that it stays accurate when
// both terms are tiny; GaussianSigma inverts it, the one place in tracepriv
// where a Gaussian σ is calibrated to (ε, δ). Trade-off functions for the
// Gaussian, Laplace, (ε, δ) and GRR mechanisms give total-variation bounds,
// and MaxAdvantage the largest advantage over α in a range, which the
// reconstruction-risk bounds of package risk use: this package is the one
// home of f-DP.
//
// Invalid parameters are reported as *param.Error, with the parameter
// named as in the ledger format.
//
// # Metric privacy (Guerra-Balboa, Chapter 4)
//
// A mechanism is d-private when P[M(D) ∈ S] ≤ e^{d(D,D′)} P[M(D′) ∈ S]; DP
// for a granularity is ε times its canonical metric. Metric values are
// non-negative sums of named base metrics. Sequential composition adds
// metrics (Thm. 4.1, Cor. 4.2); a preprocessing map with Lipschitz constant
// L turns a d-private mechanism into an L·d-private one (Prop. A.3);
// PatternEpsilon and PatternMu evaluate the exact composition theorem
// (Thm. 4.1, 4.10, 4.16) from how far each mechanism's input moves on one
// neighbouring step; Parallel gives the parallel-composition rules,
// including the sum of the two largest εᵢ for bounded DP over a
// value-based partition on a common domain (Cor. 4.12), and refuses with a
// *NoGuaranteeError where composition gives no guarantee at all (bounded
// DP over a value partition with separately run parts, Example 2.16).
//
// # References
//
//   - I. Mironov, Rényi differential privacy, CSF 2017.
//   - C. Canonne, G. Kamath, T. Steinke, The discrete Gaussian for
//     differential privacy, NeurIPS 2020, arXiv:2004.00010.
//   - M. Bun, T. Steinke, Concentrated differential privacy, TCC 2016.
//   - J. Dong, A. Roth, W. Su, Gaussian differential privacy, JRSS B 2022.
//   - B. Balle, Y.-X. Wang, Improving the Gaussian mechanism for
//     differential privacy, ICML 2018.
//   - P. Kairouz, S. Oh, P. Viswanath, The composition theorem for
//     differential privacy, ICML 2015.
//   - P. Guerra-Balboa, A formal study of differential privacy in complex
//     and correlated data, PhD thesis, KIT 2026 (Chapters 2 and 4).
//   - Google's dp_accounting and OpenDP, whose test values this package
//     reproduces.
package accountant
