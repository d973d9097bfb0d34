package attack

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// DefaultSelectKernels are the kernels the model-selection adversary
// tries by default.
var DefaultSelectKernels = []string{gp.KernelRBF, gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}

// selectGrid is the number of log-spaced lengthscales the model-selection
// adversary tries per kernel before refining: its range spans several
// decades, wider than a certified family's.
const selectGrid = 8

// Selection is the outcome of the truth-free model-selection adversary on
// one person: an adversary that does not know the prior family. For each
// kernel it fits the lengthscale (from the median sampling interval to the
// window's duration) and the variance to the release alone by restricted
// likelihood under the public noise covariance, exactly as the class
// adversary does within its family; it keeps the kernel whose restricted
// likelihood, summed over windows and both dimensions, is highest (the
// kernels have the same number of hyperparameters and the same mean
// model, so the likelihoods compare directly) and reconstructs with it.
type Selection struct {
	// Kernel is the chosen kernel; East and North the fits of its first
	// window.
	Kernel string `json:"kernel"`
	East   Fit    `json:"east"`
	North  Fit    `json:"north"`
	// RMSE and Median are the reconstruction's planar error at the secret
	// points (metres), beside the class adversary's rmse_m.
	RMSE   float64 `json:"rmse_m"`
	Median float64 `json:"median_m"`
	// Candidates lists every kernel tried.
	Candidates []KernelCandidate `json:"candidates"`
}

// KernelCandidate is one kernel the model-selection adversary tried.
type KernelCandidate struct {
	Kernel string `json:"kernel"`
	// LogLikelihood is the restricted log likelihood of the release at the
	// kernel's best hyperparameters, summed over windows and dimensions:
	// what the choice is made on.
	LogLikelihood float64 `json:"log_likelihood"`
	// RMSE is the planar RMSE of this kernel's reconstruction at the
	// secret points (uses the truth; for evaluation only).
	RMSE float64 `json:"rmse_m"`
}

// selectionFamily is the model-selection adversary's range for one
// window: kernel at any variance, lengthscales from the median positive
// sampling interval (at least 1 s) to the window's duration (at least ten
// times that).
func selectionFamily(kernel string, ts []float64) prior.Family {
	var dt []float64
	for i := 1; i < len(ts); i++ {
		if d := ts[i] - ts[i-1]; d > 0 {
			dt = append(dt, d)
		}
	}
	lo := 1.0
	if len(dt) > 0 {
		slices.Sort(dt)
		lo = math.Max(lo, dt[len(dt)/2])
	}
	hi := lo * 10
	if len(ts) > 1 {
		hi = math.Max(hi, ts[len(ts)-1]-ts[0])
	}
	return prior.Family{Kernel: kernel, LengthscaleMin: lo, LengthscaleMax: hi}
}

// selectModel runs the model-selection adversary over kernels on one
// person; the person's adversary supplies the nugget, mean model, guard
// and dense window.
func (p *person) selectModel(kernels []string, pr *progress) (*Selection, error) {
	adv := p.adv
	var best *Selection
	bestLL := math.Inf(-1)
	var cands []KernelCandidate
	for _, k := range kernels {
		est, ll, err := p.reconstruct(func(wts []float64) Adversary {
			a := adv
			a.Family, a.Variance, a.Grid = selectionFamily(k, wts), 0, selectGrid
			return a
		}, pr, "model selection "+k)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k, err)
		}
		rep, err := score(p.truthP, p.relP, est, p.secretPts, p.cert.RadiusM)
		if err != nil {
			return nil, err
		}
		cands = append(cands, KernelCandidate{Kernel: k, LogLikelihood: ll, RMSE: rep.ReconstructedRMSE})
		if ll > bestLL || best == nil {
			bestLL = ll
			best = &Selection{Kernel: k, East: est[0].Fit, North: est[1].Fit, RMSE: rep.ReconstructedRMSE, Median: rep.ReconstructedMedian}
		}
	}
	best.Candidates = cands
	return best, nil
}
