package bdp

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/param"
)

// SumQuery returns q(x) = Σ_i x_i for every database of j, the counting or
// summing query of the thesis's experiments, with sensitivity States−1.
func SumQuery(j Joint) []float64 {
	q := make([]float64, j.size())
	for x := range q {
		for i := range j.N {
			q[x] += float64(j.digit(x, i))
		}
	}
	return q
}

// LeakageLaplace computes the exact BDPL of the continuous-output release
// q(x) + Lap(b) under the joint j, with q given per database index. Given
// (x_K, x_i), the output density is a mixture Σ_c w_c e^{−|θ−c|/b}/(2b) over
// the query values c. Between consecutive centres each mixture has the form
// A e^{θ/b} + B e^{−θ/b}, whose ratio to another such mixture is monotone, so
// the supremum over θ is attained at a centre or in the limits θ → ±∞, where
// the ratio tends to Σ w_c e^{±c/b} / Σ w'_c e^{±c/b}. Everything is computed
// in log space. For a τ-DP release choose b = Δq/τ.
func LeakageLaplace(j Joint, q []float64, b float64) (LeakageResult, error) {
	if err := j.check(); err != nil {
		return LeakageResult{}, err
	}
	if len(q) != j.size() {
		return LeakageResult{}, fmt.Errorf("bdp: query has %d values for %d databases", len(q), j.size())
	}
	if err := param.Positive("b", b); err != nil {
		return LeakageResult{}, err
	}
	centres := slices.Clone(q)
	slices.Sort(centres)
	centres = slices.Compact(centres)
	cidx := make([]int, len(q))
	for x, v := range q {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return LeakageResult{}, fmt.Errorf("bdp: query value %v for database %d is not finite", v, x)
		}
		cidx[x], _ = slices.BinarySearch(centres, v)
	}
	nc := len(centres)
	// Evaluation points: every centre, then the limits −∞ and +∞, as log
	// densities up to a common constant.
	logDens := func(w []float64, out []float64) {
		for k, t := range centres {
			out[k] = logSumExpW(w, func(c int) float64 { return -math.Abs(t-centres[c]) / b })
		}
		out[nc] = logSumExpW(w, func(c int) float64 { return -centres[c] / b })
		out[nc+1] = logSumExpW(w, func(c int) float64 { return centres[c] / b })
	}
	best := LeakageResult{Target: -1}
	s := j.States
	_ = eachAdversary(j.records(), func(i int, known, _ []int) error {
		nk, key := j.knownKey(i, known)
		w := make([][]float64, nk*s)
		for x, px := range j.P {
			if px == 0 {
				continue
			}
			k := key(x)
			if w[k] == nil {
				w[k] = make([]float64, nc)
			}
			w[k][cidx[x]] += px
		}
		ld := make([][]float64, len(w))
		for k, wk := range w {
			if wk == nil {
				continue
			}
			mass := 0.0
			for _, v := range wk {
				mass += v
			}
			for c := range wk {
				wk[c] /= mass
			}
			ld[k] = make([]float64, nc+2)
			logDens(wk, ld[k])
		}
		for kv := range nk {
			for a := range s {
				for c := range s {
					la, lc := ld[kv*s+a], ld[kv*s+c]
					if a == c || la == nil || lc == nil {
						continue
					}
					for p := range la {
						if r := la[p] - lc[p]; r > best.BDPL {
							best = LeakageResult{BDPL: r, Target: i, Known: known}
						}
					}
				}
			}
		}
		return nil
	})
	return best, nil
}

// logSumExpW returns log Σ_c w_c e^{f(c)} over the c with w_c > 0.
func logSumExpW(w []float64, f func(c int) float64) float64 {
	m := math.Inf(-1)
	for c, v := range w {
		if v > 0 {
			m = math.Max(m, math.Log(v)+f(c))
		}
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for c, v := range w {
		if v > 0 {
			s += math.Exp(math.Log(v) + f(c) - m)
		}
	}
	return m + math.Log(s)
}
