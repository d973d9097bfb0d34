package risk

import (
	"errors"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
)

// A Sampler runs a mechanism with a real-valued output on the dataset whose
// target record is candidate `secret` (0 ≤ secret < M), drawing all its
// randomness from src.
type Sampler func(secret int, src noise.Source) float64

// A DiscreteSampler is a Sampler for mechanisms with integer outputs (GRR,
// subset or bit-vector encodings mapped to integers, histograms, …).
type DiscreteSampler func(secret int, src noise.Source) int

// Auditor estimates the reconstruction advantage that an attack achieves
// against a mechanism, under a uniform prior over M candidate secrets,
// aux = {∅} and η = 0: the setting of the thesis's LDP audits (Sec. 5.4).
//
// Each evaluation trial draws the secret uniformly at random (from Src), runs
// the mechanism and the attack, and counts a success when the guess is the
// secret. The successes are then exactly Binomial(Trials, ReRo), so the
// Clopper–Pearson interval on ReRo is exact (conservative); RAD is
// ReRo − 1/M, because any guess matches an independent uniform secret with
// probability 1/M (the thesis's analytic correction term).
//
// Attacks learned from data (Continuous, Discrete) are fitted on separate
// training runs, so the evaluation is unbiased for the fitted attack; the
// fitted attack is some attack, so its RAD is a valid lower estimate of the
// mechanism's RAD, and approaches the Bayes attack's as TrainTrials grows.
type Auditor struct {
	// M is the number of candidate secrets (at least 2).
	M int
	// Trials is the number of evaluation runs.
	Trials int
	// TrainTrials is the number of runs per candidate used to fit a learned
	// attack; 0 means max(Trials/M, 1000).
	TrainTrials int
	// Bins is the number of histogram bins for continuous outputs; 0 means
	// a default from the training-set size.
	Bins int
	// Confidence is the two-sided level of the interval; 0 means 0.95.
	Confidence float64
	// Src is the randomness for the mechanism and the secrets; nil means
	// noise.Secure().
	Src noise.Source
	// Progress, if set, is called with the number of runs just completed.
	Progress func(n int)
}

// AuditResult is what an audit measured. All rates are per evaluation trial.
type AuditResult struct {
	M          int     `json:"m"`
	Trials     int     `json:"trials"`
	Successes  int     `json:"successes"`
	ReRo       float64 `json:"rero"`
	RAD        float64 `json:"rad"`
	RADLower   float64 `json:"rad_lower"`
	RADUpper   float64 `json:"rad_upper"`
	Confidence float64 `json:"confidence"`
	Interval   string  `json:"interval"`
	Attack     string  `json:"attack"`
}

// EpsilonLower is the ε lower bound implied by the audit through Eq. (5.60)
// (any ε-DP mechanism, uniform prior on M): the point estimate from the
// measured RAD and the conservative one from the lower confidence limit.
func (r AuditResult) EpsilonLower() (point, conservative float64, err error) {
	point, err = EpsilonFromRAD(r.RAD, r.M)
	if err != nil && !errors.Is(err, ErrNotInvertible) {
		return 0, 0, err
	}
	conservative, err2 := EpsilonFromRAD(r.RADLower, r.M)
	if err2 != nil {
		return point, conservative, err2
	}
	return point, conservative, err
}

func (a *Auditor) init() error {
	if err := param.First(param.AtLeastInt("M", a.M, 2), param.AtLeastInt("Trials", a.Trials, 1),
		param.AtLeastInt("TrainTrials", a.TrainTrials, 0)); err != nil {
		return err
	}
	if a.TrainTrials == 0 {
		a.TrainTrials = max(a.Trials/a.M, 1000)
	}
	if a.Confidence == 0 {
		a.Confidence = 0.95
	}
	if err := param.InOpen("Confidence", a.Confidence, 0, 1); err != nil {
		return err
	}
	if a.Src == nil {
		a.Src = noise.Secure()
	}
	return nil
}

func (a *Auditor) progress(n int) {
	if a.Progress != nil {
		a.Progress(n)
	}
}

// Attack audits a fixed attack: guess maps an output to a candidate. Use it
// when the likelihood is known, e.g. the Bayes (MAP) attack, whose success
// rate converges to Theorem 5.3's exact RAD.
func (a Auditor) Attack(s Sampler, guess func(theta float64) int) (AuditResult, error) {
	if err := a.init(); err != nil {
		return AuditResult{}, err
	}
	if s == nil || guess == nil {
		return AuditResult{}, errorf("audit needs a sampler and an attack")
	}
	return a.evaluate("given", func() bool {
		x := uniformInt(a.Src, a.M)
		return guess(s(x, a.Src)) == x
	})
}

func (a *Auditor) evaluate(attack string, trial func() bool) (AuditResult, error) {
	succ := 0
	const chunk = 1024
	for i := 0; i < a.Trials; i++ {
		if trial() {
			succ++
		}
		if (i+1)%chunk == 0 {
			a.progress(chunk)
		}
	}
	a.progress(a.Trials % chunk)
	lo, hi := ClopperPearson(succ, a.Trials, a.Confidence)
	base := 1 / float64(a.M)
	rero := float64(succ) / float64(a.Trials)
	return AuditResult{
		M: a.M, Trials: a.Trials, Successes: succ,
		ReRo: rero, RAD: rero - base, RADLower: lo - base, RADUpper: hi - base,
		Confidence: a.Confidence, Interval: "clopper-pearson", Attack: attack,
	}, nil
}

// Discrete audits a mechanism with integer outputs with the empirical Bayes
// attack: from TrainTrials runs per candidate it estimates p(θ|x) by counts
// and guesses argmax_x count(θ, x) (Algorithm 1 with a uniform prior);
// outputs never seen in training get a uniformly random guess.
func (a Auditor) Discrete(s DiscreteSampler) (AuditResult, error) {
	if err := a.init(); err != nil {
		return AuditResult{}, err
	}
	if s == nil {
		return AuditResult{}, errorf("audit needs a sampler")
	}
	counts := map[int][]int{}
	for x := range a.M {
		for range a.TrainTrials {
			t := s(x, a.Src)
			c := counts[t]
			if c == nil {
				c = make([]int, a.M)
				counts[t] = c
			}
			c[x]++
		}
		a.progress(a.TrainTrials)
	}
	rule := make(map[int]int, len(counts))
	for t, c := range counts {
		rule[t] = argmaxRandom(c, a.Src)
	}
	return a.evaluate("empirical-map", func() bool {
		x := uniformInt(a.Src, a.M)
		g, ok := rule[s(x, a.Src)]
		if !ok {
			g = uniformInt(a.Src, a.M)
		}
		return g == x
	})
}

// Continuous audits a mechanism with real outputs with an empirical Bayes
// attack on a histogram: bin edges are the quantiles of the pooled training
// outputs (equal-mass bins), and each bin guesses the candidate seen most
// often in it. With enough training data and bins it approaches the Bayes
// attack for the mechanism's likelihood.
func (a Auditor) Continuous(s Sampler) (AuditResult, error) {
	if err := a.init(); err != nil {
		return AuditResult{}, err
	}
	if s == nil {
		return AuditResult{}, errorf("audit needs a sampler")
	}
	n := a.TrainTrials * a.M
	outs := make([]float64, n)
	who := make([]int, n)
	for x := range a.M {
		for j := range a.TrainTrials {
			v := s(x, a.Src)
			if math.IsNaN(v) {
				return AuditResult{}, errorf("sampler returned NaN for secret %d", x)
			}
			outs[x*a.TrainTrials+j], who[x*a.TrainTrials+j] = v, x
		}
		a.progress(a.TrainTrials)
	}
	bins := a.Bins
	if bins <= 0 {
		// Enough bins to resolve the decision boundaries, with on average
		// at least ~50 training points per bin and candidate.
		bins = min(max(4*a.M, int(math.Sqrt(float64(n)))), max(n/(50*a.M), 2*a.M), 4096)
	}
	sorted := slices.Clone(outs)
	slices.Sort(sorted)
	edges := make([]float64, 0, bins-1)
	for k := 1; k < bins; k++ {
		e := sorted[k*n/bins]
		if len(edges) == 0 || e > edges[len(edges)-1] {
			edges = append(edges, e)
		}
	}
	bin := func(v float64) int {
		i, _ := slices.BinarySearch(edges, v)
		return i
	}
	counts := make([][]int, len(edges)+1)
	for i := range counts {
		counts[i] = make([]int, a.M)
	}
	for i, v := range outs {
		counts[bin(v)][who[i]]++
	}
	rule := make([]int, len(counts))
	for i, c := range counts {
		rule[i] = argmaxRandom(c, a.Src)
	}
	return a.evaluate("histogram-map", func() bool {
		x := uniformInt(a.Src, a.M)
		return rule[bin(s(x, a.Src))] == x
	})
}
