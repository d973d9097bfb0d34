// Package sdp is a pure-Go primal-dual interior-point solver for
// semidefinite programs, with an SDPA file reader and writer and a small
// modelling layer. tracepriv designs its CIP noise mechanisms with it
// (the SDPs of Meehan & Chaudhuri and the exact target-epsilon program
// (E3) of the project's cip-math design note); it is written to be useful
// on its own.
//
// # Problem forms
//
// Solve takes a Problem in the inequality (LMI) form, the standard form of
// CVXOPT's conelp with G = -F and h = F0:
//
//	minimise    c^T x
//	subject to  F0_k + sum_j x_j F_jk ⪰ 0     (dense symmetric blocks k)
//	            f0_r + sum_j x_j f_jr >= 0    (linear rows r)
//	            A x = b,
//
// whose dual is: maximise -<F0, Z> - b^T y subject to <F_j, Z> = c_j +
// (A^T y)_j and Z ⪰ 0. This form takes free scalar variables, LMIs and
// equalities without splitting variables. SDPA files describe
//
//	(P) maximise tr(C X)  s.t. tr(A_i X) = a_i,  X ⪰ 0
//	(D) minimise a^T y    s.t. Z = sum_i y_i A_i - C ⪰ 0,
//
// which is the LMI form with x = y, c = a, F_j = A_j, F0 = -C; SolveSDPA
// reports objectives with CSDP's signs (PrimalObj = tr(C X)) and maps the
// infeasibility statuses accordingly. Model builds Problems from symmetric
// matrix variables, scalar variables and affine expressions.
//
// # Algorithm
//
// The iteration is the homogeneous self-dual embedding of CVXOPT's conelp
// (Vandenberghe 2010): variables (x, y, s, z, tau, kappa) with an
// infeasible start, Nesterov–Todd scaling W (W Z W = S, computed per block
// from Cholesky factors of S and Z and an SVD, so that R^T Z R =
// R^-1 S R^-T = diag(lambda) with W = R R^T), Mehrotra's predictor-corrector
// with centring sigma = (1 - alpha_aff)^3, and steps to 0.99 of the
// distance to the boundary, computed from the eigenvalues of the scaled
// directions. Every Newton system is reduced to the Schur complement
//
//	H_ij = sum_k tr(F_ik W_k^-1 F_jk W_k^-1) + sum_r f_ri f_rj z_r / s_r
//
// (plus A^T A when there are equalities), factorised by Cholesky. H is
// assembled from the entries of W^-1 for sparse coefficient matrices, at
// cost nnz(F_i) nnz(F_j) per pair, and through the dense product
// W^-1 F_j W^-1 only for dense ones (the F1/F3 formulas of Fujisawa, Kojima
// and Nakata 1997). The variable of a symmetric n×n matrix has elementary
// coefficient matrices, so its n(n+1)/2 columns assemble in O(n^4) rather
// than O(n^6). The reduced solve is carried out in the scaled space and
// followed by iterative refinement on the full system; the dtau column uses
// the identity -(c^T dx + b^T dy + <F0, dz>) = ||W^-T (F dx + F0)||^2 to
// avoid cancellation.
//
// # Termination and statuses
//
// With x^ = x/tau etc., the relative residuals are
// PrimalRes = max(||A x^ - b|| / max(1,||b||), ||F x^ + F0 - s^|| / max(1,||F0||))
// and DualRes = ||F^T z^ - A^T y^ - c|| / max(1,||c||), and
// RelGap = max(<s^,z^>, |pobj - dobj|) / (1 + |pobj| + |dobj|). Optimal means
// both residuals <= FeasTol and RelGap <= GapTol (defaults 1e-8).
// PrimalInfeasible is declared when (y, z) certifies it: <F0, z> + b^T y < 0
// with ||F^T z - A^T y|| small relative to it; DualInfeasible when x is a
// ray: c^T x < 0 with ||F x - s|| and ||A x|| small relative to it; the
// certificates are returned normalised. Late iterations can lose accuracy
// (H has condition number of order 1/mu); the solver keeps the best
// iterate and returns it as NearOptimal when it is within 1e3 times the
// tolerances, else NumericalProblems.
//
// # References
//
//   - L. Vandenberghe, The CVXOPT linear and quadratic cone program solvers
//     (2010): NT scaling for the semidefinite cone, and conelp's
//     self-dual embedding and predictor-corrector.
//   - Y. Nesterov, M. Todd, Self-scaled barriers and interior-point methods
//     for convex programming, Math. Oper. Res. 22 (1997).
//   - Y. Ye, M. Todd, S. Mizuno, An O(sqrt(n)L)-iteration homogeneous and
//     self-dual linear programming algorithm, Math. Oper. Res. 19 (1994).
//   - S. Mehrotra, On the implementation of a primal-dual interior point
//     method, SIAM J. Optim. 2 (1992).
//   - K. Fujisawa, M. Kojima, K. Nakata, Exploiting sparsity in primal-dual
//     interior-point methods for semidefinite programming, Math. Program. 79
//     (1997).
//   - B. Borchers, CSDP, a C library for semidefinite programming, Optim.
//     Methods Softw. 11 (1999); the SDPA sparse format as read by CSDP.
//   - C. Meehan, K. Chaudhuri, Location trace privacy under conditional
//     priors, AISTATS 2021, appendix 7.3 (SDP_A and SDP_B).
package sdp
