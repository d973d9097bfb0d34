package bdp

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
)

// ClippedSum is the query of the thesis's utility experiments (Sec. 6.5.2):
// the sum of the records clipped to [Lo, Hi] (Def 6.12). Its sensitivity
// under bounded DP is Hi − Lo (Lemma 6.13); a count of binary records is
// the case [0, 1].
type ClippedSum struct{ Lo, Hi float64 }

// Sensitivity is Hi − Lo.
func (c ClippedSum) Sensitivity() float64 { return c.Hi - c.Lo }

// Eval returns the clipped sum.
func (c ClippedSum) Eval(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += math.Max(c.Lo, math.Min(c.Hi, v))
	}
	return s
}

// ExperimentLaplace is the Laplace sampler the experiment harness uses to
// measure utility. It is inverse-CDF sampling over float64 and is NOT a
// hardened release mechanism (see the noise package for that); utility
// measurements do not depend on the difference.
func ExperimentLaplace(b float64, src noise.Source) float64 {
	u := uniform01(src) - 0.5
	if u < 0 {
		return b * math.Log1p(2*u)
	}
	return -b * math.Log1p(-2*u)
}

// Experiment is the utility experiment of Sec. 6.5: a clipped-sum query
// released with Laplace noise at τ = ε/factor for each calibrator and each
// target ε, repeated Reps times.
type Experiment struct {
	Data     []float64
	Query    ClippedSum
	Epsilons []float64
	// Models are the correlation models to compare; the DP baseline
	// (τ = ε, no protection against correlation) is always added first.
	Models []Calibrator
	Reps   int
	// Beta is the accuracy level; 0 means 0.05 (the thesis's 95 % bound).
	Beta float64
	Src  noise.Source
	// Laplace samples Lap(b); nil means ExperimentLaplace.
	Laplace func(b float64, src noise.Source) float64
}

// ExperimentRow is one (model, ε) cell of an experiment.
type ExperimentRow struct {
	Model   string  `json:"model"`
	Epsilon float64 `json:"epsilon"`
	Tau     float64 `json:"tau,omitempty"`
	Factor  float64 `json:"factor,omitempty"`
	// AlphaTheory is ln(1/β)·Δ/τ; AlphaEmpirical the empirical (1−β)
	// quantile of |released − true| over the repetitions.
	AlphaTheory    float64 `json:"alpha_theory,omitempty"`
	AlphaEmpirical float64 `json:"alpha_empirical,omitempty"`
	// MAPE is the mean absolute percentage error; omitted when the true
	// answer is 0.
	MAPE *float64 `json:"mape,omitempty"`
	// Skipped says why a model gives no budget at this ε (e.g. below the
	// Markov floor).
	Skipped string `json:"skipped,omitempty"`
}

type dpBaseline struct{}

func (dpBaseline) Name() string                         { return "dp" }
func (dpBaseline) Tau(eps float64) (float64, error)     { return eps, checkEpsilon(eps) }
func (dpBaseline) Leakage(tau float64) (float64, error) { return tau, checkTau(tau) }

// Run performs the experiment. Errors are measured against the clipped true
// sum, so clipping bias does not enter the comparison with theory.
func (e Experiment) Run() ([]ExperimentRow, error) {
	if len(e.Data) == 0 {
		return nil, fmt.Errorf("bdp: experiment has no data")
	}
	if !(e.Query.Hi > e.Query.Lo) {
		return nil, fmt.Errorf("bdp: clipping interval [%v, %v] is empty", e.Query.Lo, e.Query.Hi)
	}
	if len(e.Epsilons) == 0 {
		return nil, fmt.Errorf("bdp: experiment has no target epsilons")
	}
	if err := param.AtLeastInt("Reps", e.Reps, 1); err != nil {
		return nil, err
	}
	beta := e.Beta
	if beta == 0 {
		beta = 0.05
	}
	src := e.Src
	if src == nil {
		src = noise.Secure()
	}
	lap := e.Laplace
	if lap == nil {
		lap = ExperimentLaplace
	}
	truth := e.Query.Eval(e.Data)
	sens := e.Query.Sensitivity()
	models := append([]Calibrator{dpBaseline{}}, e.Models...)
	errs := make([]float64, e.Reps)
	var rows []ExperimentRow
	for _, eps := range e.Epsilons {
		for _, m := range models {
			row := ExperimentRow{Model: m.Name(), Epsilon: eps}
			tau, err := m.Tau(eps)
			if err != nil {
				row.Skipped = err.Error()
				rows = append(rows, row)
				continue
			}
			row.Tau, row.Factor = tau, eps/tau
			row.AlphaTheory, err = LaplaceAlpha(beta, sens, tau)
			if err != nil {
				return nil, err
			}
			b := sens / tau
			sumAbs := 0.0
			for r := range errs {
				errs[r] = math.Abs(lap(b, src))
				sumAbs += errs[r]
			}
			slices.Sort(errs)
			row.AlphaEmpirical = errs[int(math.Ceil((1-beta)*float64(e.Reps)))-1]
			if truth != 0 {
				v := 100 * sumAbs / float64(e.Reps) / math.Abs(truth)
				row.MAPE = &v
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}
