package risk

import (
	"math"
	"sort"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// The closed forms below are Theorem 5.3 (exact, attained by the Bayes
// attack) evaluated for particular mechanisms. Unless a prior is passed they
// assume a uniform prior over m values, no auxiliary knowledge (aux = {∅})
// and exact reconstruction (η = 0).

// GRR is the exact 0-RAD of generalised randomised response over m values
// (Example 5.4): (e^ε−1)(m−1)/((e^ε+m−1)m). It equals Theorem 5.2's bound,
// TV·(1−1/m), so GRR is the worst ε-DP mechanism for RAD.
func GRR(eps float64, m int) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkM(m)); err != nil {
		return 0, err
	}
	return accountant.GRRTradeOff{Epsilon: eps, Categories: m}.TV() * float64(m-1) / float64(m), nil
}

// GRRPrior is GRR's exact RAD for a membership adversary (a(x) = x) under
// an arbitrary prior, Example 5.4: ((e^ε−1)/(e^ε+m−1))·(1−κ_π).
func GRRPrior(eps float64, prior []float64) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkPrior(prior)); err != nil {
		return 0, err
	}
	return accountant.GRRTradeOff{Epsilon: eps, Categories: len(prior)}.TV() * (1 - Kappa(prior)), nil
}

// oueP is OUE's probability of reporting a 0 bit as 0, e^ε/(e^ε+1).
func oueP(eps float64) float64 { return 1 / (1 + math.Exp(-eps)) }

// OUE is the exact 0-RAD of optimised unary encoding over m values (Example
// A.17): ((e^ε−1)/(2m))·(1 − (e^ε/(1+e^ε))^{m−1}). It saturates at
// (m−1)/(2m) as ε → ∞, which is why OUE audits lose power at large ε.
func OUE(eps float64, m int) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkM(m)); err != nil {
		return 0, err
	}
	if eps > 700 {
		return float64(m-1) / (2 * float64(m)), nil
	}
	// (2p−1)/(2m(1−p)) = (e^ε−1)/(2m); 1 − p^{m−1} is formed from
	// log p = −log1p(e^{−ε}) so that it does not round to 0 at large ε.
	tail := -math.Expm1(-float64(m-1) * math.Log1p(math.Exp(-eps)))
	return math.Expm1(eps) / (2 * float64(m)) * tail, nil
}

// OUEPrior is OUE's exact 0-RAD under an arbitrary prior with aux = {∅}
// (Example A.17). With π sorted ascending, p = e^ε/(e^ε+1), q = 1−p:
// ((p−q)/(2p))·(Σ_i p^{m−i}π_i(1−π_i) − q Σ_i p^{m−i}π_i Σ_{z<i} π_z).
func OUEPrior(eps float64, prior []float64) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkPrior(prior)); err != nil {
		return 0, err
	}
	pi := append([]float64(nil), prior...)
	sort.Float64s(pi)
	m := len(pi)
	p := oueP(eps)
	q := 1 - p
	s1, s2, cum := 0.0, 0.0, 0.0
	for i, v := range pi {
		w := math.Pow(p, float64(m-1-i)) // p^{m−i} with 1-based i
		s1 += w * v * (1 - v)
		s2 += w * v * cum
		cum += v
	}
	return (p - q) / (2 * p) * (s1 - q*s2), nil
}

// OUEMIA is OUE's RAD against a membership adversary (a(x) = x) under any
// prior (Example 5.5): TV(OUE)·(1−κ_π) = ½((e^ε−1)/(e^ε+1))(1−κ_π) < ½.
func OUEMIA(eps float64, prior []float64) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkPrior(prior)); err != nil {
		return 0, err
	}
	return OUETV(eps) * (1 - Kappa(prior)), nil
}

// SubsetOmega is the subset size of ε-DP subset selection over m values,
// ω = max(1, ⌊m/(e^ε+1)⌋), and ssP the probability that the report contains
// the true value, ωe^ε/(ωe^ε + m − ω).
func SubsetOmega(eps float64, m int) int {
	w := math.Floor(float64(m) / (math.Exp(eps) + 1))
	return max(1, int(w))
}

func ssP(eps float64, m, w int) float64 {
	we := float64(w) * math.Exp(eps)
	if math.IsInf(we, 1) {
		return 1
	}
	return we / (we + float64(m-w))
}

// SubsetSelection is the exact 0-RAD of ε-DP subset selection over m values
// (Example A.18): (pm − ω)/(mω). With ω = 1 it coincides with GRR.
func SubsetSelection(eps float64, m int) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkM(m)); err != nil {
		return 0, err
	}
	w := SubsetOmega(eps, m)
	p := ssP(eps, m, w)
	return (p*float64(m) - float64(w)) / (float64(m) * float64(w)), nil
}

// sortedGaps returns the gaps between consecutive sorted query values.
func sortedGaps(values []float64) ([]float64, error) {
	if len(values) < 2 {
		return nil, errorf("need at least 2 query values, got %d", len(values))
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	g := make([]float64, len(v)-1)
	for i := range g {
		if math.IsNaN(v[i]) || math.IsInf(v[i], 0) || math.IsInf(v[i+1], 0) {
			return nil, errorf("query values must be finite")
		}
		g[i] = v[i+1] - v[i]
	}
	return g, nil
}

// LaplaceValues is the exact 0-RAD of the Laplace mechanism with scale b when
// the m candidate records give query values `values` (uniform prior), Eq.
// (A.15): (1/m)(m − 1 − Σ_j e^{−Δ_j/(2b)}) over the sorted gaps Δ_j. The Bayes
// attack's decision regions are the Voronoi cells of the values.
func LaplaceValues(b float64, values []float64) (float64, error) {
	if err := param.Positive("b", b); err != nil {
		return 0, err
	}
	g, err := sortedGaps(values)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for _, d := range g {
		s += -math.Expm1(-d / (2 * b))
	}
	return s / float64(len(values)), nil
}

// LaplaceUnitRange is the worst case of LaplaceValues over m query values in
// a range of one sensitivity, for the ε-DP Laplace mechanism (scale Δ/ε),
// Eq. (A.18): ((m−1)/m)(1 − e^{−ε/(2(m−1))}). By Jensen the worst case has
// equal gaps.
func LaplaceUnitRange(eps float64, m int) (float64, error) {
	if err := firstErr(checkEpsilon(eps), checkM(m)); err != nil {
		return 0, err
	}
	fm := float64(m)
	return (fm - 1) / fm * -math.Expm1(-eps/(2*(fm-1))), nil
}

// GaussianValues is the exact 0-RAD of the Gaussian mechanism with standard
// deviation σ for query values `values` (uniform prior), Eq. (A.10):
// (2/m)Σ_j Φ(Δ_j/(2σ)) − (m−1)/m.
func GaussianValues(sigma float64, values []float64) (float64, error) {
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	g, err := sortedGaps(values)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for _, d := range g {
		s += 2*numeric.Phi(d/(2*sigma)) - 1
	}
	return s / float64(len(values)), nil
}

// GaussianUnitRange is the worst case of GaussianValues over m query values
// in a range of one sensitivity, Eq. (A.12):
// ((m−1)/m)(2Φ(1/(2σ(m−1))) − 1), with σ in units of the sensitivity.
func GaussianUnitRange(sigma float64, m int) (float64, error) {
	if err := firstErr(checkSigma(sigma), checkM(m)); err != nil {
		return 0, err
	}
	fm := float64(m)
	return (fm - 1) / fm * (2*numeric.Phi(1/(2*sigma*(fm-1))) - 1), nil
}

// DPSGD bounds the 0-RAD of full-batch DP-SGD with noise multiplier σ over T
// steps, which is √T/σ-GDP (Example 5.17), for a uniform prior on m
// candidates and aux = {∅}: Theorem 5.11 in the closed form of Example 5.12.
// DPSGDTV gives Theorem 5.2's bound, which also holds with auxiliary
// knowledge.
func DPSGD(sigma float64, steps, m int) (float64, error) {
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	if err := checkSteps(steps); err != nil {
		return 0, err
	}
	return GDPUniform(math.Sqrt(float64(steps))/sigma, m)
}

// DPSGDTV is Theorem 5.2 for full-batch DP-SGD: ((m−1)/m)(2Φ(√T/(2σ)) − 1).
func DPSGDTV(sigma float64, steps, m int) (float64, error) {
	if err := firstErr(checkSigma(sigma), checkM(m)); err != nil {
		return 0, err
	}
	if err := checkSteps(steps); err != nil {
		return 0, err
	}
	return TVBound(accountant.GaussianTradeOff{Mu: math.Sqrt(float64(steps)) / sigma}.TV(), 1/float64(m)), nil
}
