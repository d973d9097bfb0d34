package accountant

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracepriv/tracepriv/param"
)

// Names of the canonical metrics of the two classical granularities
// (thesis L422–424): a mechanism is bounded ε-DP iff it is ε·d_H-private and
// unbounded ε-DP iff it is ε·|D Δ D′|-private (Prop. 2.6).
const (
	Hamming             = "hamming"
	SymmetricDifference = "symmetric_difference"
)

// Metric is a privacy metric d = Σₖ wₖ·dₖ, a non-negative combination of
// named base metrics with the privacy parameters absorbed into the weights:
// a mechanism is d-private when P[M(D) ∈ S] ≤ e^{d(D,D′)} P[M(D′) ∈ S]
// (thesis Def. 2.5). Sums of metrics are metrics, which is what makes
// sequential composition a sum (thesis Thm. 4.1). Metric values are
// immutable; the zero value is the zero metric (no privacy loss).
type Metric struct {
	terms []metricTerm // sorted by name, weights > 0
}

type metricTerm struct {
	name   string
	weight float64
}

// NewMetric returns ε·d for the base metric called name.
func NewMetric(name string, epsilon float64) (Metric, error) {
	if strings.TrimSpace(name) == "" {
		return Metric{}, &param.Error{Name: "metric", Value: math.NaN(), Why: "must name the base metric"}
	}
	if !(epsilon >= 0) {
		return Metric{}, &param.Error{Name: "epsilon", Value: epsilon, Why: "must be non-negative"}
	}
	if epsilon == 0 {
		return Metric{}, nil
	}
	return Metric{terms: []metricTerm{{name, epsilon}}}, nil
}

// Of returns the metric guarantee of a metric event.
func (m MetricEvent) Of() (Metric, error) { return NewMetric(m.Metric, m.Epsilon) }

// Weight returns the weight of the base metric name (0 if absent).
func (m Metric) Weight(name string) float64 {
	for _, t := range m.terms {
		if t.name == name {
			return t.weight
		}
	}
	return 0
}

// Bases returns the names of the base metrics with a positive weight.
func (m Metric) Bases() []string {
	out := make([]string, len(m.terms))
	for i, t := range m.terms {
		out[i] = t.name
	}
	return out
}

// Plus returns m + o: the guarantee of running a m-private and an o-private
// mechanism on the same input, adaptively (thesis Cor. 4.2).
func (m Metric) Plus(o Metric) Metric {
	w := make(map[string]float64, len(m.terms)+len(o.terms))
	for _, t := range m.terms {
		w[t.name] += t.weight
	}
	for _, t := range o.terms {
		w[t.name] += t.weight
	}
	return fromWeights(w)
}

// Scale returns c·m for c ≥ 0, the guarantee after a preprocessing step
// with Lipschitz constant c or for groups of c records.
func (m Metric) Scale(c float64) Metric {
	w := make(map[string]float64, len(m.terms))
	for _, t := range m.terms {
		w[t.name] = c * t.weight
	}
	return fromWeights(w)
}

func fromWeights(w map[string]float64) Metric {
	var m Metric
	for name, x := range w {
		if x > 0 {
			m.terms = append(m.terms, metricTerm{name, x})
		}
	}
	sort.Slice(m.terms, func(i, j int) bool { return m.terms[i].name < m.terms[j].name })
	return m
}

// Sequential returns the metric of the adaptive sequential composition of
// mechanisms that are dᵢ-private on the same input: Σ dᵢ (thesis Cor. 4.2;
// with dᵢ = εᵢ·d it is the classical Σ εᵢ).
func Sequential(ds ...Metric) Metric {
	var sum Metric
	for _, d := range ds {
		sum = sum.Plus(d)
	}
	return sum
}

// Distance evaluates d(D, D′) = Σₖ wₖ dₖ(D, D′) given the base distances.
// A base distance may be +Inf (inputs not connected); then the guarantee is
// void for that pair and the result is +Inf even if its weight is tiny. A
// base metric of m missing from base is an error.
func (m Metric) Distance(base map[string]float64) (float64, error) {
	total := 0.0
	for _, t := range m.terms {
		d, ok := base[t.name]
		if !ok {
			return 0, fmt.Errorf("accountant: no distance given for base metric %q", t.name)
		}
		if !(d >= 0) {
			return 0, &param.Error{Name: t.name, Value: d, Why: "distance must be non-negative"}
		}
		total += t.weight * d
	}
	return total, nil
}

// String formats the metric as "0.5·hamming + 2·euclidean_m".
func (m Metric) String() string {
	if len(m.terms) == 0 {
		return "0"
	}
	parts := make([]string, len(m.terms))
	for i, t := range m.terms {
		parts[i] = strconv.FormatFloat(t.weight, 'g', -1, 64) + "·" + t.name
	}
	return strings.Join(parts, " + ")
}

// MarshalJSON encodes the metric as an object from base-metric name to
// weight.
func (m Metric) MarshalJSON() ([]byte, error) {
	w := make(map[string]float64, len(m.terms))
	for _, t := range m.terms {
		w[t.name] = t.weight
	}
	return json.Marshal(w)
}

// Map is a deterministic preprocessing step f from inputs measured by the
// base metric From to inputs measured by the base metric To, with
// Lipschitz constant (metric sensitivity, thesis Def. 2.9) Lipschitz:
// To(f(D), f(D′)) ≤ Lipschitz·From(D, D′).
type Map struct {
	Name      string
	From, To  string
	Lipschitz float64
}

// Pullback returns the guarantee of M∘f when M is m-private on f's outputs:
// (Lipschitz·m) measured in From (thesis Prop. A.3). Every base metric of
// m must be f's codomain metric To. A Lipschitz constant below one
// attenuates the loss, above one amplifies it; +Inf is allowed and makes
// the guarantee void for inputs at positive distance.
func (m Metric) Pullback(f Map) (Metric, error) {
	if !(f.Lipschitz >= 0) {
		return Metric{}, &param.Error{Name: "lipschitz", Value: f.Lipschitz, Why: "must be non-negative"}
	}
	w := 0.0
	for _, t := range m.terms {
		if t.name != f.To {
			return Metric{}, fmt.Errorf("accountant: map %q outputs %q inputs, but the mechanism is private in %q", f.Name, f.To, t.name)
		}
		w += t.weight
	}
	if w == 0 {
		return Metric{}, nil
	}
	return Metric{terms: []metricTerm{{f.From, w * f.Lipschitz}}}, nil
}

// PatternEpsilon is the thesis's adaptive-composition theorem with
// preprocessing (Thm. 4.1 and its granularity form at L1435, Thm. 4.10 for
// a common domain) in "change pattern" form. Mechanism i is εᵢ-DP for its
// own granularity; each pattern lists, for one kind of neighbouring step of
// the release, how many of mechanism i's neighbouring steps its input moves
// by: cᵢ = dᵢ(fᵢ(D), fᵢ(D′)), which may be +Inf. The composition is ε-DP with
// ε = max over patterns of Σᵢ cᵢ εᵢ. An infinite distance voids the
// guarantee even for an εᵢ = 0 mechanism (a bounded 0-DP mechanism says
// nothing about inputs of different sizes: Example 2.16), and the call
// returns a *NoGuaranteeError.
func PatternEpsilon(eps []float64, patterns [][]float64) (float64, error) {
	return patternCompose("pattern composition", eps, patterns, false)
}

// PatternMu is the Gaussian-DP counterpart of PatternEpsilon (thesis
// Thm. 4.16 and 4.18): μ = max over patterns of √(Σᵢ (cᵢ μᵢ)²).
func PatternMu(mus []float64, patterns [][]float64) (float64, error) {
	return patternCompose("Gaussian pattern composition", mus, patterns, true)
}

func patternCompose(rule string, params []float64, patterns [][]float64, gaussian bool) (float64, error) {
	for i, p := range params {
		if err := param.NonNegative(fmt.Sprintf("params[%d]", i), p); err != nil {
			return 0, err
		}
	}
	if len(patterns) == 0 {
		return 0, fmt.Errorf("accountant: %s needs at least one change pattern", rule)
	}
	best := 0.0
	for j, pat := range patterns {
		if len(pat) != len(params) {
			return 0, fmt.Errorf("accountant: pattern %d has %d entries for %d mechanisms", j, len(pat), len(params))
		}
		terms := make([]float64, len(pat))
		for i, c := range pat {
			if !(c >= 0) {
				return 0, &param.Error{Name: fmt.Sprintf("patterns[%d][%d]", j, i), Value: c, Why: "distance must be non-negative"}
			}
			if math.IsInf(c, 1) {
				return 0, &NoGuaranteeError{Rule: rule, Reason: fmt.Sprintf(
					"in pattern %d the input of mechanism %d moves by an infinite distance (its inputs are not connected), so no bound holds whatever its parameter (thesis Thm. 4.1, Example 2.16)", j, i)}
			}
			terms[i] = c * params[i]
		}
		var v float64
		if gaussian {
			v = l2(terms)
		} else {
			for _, t := range terms {
				v += t
			}
		}
		best = math.Max(best, v)
	}
	return best, nil
}

// Granularity is the neighbouring relation a DP guarantee refers to.
type Granularity int

const (
	// Unbounded neighbours differ by adding or removing one record.
	Unbounded Granularity = iota
	// Bounded neighbours have the same size and differ in one record.
	Bounded
)

func (g Granularity) String() string {
	switch g {
	case Unbounded:
		return "unbounded"
	case Bounded:
		return "bounded"
	}
	return "Granularity(" + strconv.Itoa(int(g)) + ")"
}

// PartitionKind says how records are split among parallel mechanisms.
type PartitionKind int

const (
	// ByValue assigns a record to a part by its value, as a grid of map
	// cells does with locations (thesis Example 4.5).
	ByValue PartitionKind = iota
	// ByIndex assigns a record by its identifier alone (user or trace id),
	// never by its value (thesis Prop. 4.7).
	ByIndex
)

func (p PartitionKind) String() string {
	switch p {
	case ByValue:
		return "by value"
	case ByIndex:
		return "by index"
	}
	return "PartitionKind(" + strconv.Itoa(int(p)) + ")"
}

// Parallel describes a parallel composition: mechanism i is run on part i
// of a partition of the records, and each is DP for Granularity.
type Parallel struct {
	Granularity Granularity
	Partition   PartitionKind
	// CommonDomain is true when every mechanism is defined on the whole
	// database and depends on it only through its own part (thesis
	// Def. 4.9), rather than being run on the part as a database of its own.
	CommonDomain bool
	// Adaptive is true when a mechanism may see earlier mechanisms'
	// outputs. Only the Gaussian rule for bounded DP over a value partition
	// needs independence (thesis Cor. 4.23).
	Adaptive bool
}

// Epsilon returns ε for the parallel composition of εᵢ-DP mechanisms:
//   - unbounded DP, or bounded DP with an index partition: max εᵢ
//     (Thm. 2.15, Thm. 4.6, Thm. 4.11, Prop. 4.7);
//   - bounded DP, value partition, common domain: the sum of the two
//     largest εᵢ, since replacing a record can move it between two parts
//     (Cor. 4.12);
//   - bounded DP, value partition, mechanisms run on the parts as separate
//     databases: no guarantee (*NoGuaranteeError; Example 2.16, Prop. A.12).
func (p Parallel) Epsilon(eps ...float64) (float64, error) {
	return p.compose(eps, false)
}

// Mu is the Gaussian-DP counterpart of Epsilon: max μᵢ (Thm. 4.21, 4.22);
// for bounded DP over a value partition on a common domain, the ℓ₂ norm of
// the two largest μᵢ when the mechanisms are independent (Cor. 4.23) and
// the sequential ‖μ‖₂ when they are adaptive (Cor. 4.17, which needs no
// independence).
func (p Parallel) Mu(mus ...float64) (float64, error) {
	return p.compose(mus, true)
}

func (p Parallel) compose(params []float64, gaussian bool) (float64, error) {
	if len(params) == 0 {
		return 0, fmt.Errorf("accountant: parallel composition of no mechanisms")
	}
	for i, x := range params {
		if err := param.NonNegative(fmt.Sprintf("params[%d]", i), x); err != nil {
			return 0, err
		}
	}
	if p.Granularity != Bounded && p.Granularity != Unbounded {
		return 0, fmt.Errorf("accountant: unknown granularity %v", p.Granularity)
	}
	if p.Partition != ByValue && p.Partition != ByIndex {
		return 0, fmt.Errorf("accountant: unknown partition kind %v", p.Partition)
	}
	sorted := append([]float64(nil), params...)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	if p.Granularity == Unbounded || p.Partition == ByIndex {
		return sorted[0], nil
	}
	if !p.CommonDomain {
		return 0, &NoGuaranteeError{
			Rule: "parallel composition of bounded-DP mechanisms over a value-based partition",
			Reason: "replacing one record can move it from one part to another, changing the parts' sizes; " +
				"bounded DP says nothing about inputs of different sizes, so the composed release can " +
				"reveal which part the record is in (thesis Example 2.16, Prop. A.12). Use unbounded DP, " +
				"an index-based partition, or mechanisms defined on the whole database (CommonDomain, Cor. 4.12)",
		}
	}
	top := sorted[:min(2, len(sorted))]
	switch {
	case !gaussian:
		s := 0.0
		for _, x := range top {
			s += x
		}
		return s, nil
	case p.Adaptive:
		return l2(params), nil
	default:
		return l2(top), nil
	}
}

// GroupEpsilon returns the pure-DP parameter for groups of k records, k·ε
// (thesis Prop. 2.3).
func GroupEpsilon(eps float64, k int) (float64, error) {
	if err := param.NonNegative("epsilon", eps); err != nil {
		return 0, err
	}
	if k < 1 {
		return 0, &param.Error{Name: "group_size", Value: float64(k), Why: "must be at least 1"}
	}
	return float64(k) * eps, nil
}

// GroupMu returns the Gaussian-DP parameter for groups of k records, k·μ
// (thesis Thm. 4.15).
func GroupMu(mu float64, k int) (float64, error) {
	if err := param.NonNegative("mu", mu); err != nil {
		return 0, err
	}
	if k < 1 {
		return 0, &param.Error{Name: "group_size", Value: float64(k), Why: "must be at least 1"}
	}
	return float64(k) * mu, nil
}

// GroupEpsilonDelta returns (kε, δ·Σ_{j<k} e^{jε}) for an (ε, δ)-DP
// mechanism and groups of k records. Chaining the DP inequality along k
// neighbouring steps gives exactly this δ; it is at most k·e^{(k−1)ε}·δ,
// the usual textbook form.
func GroupEpsilonDelta(eps, delta float64, k int) (float64, float64, error) {
	e, err := GroupEpsilon(eps, k)
	if err != nil {
		return 0, 0, err
	}
	if err := param.Probability("delta", delta); err != nil {
		return 0, 0, err
	}
	if delta == 0 {
		return e, 0, nil
	}
	// Σ_{j<k} e^{jε} = expm1(kε)/expm1(ε), or k when ε = 0.
	s := float64(k)
	if eps > 0 {
		s = math.Expm1(float64(k)*eps) / math.Expm1(eps)
	}
	return e, math.Min(1, delta*s), nil
}
