package risk

import (
	"math"
)

// Setting describes the adversary of Theorem 5.3 over a finite set of m
// candidate records.
type Setting struct {
	// Prior is π over the candidates; nil means uniform.
	Prior []float64
	// Aux is the auxiliary knowledge a(x) as a label per candidate; nil
	// means none (aux = {∅}, every label equal). Aux[x] = x is the
	// membership adversary (MIA).
	Aux []int
	// Success reports whether guessing `guess` reconstructs `x`, that is
	// ℓ(x, guess) ≤ η; nil means exact reconstruction (η = 0).
	Success func(guess, x int) bool
}

// Exact evaluates Theorem 5.3's exact, universally tight RAD bound for a
// mechanism with finitely many outputs, given as lik[x][θ] = Pr[M(D_x) = θ]
// (each row a distribution over the same outputs):
//
//	η-RAD = Σ_θ Σ_z max_{x'} Σ_{x: a(x)=z, ℓ(x,x')≤η} w(θ,x)·π_x,
//	w(θ,x) = p(θ|x) − Σ_y π_y p(θ|y).
//
// The Bayes attack of Algorithm 1 attains it. The cost is
// O(|Θ|·m²) (O(|Θ|·m) for η = 0), so it is meant for small mechanisms and
// as an oracle for the closed forms.
func Exact(lik [][]float64, s Setting) (float64, error) {
	m := len(lik)
	if m < 2 {
		return 0, errorf("need at least 2 candidates, got %d", m)
	}
	nout := len(lik[0])
	for x, row := range lik {
		if len(row) != nout {
			return 0, errorf("likelihood row %d has %d outputs, row 0 has %d", x, len(row), nout)
		}
		sum := 0.0
		for t, p := range row {
			if math.IsNaN(p) || p < 0 {
				return 0, errorf("likelihood[%d][%d] = %v is not a probability", x, t, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			return 0, errorf("likelihood row %d sums to %v, not 1", x, sum)
		}
	}
	ev, err := newEvaluator(m, s)
	if err != nil {
		return 0, err
	}
	p := make([]float64, m)
	total := 0.0
	for t := range nout {
		for x := range m {
			p[x] = lik[x][t]
		}
		total += ev.at(p)
	}
	return total, nil
}

// evaluator computes Theorem 5.3's integrand at one output θ,
// Σ_z max_{x'} Σ_{x∈a⁻¹(z), ℓ(x,x')≤η} w(θ,x)·π_x, from the likelihoods
// p(θ|x). It is the one place the formula lives; Exact sums it over a finite
// output set and ExactDensity integrates it.
type evaluator struct {
	m       int
	prior   []float64
	ngroups int
	inGroup []int   // aux group index of each candidate
	reach   [][]int // reach[g]: the candidates that guess g reconstructs
	wpi     []float64
	best    []float64
	acc     []float64
}

func newEvaluator(m int, s Setting) (*evaluator, error) {
	prior := s.Prior
	if prior == nil {
		prior = Uniform(m)
	}
	if len(prior) != m {
		return nil, errorf("prior has %d values for %d candidates", len(prior), m)
	}
	if err := checkPrior(prior); err != nil {
		return nil, err
	}
	aux := s.Aux
	if aux == nil {
		aux = make([]int, m)
	}
	if len(aux) != m {
		return nil, errorf("aux has %d labels for %d candidates", len(aux), m)
	}
	index := map[int]int{}
	inGroup := make([]int, m)
	for x, z := range aux {
		gi, ok := index[z]
		if !ok {
			gi = len(index)
			index[z] = gi
		}
		inGroup[x] = gi
	}
	succ := s.Success
	if succ == nil {
		succ = func(g, x int) bool { return g == x }
	}
	reach := make([][]int, m)
	for g := range m {
		for x := range m {
			if succ(g, x) {
				reach[g] = append(reach[g], x)
			}
		}
	}
	n := len(index)
	return &evaluator{m: m, prior: prior, ngroups: n, inGroup: inGroup, reach: reach,
		wpi: make([]float64, m), best: make([]float64, n), acc: make([]float64, n)}, nil
}

// at returns the integrand for likelihoods p[x] = p(θ|x).
func (e *evaluator) at(p []float64) float64 {
	pt := 0.0
	for x, v := range p {
		pt += e.prior[x] * v
	}
	for x, v := range p {
		e.wpi[x] = (v - pt) * e.prior[x]
	}
	for gi := range e.best {
		e.best[gi] = math.Inf(-1)
	}
	// For each guess, sum the evidence per aux group over the candidates it
	// reconstructs; a guess reaching no candidate of a group scores 0 there
	// (Algorithm 1's "output outside a⁻¹(z)").
	for g := range e.m {
		clear(e.acc)
		for _, x := range e.reach[g] {
			e.acc[e.inGroup[x]] += e.wpi[x]
		}
		for gi, v := range e.acc {
			e.best[gi] = math.Max(e.best[gi], v)
		}
	}
	total := 0.0
	for _, b := range e.best {
		total += b
	}
	return total
}

// Channel builds the likelihood matrix of a finite mechanism from a function
// giving Pr[M(D_x) = θ] for m candidates and n outputs.
func Channel(m, n int, p func(x, theta int) float64) [][]float64 {
	lik := make([][]float64, m)
	for x := range lik {
		lik[x] = make([]float64, n)
		for t := range n {
			lik[x][t] = p(x, t)
		}
	}
	return lik
}

// GRRChannel is the likelihood matrix of ε-DP generalised randomised
// response over m values.
func GRRChannel(eps float64, m int) ([][]float64, error) {
	if err := firstErr(checkEpsilon(eps), checkM(m)); err != nil {
		return nil, err
	}
	e := math.Exp(eps)
	p, q := e/(e+float64(m)-1), 1/(e+float64(m)-1)
	return Channel(m, m, func(x, t int) float64 {
		if x == t {
			return p
		}
		return q
	}), nil
}
