// Package geoind implements geo-indistinguishability for online location
// queries: the planar Laplace mechanism and the predictive mechanism of
// Chatzikokolakis, Palamidessi and Stronati, with its private test, budget
// managers, skip strategies and a persistable Session.
//
//	cfg := geoind.Config{Mechanism: geoind.MechanismPredictive, Manager: geoind.ManagerPlanned, Origin: geoind.BeijingCentre,
//		Params: geoind.Params{Epsilon: math.Ln10 / 100}, Noise: geoind.PlanarLaplace{Grid: 1}}
//	released, people, err := geoind.SanitizeByPerson(cfg, traces, nil, noise.Secure()) // one budget per person
//	if err != nil { ... }
//	fmt.Println(people[0].Released, "of", people[0].Points, "points released")
//
// # Privacy notion
//
// Locations live on a tangent Plane with a public origin; d is the
// Euclidean distance there (metres). The origin, and with it the output
// grid, must be chosen without looking at the data (a city centre, say):
// an origin derived from the data (the centre of the first point's 1°
// cell, for instance) would make the grid, and so the set of possible
// outputs, depend on the secret, and two positions 100 m apart on either
// side of a cell line would be told apart with certainty. Nothing in this
// package or its CLI derives one. A mechanism K is ε·d-private
// (geo-indistinguishable) if K(x)(Z) <= e^{ε d(x,x')} K(x')(Z) for all
// secrets x, x' and output sets Z. ε is per metre: ε = ε*/r* protects
// within radius r* at level ε* (the paper's case study: ln 10 per 100 m).
// Traces use d_∞(x, x') = max_i d(x_i, x'_i).
//
// # Noise mechanism N(ε)
//
// PlanarLaplace adds noise of density ε²/(2π)·e^{-ε‖z‖}, drawn by
// noise.PlanarLaplace with the exact radius (E₁+E₂)/ε. Its accuracy is
// α_N(δ) = C_ε⁻¹(δ) = -(W₋₁((δ-1)/e)+1)/ε (3.8897/ε at δ = 0.9) and its
// mean error 2/ε (NoiseAccuracy, ExpectedError).
//
// Truncation (Region) remaps every output outside a rectangle to the
// nearest point inside; it is post-processing of the release, so the
// guarantee is unchanged and no probability mass depends on the secret
// through a normaliser (rejection sampling would inflate ε near borders).
//
// Discretisation (Grid = u > 0, required): the secret is snapped to its
// grid cell, noise is added, and the result is remapped to the nearest
// in-region grid point. In exact arithmetic that is post-processing too. The correction of
// Andrés et al. (CCS'13, §5) pays for floating point, and we derive our own
// bound for our sampler. Couple the implemented sample Ŷ with the ideal
// Y = x + R(cos Θ, sin Θ): when R <= R_max, |Ŷ - Y| <= Δ, where Δ =
// (R_max + 10^7 m)·2^-46 bounds the rounding of the angle 2πU, the radius
// (E₁+E₂)/ε, sin/cos and the coordinate sums (each within a few ulps,
// 2^-52, of its ideal value; 2^-46 leaves a factor 64). R_max is set by
// P(R > R_max) = (1+εR_max)e^{-εR_max} = τ = 2^-64. Each output's preimage
// S is an axis-aligned cell of side u (a half-strip or quadrant on the
// region's border). Growing or shrinking S by Δ changes its ideal
// probability by a factor within 1 ± η,
//
//	η = (4Δ/u)(1 + Δ/u)·e^{√2·ε(u+Δ)},
//
// because each band of width Δ along a side has, line by line, at most Δ/u
// of the mass of the adjacent strip of width u inside S, at density ratio
// at most e^{ε(u+Δ)} (corner squares: (Δ/u)², ratio e^{√2ε(u+Δ)}). Hence
// for every output set Z,
//
//	P̂(Z|x) <= ((1+η)/(1-η))·e^{εd(x,x')}·P̂(Z|x') + τ(1 + ((1+η)/(1-η))e^{εd(x,x')}),
//
// and for grid secrets (d >= u when x ≠ x') the multiplicative factor is at
// most e^{ε'd} with
//
//	ε' = ε + (1/u)·ln((1+η)/(1-η))                                   (GridCorrection)
//
// which has the form of Andrés et al.'s ε + (1/u)ln((q+2e^{εu})/(q-2e^{εu}))
// with our own constants. The mechanism samples at ε_s = ε - c̄ (c̄ the
// correction bounded over [ε/2, ε], SamplingEpsilon), so a grid release
// budgeted at ε is ε-private between grid points up to the additive
// τ(1+e^{εd}) ≈ 5·10^-20·(1+e^{εd}).
//
// # Floating-point safety
//
// Every release path depends on the secret x only through its grid cell
// (i, j) = round(x/u), integers. PlanarLaplace.Release adds to (i, j) the
// noise rounded to whole cells, (round(dx/u), round(dy/u)), in integer
// arithmetic (exact below 2^53) and outputs the grid point of the sum; the
// predictive mechanism's Test is evaluated on the cell's grid point, and
// predictions are functions of earlier releases; a Session reports the
// WGS84 position of a grid point, a deterministic function of it. So the
// set of possible outputs, and their probabilities, cannot depend on the
// secret's low-order bits (Mironov 2012): secrets in one cell get bitwise
// identical releases from the same random draws. (The coordinate term
// 10^7 m in Δ above is thereby slack; it is kept as margin.) Continuous
// output (Grid 0), where x + noise keeps x's low-order bits, is refused;
// a 1 m grid costs a relative 10^-4 to 10^-6 of ε. The falsification
// tests release 400,000 times at secrets differing in low-order bits and
// by sub-grid shifts and check that every release is a grid point and
// every grid point within 20 cells is hit, with a sparse-support sampler
// as negative control.
//
// # Noise the plane can represent
//
// The tangent plane stands for the Earth only near its origin. Noise whose
// 1-10^-9 radius quantile exceeds MaxNoiseRadius (1,000 km) is refused
// before anything is drawn, from public parameters only (CheckNoiseScale;
// Config.Validate bounds the ε_N of every step its manager can choose).
// Plane.Inverse is total: it clamps to MaxPlaneRadius (post-processing),
// so no release can produce a non-finite or invalid position.
//
// # Predictive mechanism
//
// A run r = [(z₁,b₁), …] lists reported values and public hard/easy flags.
// At each step the budget Manager returns β(r) = (ε_θ, ε_N, l), the
// Predictor guesses z̃ = Ω(r) (Parrot: the last reported value; Linear:
// 2z₁ - z₀ over the last two hard values), and the Test
//
//	Θ(ε_θ, l, z̃)(x) = easy iff d(x, z̃) <= l + Lap(ε_θ)
//
// decides whether z̃ is reported (easy) or fresh noise N(ε_N) is (hard).
// Θ is ε_θ·d-private because d(·, z̃) is 1-Lipschitz (Fact 1); it uses the
// secure lattice Laplace of package noise (see Test for the resolution).
// By Lemma 2 the run costs
//
//	ε_β(r) = Σ_i β_θ(r_<i) + b_i·β_N(r_<i)                            (Accounting)
//
// and with an ε-bounded manager PM is ε·d_∞-private (Theorem 3). Skip
// strategies use the conventions Θ(0, -∞) (ModeNoise: straight to noise,
// used at the first step when there is nothing to predict) and Θ(0, +∞)
// (ModePredict: the prediction for free, when MaxSpeed × the time since
// the last hard point is at most l; timestamps are public). ModePredict
// steps carry no accuracy bound.
//
// The managers follow section IV-C with c_N = ε·α_N(δ), c_θ = ε·α_θ(δ)
// (α_θ the one-sided Laplace quantile, ln 5/ε at 0.9), α_N = η(l + α_θ)
// and γ = α_θ/l: FixedUtility (Fig. 6) sets ε_N = c_N/α, ε_θ =
// η c_θ(1+1/γ)/α, l = c_θ/(γ ε_θ); FixedRate (Fig. 7) solves ρ = ε_θ +
// (1-PR)ε_N. Both stop (ErrExhausted) when the budget left cannot pay a
// hard step, so ε(r) <= ε always; FixedRate and IM at a fixed rate may
// scale the last step down to the budget left.
//
// Planned is the manager of an offline release, where the number of
// queries N is public (the points of a recorded trace, after any thinning
// by their timestamps, trace.Thin): each step spends the budget left over
// the queries left in the fixed-rate formula, capped so that every later
// query keeps a reserve of ε/(2N); it answers all N queries whatever the
// positions, and every hard step draws ε_N >= ε/(2N(1+k)), a bound checked
// against MaxNoiseRadius before anything is drawn. Config.Plan and
// PlanByPerson report a release's cost before it is drawn (Plan), and
// PersonRelease the error the run's decisions cost (ExpectedError, and
// StepAccuracy's α).
//
// # Sessions and people
//
// A Session answers one query at a time against a persisted State (the
// configuration, the run, the budget spent). StateFile keeps it in a file
// sealed with an HMAC key kept apart in a key directory, with a second
// record per state path, so that an edited state, an older copy put back,
// a copy elsewhere or a deleted state is refused rather than silently
// resetting the budget (see StateFile for the threat model: this stops
// accidents and anyone without the key directory, not its owner).
//
// The budget belongs to a person, not to a trace: SanitizeByPerson runs
// one session per person over all their traces in time order.
//
// # References
//
// K. Chatzikokolakis, C. Palamidessi, M. Stronati. A predictive
// differentially-private mechanism for mobility traces. PETS 2014.
//
// M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis, C. Palamidessi.
// Geo-indistinguishability: differential privacy for location-based
// systems. CCS 2013.
//
// I. Mironov. On significance of the least significant bits for
// differential privacy. CCS 2012.
package geoind
