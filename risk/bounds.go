package risk

import (
	"math"
	"sort"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// TVBound is Theorem 5.2: against any attack, with any auxiliary knowledge,
// η-RAD ≤ TV(M)·(1 − κ_π). Use κ = 0 for a continuous prior.
func TVBound(tv, kappa float64) float64 { return tv * (1 - kappa) }

// EpsDeltaBound is Theorem 5.2 for an (ε, δ)-DP mechanism under a uniform
// prior on m values: ((e^ε−1+2δ)/(e^ε+1))·(m−1)/m.
func EpsDeltaBound(eps, delta float64, m int) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkDelta(delta), checkM(m)); err != nil {
		return 0, err
	}
	return TVBound(accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: delta}.TV(), 1/float64(m)), nil
}

// FDPBound is Theorem 5.11 for an attack with no auxiliary knowledge
// (aux = {∅}): η-RAD ≤ max_{α∈[κ⁻, κ⁺]} (1 − f(α) − α), where κ⁺ and κ⁻ are
// the largest and smallest prior mass of an η-ball around a guess.
func FDPBound(f accountant.TradeOff, kappaMinus, kappaPlus float64) float64 {
	v, _ := accountant.MaxAdvantage(f, kappaMinus, kappaPlus)
	return v
}

// FDPBoundDiscrete is the discrete form of Theorem 5.11:
// η-RAD ≤ (1 − κ_π)·max_{α∈[0, κ⁺/(1−κ_π)]} (1 − f(α) − α). Under a uniform
// prior on m values and η = 0 the range is [0, 1/(m−1)] and the factor
// (m−1)/m; this is the form the thesis evaluates (Ex 5.12, Fig 5.4).
func FDPBoundDiscrete(f accountant.TradeOff, kappaPlus, kappa float64) float64 {
	v, _ := accountant.MaxAdvantage(f, 0, kappaPlus/(1-kappa))
	return (1 - kappa) * v
}

// GDPUniform is Example 5.12: the Theorem 5.11 bound for μ-GDP under a
// uniform prior on m values, η = 0, aux = {∅}, in closed form. The objective
// has g′(α) = exp(μΦ⁻¹(1−α) − μ²/2) − 1, so its free maximiser is
// 1 − Φ(μ/2) and α* = min{1/(m−1), 1 − Φ(μ/2)}. (The thesis's first display
// drops the factor (m−1)/m; its final formula has it.)
func GDPUniform(mu float64, m int) (float64, error) {
	if err := param.NonNegative("mu", mu); err != nil {
		return 0, err
	}
	if err := checkM(m); err != nil {
		return 0, err
	}
	// 1 − Φ(μ/2) = Φ(−μ/2) and 1 − Φ(Φ⁻¹(1−α) − μ) = Φ(μ + Φ⁻¹(α)), written
	// so that large μ does not round α* to 0.
	a := math.Min(1/float64(m-1), numeric.Phi(-mu/2))
	v := numeric.Phi(mu+numeric.PhiInv(a)) - a
	return float64(m-1) / float64(m) * v, nil
}

// EpsDeltaBallBound bounds the η-RAD of an (ε, δ)-DP mechanism against an
// attack without auxiliary knowledge, at any tolerance η, from the
// largest and smallest prior mass κ⁺, κ⁻ of an η-ball and κ_π
// (Proposition 5.13):
// min{κ⁺(e^ε−1)+δ, ((1−κ⁻)(e^ε−1)+δ)/e^ε, TV_{ε,δ}(1−κ_π)}.
func EpsDeltaBallBound(eps, delta, kappaMinus, kappaPlus, kappa float64) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkDelta(delta)); err != nil {
		return 0, err
	}
	em1 := math.Expm1(eps)
	b1 := kappaPlus*em1 + delta
	b2 := ((1-kappaMinus)*em1 + delta) / math.Exp(eps)
	b3 := TVBound(accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: delta}.TV(), kappa)
	return math.Min(b1, math.Min(b2, b3)), nil
}

// EpsDeltaUniform bounds the 0-RAD of any (ε, δ)-DP mechanism under a
// uniform prior on m categories, aux = {∅} (Corollary 5.16):
// ((e^ε − 1 + δm)/(e^ε + m − 1))·(m−1)/m. At δ = 0 it equals GRR's exact RAD,
// so it is tight.
func EpsDeltaUniform(eps, delta float64, m int) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkDelta(delta), checkM(m)); err != nil {
		return 0, err
	}
	e, fm := math.Exp(eps), float64(m)
	if math.IsInf(e, 1) {
		return (fm - 1) / fm, nil
	}
	return math.Min(1, (e-1+delta*fm)/(e+fm-1)) * (fm - 1) / fm, nil
}

// EpsDeltaPrior bounds the 0-RAD of any (ε, δ)-DP mechanism over a
// categorical prior, aux = {∅} (Theorem 5.15). With the prior sorted so
// that π_i(1−π_i) decreases, A = (e^ε−1+2δ)/(e^ε+1) and Γ = (m−1)(e^ε−1+mδ)/(e^ε+m−1)
// (Lemma 5.14), the bound is A·Σ_{i≤K} π_i(1−π_i) + R·max_{i>K} π_i, where
// K is the largest index with R = Γ − (K − Σ_{i≤K} π_i)·A ≥ 0 (K = 0 gives
// R = Γ). It also returns K.
func EpsDeltaPrior(eps, delta float64, prior []float64) (bound float64, k int, err error) {
	if err := firstErr(checkEpsilon(eps), checkDelta(delta), checkPrior(prior)); err != nil {
		return 0, 0, err
	}
	m := len(prior)
	p := append([]float64(nil), prior...)
	sort.SliceStable(p, func(i, j int) bool { return p[i]*(1-p[i]) > p[j]*(1-p[j]) })
	e, fm := math.Exp(eps), float64(m)
	a := accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: delta}.TV()
	gamma := (fm - 1) * (e - 1 + fm*delta) / (e + fm - 1)
	if math.IsInf(e, 1) {
		gamma = fm - 1
	}
	sumP := 0.0
	for i := 1; i <= m; i++ {
		sumP += p[i-1]
		if gamma-(float64(i)-sumP)*a >= 0 {
			k = i
		}
	}
	kpi, sumP := 0.0, 0.0
	for _, v := range p[:k] {
		kpi += v * (1 - v)
		sumP += v
	}
	r := gamma - (float64(k)-sumP)*a
	maxRest := 0.0
	for _, v := range p[k:] {
		maxRest = math.Max(maxRest, v)
	}
	return a*kpi + r*maxRest, k, nil
}

// HayesReRo is the reconstruction-robustness (ReRo) bound of Hayes et al.
// from f-DP, Eq. (2.6): success probability ≤ 1 − f(κ⁺). It includes the
// chance baseline κ⁺, which RAD removes; it is a comparator, not a RAD bound.
func HayesReRo(f accountant.TradeOff, kappaPlus float64) float64 { return 1 - f.Beta(kappaPlus) }

// BalleReRo is the ReRo bound of Balle et al. for ε-DP, Eq. (2.3):
// success probability ≤ κ⁺·e^ε (capped at 1).
func BalleReRo(eps, kappaPlus float64) float64 {
	return math.Min(1, kappaPlus*math.Exp(eps))
}
