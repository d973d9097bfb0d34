// Package bdp calibrates standard differentially private mechanisms so that
// they satisfy Bayesian differential privacy (BDP) on correlated data,
// following Chapter 6 of Guerra-Balboa's thesis (Lange, Guerra-Balboa,
// Parra-Arnau, Strufe, PVLDB 2025).
//
// For example, a count over a day of 5-minute activity states (288 records)
// whose transitions follow a two-state Markov chain, released 20-BDP:
//
//	chain, err := bdp.NewMarkov([][]float64{{0.818, 0.182}, {0.371, 0.629}}, 1e-9)
//	if err != nil {
//		return err
//	}
//	c, err := bdp.BestOf(20, bdp.Groups{M: 288}, chain)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("run a %.4f-DP mechanism (%s)\n", c.Tau, c.Model) // run a 13.9886-DP mechanism (markov(gamma=4.495))
//
// # Bayesian leakage
//
// An adversary who knows the records X_K and the data distribution Π learns
// about a target X_i from an output y through
//
//	BDPL_{K,i} = sup ln Pr[y | x_K, x_i] / Pr[y | x_K, x'_i],
//
// where the unknown records are marginalised under Π. M is ε-BDP if the
// supremum over K and i is at most ε (Def 2.27). For independent records
// this is ε-DP; under correlation a τ-DP mechanism leaks more, and against
// arbitrary correlation nothing useful is possible (Prop 6.1, FreeLunch).
// This package gives the factor by which leakage grows for three models of
// correlation, and so the per-record budget τ to feed a standard mechanism:
//
//   - Groups (Thm 6.3): at most m correlated records per independent group;
//     any τ-DP mechanism is mτ-BDP, so τ = ε/m. Example 6.4 shows this is
//     tight.
//   - Gaussian (Thm 6.14): Gaussian data with at most m correlated records,
//     constant variance and |correlation| ≤ ρ with ρ(m−2) < 1; a clipped
//     (εℓ₁)-private mechanism with DP parameter τ is h·τ-BDP with
//     h(m, ρ) = m²/(4(1/ρ − m + 2)) + 1, so τ = ε/h (Eq. 6.42).
//   - Markov (Thm 6.20): a stationary finite Markov chain with all
//     transition probabilities positive; any τ-DP mechanism is
//     (τ + 4 ln γ)-BDP with γ = max P / min P, so τ = ε − 4 ln γ, available
//     only above the floor 4 ln γ.
//
// Each is a valid upper bound, so the largest τ over the models that apply
// is also valid (BestOf). The thesis's guarantees are for a single release
// of a pure-DP mechanism; there is no BDP calibration here for Gaussian
// noise or (ε, δ).
//
// Leakage computes the exact BDPL of a finite-output mechanism under a finite
// joint distribution by brute force, and LeakageLaplace does the same for a
// Laplace release of a query (Example 2.25), as oracles for small cases.
// CovarianceFactor evaluates the per-adversary bound behind Theorem 6.14
// exactly on a given covariance matrix (an extension, labelled as such).
// Experiment runs the thesis's utility experiment (Sec. 6.5) on data from
// GaussianBlocks and MarkovChain, generated as the thesis describes its
// synthetic and Markov datasets. ChakrabartiFlip, RRCountBeta and
// RRCountAlpha give the randomised-response baseline the thesis compares the
// Markov bound with (Sec. 6.4.2.1, Figs 6.4–6.5), with the exact accuracy
// computed by convolution.
//
// # References
//
//   - P. Guerra-Balboa, PhD thesis (KIT), Chapter 6 and Appendix A.4.
//   - B. Yang, I. Sato, H. Nakagawa, "Bayesian differential privacy on
//     correlated data", SIGMOD 2015 (the nτ bound for Gaussian Markov
//     random fields, the "state of the art" baseline).
//   - D. Kifer, A. Machanavajjhala, "No free lunch in data privacy",
//     SIGMOD 2011.
package bdp
