package trajdb

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// UtilityOptions sets up UtilityExperiment. Zero fields take the defaults
// given.
type UtilityOptions struct {
	// Bounds is the public contribution bounding of every mechanism.
	Bounds Bounds
	// Epsilons are the privacy parameters (default 0.5, 1 and 2).
	Epsilons []float64
	// Reps is the number of releases per mechanism and epsilon (default
	// 20); each is measured beside a uniform release of its own size.
	Reps int
	// Mechanisms builds the mechanisms compared (default
	// Chapter3Mechanisms: prefix and n-gram).
	Mechanisms func(Bounds) []Mechanism
	// Bounded compares with the bounded database (the mechanisms' input)
	// instead of every trajectory of the input.
	Bounded bool
	// Metrics configures Evaluate (Universe or Size must be set).
	Metrics MetricOptions
	// Src is the randomness; nil means crypto/rand.
	Src noise.Source
	// Progress, if set, is called after each release.
	Progress func(done, total int)
}

// UtilityRow is one mechanism at one epsilon: the mean metrics of its
// releases and of the uniform releases of the same sizes, and how often
// each metric of a release beat its paired uniform release.
type UtilityRow struct {
	Mechanism string   `json:"mechanism"`
	Epsilon   float64  `json:"epsilon"`
	Mean      *Metrics `json:"mean"`
	Uniform   *Metrics `json:"uniform"`
	// Wins is, per metric, the share of repetitions in which the release
	// was strictly better than its paired uniform release.
	Wins map[string]float64 `json:"wins"`
	// NotBetter lists the metrics whose mean is not strictly better than
	// the uniform mean; BeatsUniform is true when it is empty.
	NotBetter    []string `json:"not_better_than_uniform"`
	BeatsUniform bool     `json:"beats_uniform"`
	// EmptyReleases counts releases with no trajectory at all.
	EmptyReleases int `json:"empty_releases"`
}

// UtilityResult is the outcome of UtilityExperiment.
type UtilityResult struct {
	Version int    `json:"version"`
	Bounds  Bounds `json:"bounds"`
	// Persons and Real describe the input (evaluation data: not private).
	Persons    int          `json:"persons"`
	Real       int          `json:"real_sequences"`
	Against    string       `json:"against"`
	Reps       int          `json:"reps"`
	NonPrivate *Metrics     `json:"non_private"`
	Rows       []UtilityRow `json:"rows"`
	Randomness string       `json:"randomness"`
}

// UtilityExperiment releases db with each mechanism at each epsilon Reps
// times and measures every release, a uniform release of the same size,
// and the non-private release (db after the bounds) against the real
// database: the comparison the exploration-tree papers and AdaTrace make,
// with the floor and the ceiling beside the mechanisms.
func UtilityExperiment(db *DB, opt UtilityOptions) (*UtilityResult, error) {
	if db == nil || len(db.Users) == 0 {
		return nil, errors.New("trajdb: utility experiment: empty database")
	}
	if opt.Epsilons == nil {
		opt.Epsilons = []float64{0.5, 1, 2}
	}
	for _, e := range opt.Epsilons {
		if !(e > 0) || math.IsInf(e, 1) {
			return nil, fmt.Errorf("trajdb: utility experiment: epsilon must be positive and finite, got %v", e)
		}
	}
	if opt.Reps == 0 {
		opt.Reps = 20
	}
	if opt.Reps < 0 {
		return nil, fmt.Errorf("trajdb: utility experiment: reps must be positive, got %d", opt.Reps)
	}
	if opt.Mechanisms == nil {
		opt.Mechanisms = Chapter3Mechanisms
	}
	bd, err := Bound(db, opt.Bounds)
	if err != nil {
		return nil, err
	}
	real, bounded := db.Sequences(), bd.Sequences()
	res := &UtilityResult{Version: 1, Bounds: opt.Bounds, Persons: len(db.Users), Against: "all", Reps: opt.Reps, Randomness: describeSource(opt.Src)}
	if opt.Bounded {
		real, res.Against = bounded, "bounded"
	}
	res.Real = len(real)
	if res.NonPrivate, err = Evaluate(real, bounded, opt.Metrics); err != nil {
		return nil, err
	}
	mechs := opt.Mechanisms(opt.Bounds)
	total, done := len(mechs)*len(opt.Epsilons)*opt.Reps, 0
	for _, m := range mechs {
		for _, eps := range opt.Epsilons {
			src := noise.Derive(opt.Src, fmt.Sprintf("utility/%s/%g", m.Name(), eps))
			row := UtilityRow{Mechanism: m.Name(), Epsilon: eps, Wins: map[string]float64{}}
			var ms, us []*Metrics
			for range opt.Reps {
				rel, err := m.Release(bd, eps, src)
				if err != nil {
					return nil, err
				}
				if len(rel.Seqs) == 0 {
					row.EmptyReleases++
				}
				uni, err := UniformBaseline(SeqDB(db.Size, rel.Seqs), opt.Bounds.MaxLen, src)
				if err != nil {
					return nil, err
				}
				mm, err := Evaluate(real, rel.Seqs, opt.Metrics)
				if err != nil {
					return nil, err
				}
				mu, err := Evaluate(real, uni, opt.Metrics)
				if err != nil {
					return nil, err
				}
				lost := map[string]bool{}
				for _, k := range mm.NotBetter(mu) {
					lost[k] = true
				}
				for _, sc := range mm.Scores() {
					if !lost[sc.Name] {
						row.Wins[sc.Name] += 1 / float64(opt.Reps)
					}
				}
				ms, us = append(ms, mm), append(us, mu)
				done++
				if opt.Progress != nil {
					opt.Progress(done, total)
				}
			}
			row.Mean, row.Uniform = MeanMetrics(ms), MeanMetrics(us)
			row.NotBetter = row.Mean.NotBetter(row.Uniform)
			if row.NotBetter == nil {
				row.NotBetter = []string{}
			}
			row.BeatsUniform = len(row.NotBetter) == 0
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}
