// Package cip accounts and designs Gaussian mechanisms for conditional
// inferential privacy (CIP) of location traces under Gaussian-process
// priors (Meehan and Chaudhuri, AISTATS 2021), following the derivations
// in tracepriv's design note cip-math.md.
//
// For example, the least noise that keeps point 10 and the pair of points
// 24-25 of a 50-point trace at ε = 0.5 (Rényi order 2, displacements up to
// half a prior standard deviation):
//
//	sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: 6.1}, gp.Indices(50)) // the prior at public times
//	secrets := []cip.Secret{cip.Basic(10), cip.Compound(24, 25)}
//	targets, err := cip.TargetLossFactors(secrets, 0.5, 2, 0.5)
//	if err != nil {
//		return err
//	}
//	d, err := cip.DesignNoise(cip.DesignRequest{Sigma: sigma, Secrets: secrets, Targets: targets})
//	if err != nil {
//		return err
//	}
//	fmt.Printf("%s: total noise %.1f, optimum ≥ %.1f\n", d.Method, d.Budget, d.LowerBound) // e3: total noise 411.6, optimum ≥ 411.6
//	// d.SigmaG is the noise covariance to sample, d.LossFactors its (E1) certificate.
//
// # The exact loss (E1)
//
// A trace coordinate vector X ~ N(mu, Sigma) (any mean, Sigma from a kernel
// at public timestamps) is released as Z = X + G, G ~ N(0, SigmaG). For a
// secret S (the coordinates of one location, or several), with
// A = Sigma_US Sigma_SS^-1, C = Sigma_U|S, At = [I; A] and Ct the n x n
// matrix holding C in its U block, two hypotheses on X_S that differ by
// Delta give releases N(m + At Delta, K) and N(m, K), K = Ct + SigmaG, so
//
//	D_lambda = lambda/2 Delta^T At^T K^-1 At Delta,
//	epsilon(lambda) = lambda/2 kLoc r^2 L,  L = lambda_max(At^T K^-1 At),   (E1)
//
// for ||Delta||^2 <= kLoc r^2. L, the loss factor, holds for every SigmaG,
// including noise correlated between the secret and the rest; for
// block-diagonal noise it is Theorem 3.4's 1/sigma_s^2 + alpha*
// (BlockDiagonalLossBound).
// Evaluator certifies every secret of a trace from one Cholesky
// factorisation of Sigma + SigmaG, using that At^T K^-1 At is the
// precision an adversary gains on X_S (posterior minus prior precision);
// LossFactorDirect is the literal formula, kept as the reference.
//
// # Optimal noise for a basic secret (E2)
//
// Minimising L over tr(SigmaG) <= c has the closed-form solution
// v = (Ct + cI)^-1 a, SigmaG = c v v^T / ||v||^2, with L = a^T (Ct + cI)^-1 a
// (OptimalBasic); the least budget for a target L is a monotone root find
// (OptimalBasicTarget). On the paper's Figure 2a setting this certifies
// loss factors 1.53, 3.49, 7.72 and 11.9 at l_eff 1, 2.5, 6.1 and 10 with a
// total noise of 1.0.
//
// # Optimal noise for any set of secrets (E3)
//
// OptimalTarget finds the least total noise that keeps every secret's
// loss factor within its target, the semidefinite program (E3) of
// cip-math.md; OptimalBudget minimises the worst KLoc-weighted loss at a
// given total noise. When every point is a basic secret with a common
// target the optimum is closed form, noise shaped like the prior
// (SigmaG = c Sigma, loss 1/(c Sigma_ii) for every point); otherwise a
// barrier method solves (E3) on the explained covariance in the prior's
// numerically significant directions. Every design is certified by (E1)
// and comes with a dual lower bound on the optimum (SetDesign.LowerBound).
// On the paper's all-basic-secrets setting (RBF, n = 50, l_eff 6.1, total
// noise 17.2) the worst loss factor is 2.907, against 7.45 for the paper's
// Multiple Secrets.
//
// # One entry point
//
// DesignNoise is the designer a library user calls, and what package
// sanitize and "tracepriv cip design" call: a DesignRequest gives the prior
// (a covariance Sigma at the trace's points, or a prior family's Envelope
// with the timestamps), the secrets, and a budget or loss-factor targets
// (TargetLossFactors converts an epsilon); its Method picks the designer.
// Each Method has one canonical string, written the same way in
// certificates and reports: "e3" (the least noise for one prior: (E2) or
// (E3)), "proportional" and "envelope" (kernel designs for prior families,
// see NewEnvelope and DesignFamily), "paper-sdp-a" and
// "paper-multiple-secrets"; "auto" and "paper" select among them, and
// ParseMethod reads the older spellings ("optimal", "e3-barrier").
//
// # The paper's mechanisms
//
// PaperSDPA, PaperSDPB and PaperMultipleSecrets are Meehan and Chaudhuri's
// SDP_A, SDP_B and Algorithm 1 as the authors' code states and reads them
// back, solved with package sdp, for reproductions (tracepriv repro cip).
// Their designs are certified by (E1) like every other; the paper's own
// surrogate value (PaperDesign.Beta) is not a bound on the loss.
//
// # Around the loss
//
// PriorPosteriorGap converts a Rényi guarantee into a bound on the change
// of posterior odds (Theorem 3.1); RenyiGaussian and ConditionalDelta give
// the divergences of Theorem 3.3 (MisspecificationBound) for priors outside
// the class; ComposeLoss accounts several releases exactly (Corollary 3.4.1)
// and CombineDimensions adds independent dimensions (Corollary 7.2.1).
// Posterior is the Gaussian-process adversary of the paper's experiments,
// and IndependentUniform and IndependentConcentrated its Approach C
// baselines.
//
// Numerics: smooth kernels give Gram matrices that are singular in
// floating point. Nothing here inverts them; factorisations that need
// diagonal jitter report it (Evaluator.Jitter, Design.Jitter,
// Posterior.Jitter), and the losses then certified are those of the noise
// plus that jitter, a perturbation of order 1e-15 of the prior variance.
//
// References:
//   - C. Meehan and K. Chaudhuri, Location Trace Privacy Under Conditional
//     Priors, AISTATS 2021 (and its appendix).
//   - I. Mironov, Rényi Differential Privacy, CSF 2017.
//   - M. Gil, F. Alajaji and T. Linder, Rényi divergence measures for
//     commonly used univariate continuous distributions, Information
//     Sciences 249, 2013.
package cip
