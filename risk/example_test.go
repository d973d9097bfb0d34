package risk_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/risk"
)

// How much does an ε = 1 Laplace release of a bounded query tell an informed
// adversary who must pick the target among 11 equally likely values?
func ExampleLaplaceUnitRange() {
	rad, _ := risk.LaplaceUnitRange(1, 11)
	tv, _ := risk.EpsDeltaBound(1, 0, 11) // black-box Theorem 5.2
	fmt.Printf("exact RAD %.4f, black-box bound %.4f\n", rad, tv)
	// Output: exact RAD 0.0443, black-box bound 0.4201
}

// Calibrate ε from an accepted risk: 10 % reconstruction advantage over 100
// location cells under GRR.
func ExampleCalibrateGRR() {
	eps, _ := risk.CalibrateGRR(0.1, 100)
	rad, _ := risk.GRR(eps, 100)
	fmt.Printf("epsilon %.4f gives RAD %.4f\n", eps, rad)
	// Output: epsilon 2.5044 gives RAD 0.1000
}

// Audit a GRR implementation: run the empirical Bayes attack and turn the
// measured RAD into a lower bound on ε (Eq. 5.60).
func ExampleAuditor_Discrete() {
	const m, eps = 4, 2.0
	lik, _ := risk.GRRChannel(eps, m)
	grr := func(x int, src noise.Source) int {
		u := float64(src.Uint64()>>11) / (1 << 53)
		for t, p := range lik[x] {
			if u < p {
				return t
			}
			u -= p
		}
		return m - 1
	}
	a := risk.Auditor{M: m, Trials: 50000, Src: noise.Seeded(1)}
	r, _ := a.Discrete(grr)
	_, lower, _ := r.EpsilonLower()
	exact, _ := risk.GRR(eps, m)
	fmt.Printf("exact RAD %.3f, measured within ±0.01: %v, lower bound ≤ true ε: %v\n",
		exact, r.RAD > exact-0.01 && r.RAD < exact+0.01, lower <= eps)
	// Output: exact RAD 0.461, measured within ±0.01: true, lower bound ≤ true ε: true
}

// Theorem 5.3 for any finite mechanism: here GRR over 4 values against a
// membership adversary (a(x) = x) with a skewed prior, which equals
// TV·(1 − κ_π).
func ExampleExact() {
	lik, _ := risk.GRRChannel(1, 4)
	prior := []float64{0.4, 0.3, 0.2, 0.1}
	rad, _ := risk.Exact(lik, risk.Setting{Prior: prior, Aux: []int{0, 1, 2, 3}})
	closed, _ := risk.GRRPrior(1, prior)
	fmt.Printf("exact %.6f, closed form %.6f\n", rad, closed)
	// Output: exact 0.210342, closed form 0.210342
}

// The table of mechanisms drives "tracepriv risk rad": every entry
// evaluates its RAD at its parameter and compares it with the black-box
// Theorem 5.2 bound. (Checked by hand: Laplace (9/10)(1 − e^{−1/18}),
// GRR (e−1)·9/((e+9)·10); DP-SGD at μ = √100/2 = 5 has its maximiser
// α* = Φ(−5/2) inside [0, 1/9], so Theorem 5.11 meets Theorem 5.2.)
func ExampleMechanisms() {
	for _, mc := range risk.Mechanisms() {
		p := risk.Params{M: 10, Epsilon: 1, Sigma: 2, Steps: 100}
		res, err := mc.RAD(p)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-8s by %-7s RAD %.4f ≤ %.4f\n", mc.Name, mc.Param, res.RAD, res.TVBound)
	}
	// Output:
	// laplace  by epsilon RAD 0.0486 ≤ 0.3541
	// gaussian by sigma   RAD 0.0199 ≤ 0.1777
	// grr      by epsilon RAD 0.1320 ≤ 0.4159
	// oue      by epsilon RAD 0.0808 ≤ 0.4159
	// ss       by epsilon RAD 0.1023 ≤ 0.4159
	// dpsgd    by sigma   RAD 0.8888 ≤ 0.8888
}
