// The utility of the trajectory-database releases against uniform and
// non-private ones, and the synthetic populations it can be measured on.

package repro

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trajdb"
)

// TrajDBUtilityOptions sets up TrajDBUtility. Zero fields take the defaults
// given.
type TrajDBUtilityOptions struct {
	// Bounds is the public contribution bounding of every mechanism.
	Bounds trajdb.Bounds
	// Epsilons are the privacy parameters (default 0.5, 1 and 2).
	Epsilons []float64
	// Reps is the number of releases per mechanism and epsilon (default
	// 20); each is measured beside a uniform release of its own size.
	Reps int
	// Mechanisms builds the mechanisms compared (default
	// Chapter3Mechanisms: prefix and n-gram).
	Mechanisms func(trajdb.Bounds) []trajdb.Mechanism
	// Bounded compares with the bounded database (the mechanisms' input)
	// instead of every trajectory of the input.
	Bounded bool
	// Metrics configures trajdb.Evaluate (Universe or Size must be set).
	Metrics trajdb.MetricOptions
	// Src is the randomness; nil means crypto/rand.
	Src noise.Source
	// Progress, if set, is called after each release.
	Progress func(done, total int)
}

// TrajDBUtilityRow is one mechanism at one epsilon: the mean metrics of its
// releases and of the uniform releases of the same sizes, and how often
// each metric of a release beat its paired uniform release.
type TrajDBUtilityRow struct {
	Mechanism trajdb.MechanismName `json:"mechanism"`
	Epsilon   float64              `json:"epsilon"`
	Mean      *trajdb.Metrics      `json:"mean"`
	Uniform   *trajdb.Metrics      `json:"uniform"`
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

// TrajDBUtilityResult is the outcome of TrajDBUtility.
type TrajDBUtilityResult struct {
	Version int           `json:"version"`
	Bounds  trajdb.Bounds `json:"bounds"`
	// Persons and Real describe the input (evaluation data: not private).
	Persons    int                `json:"persons"`
	Real       int                `json:"real_sequences"`
	Against    string             `json:"against"`
	Reps       int                `json:"reps"`
	NonPrivate *trajdb.Metrics    `json:"non_private"`
	Rows       []TrajDBUtilityRow `json:"rows"`
	Randomness string             `json:"randomness"`
}

// TrajDBUtility releases db with each mechanism at each epsilon Reps
// times and measures every release, a uniform release of the same size,
// and the non-private release (db after the bounds) against the real
// database: the comparison the exploration-tree papers and AdaTrace make,
// with the floor and the ceiling beside the mechanisms.
func TrajDBUtility(db *trajdb.DB, opt TrajDBUtilityOptions) (*TrajDBUtilityResult, error) {
	if db == nil || len(db.Users) == 0 {
		return nil, errors.New("repro: trajdb utility: empty database")
	}
	if opt.Epsilons == nil {
		opt.Epsilons = []float64{0.5, 1, 2}
	}
	for _, e := range opt.Epsilons {
		if !(e > 0) || math.IsInf(e, 1) {
			return nil, fmt.Errorf("repro: trajdb utility: epsilon must be positive and finite, got %v", e)
		}
	}
	if opt.Reps == 0 {
		opt.Reps = 20
	}
	if opt.Reps < 0 {
		return nil, fmt.Errorf("repro: trajdb utility: reps must be positive, got %d", opt.Reps)
	}
	if opt.Mechanisms == nil {
		opt.Mechanisms = Chapter3Mechanisms
	}
	bd, err := trajdb.Bound(db, opt.Bounds)
	if err != nil {
		return nil, err
	}
	real, bounded := db.Sequences(), bd.Sequences()
	res := &TrajDBUtilityResult{Version: 1, Bounds: opt.Bounds, Persons: len(db.Users), Against: "all", Reps: opt.Reps, Randomness: randomness(opt.Src)}
	if opt.Bounded {
		real, res.Against = bounded, "bounded"
	}
	res.Real = len(real)
	if res.NonPrivate, err = trajdb.Evaluate(real, bounded, opt.Metrics); err != nil {
		return nil, err
	}
	mechs := opt.Mechanisms(opt.Bounds)
	total, done := len(mechs)*len(opt.Epsilons)*opt.Reps, 0
	for _, m := range mechs {
		for _, eps := range opt.Epsilons {
			src := noise.Derive(opt.Src, fmt.Sprintf("utility/%s/%g", m.Name(), eps))
			row := TrajDBUtilityRow{Mechanism: m.Name(), Epsilon: eps, Wins: map[string]float64{}}
			var ms, us []*trajdb.Metrics
			for range opt.Reps {
				rel, err := m.Synthesize(bd, eps, src)
				if err != nil {
					return nil, err
				}
				if len(rel.Seqs) == 0 {
					row.EmptyReleases++
				}
				uni, err := trajdb.UniformSequences(len(rel.Seqs), db.Size, opt.Bounds.MaxLen, src)
				if err != nil {
					return nil, err
				}
				mm, err := trajdb.Evaluate(real, rel.Seqs, opt.Metrics)
				if err != nil {
					return nil, err
				}
				mu, err := trajdb.Evaluate(real, uni, opt.Metrics)
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
			row.Mean, row.Uniform = trajdb.MeanMetrics(ms), trajdb.MeanMetrics(us)
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

// MarkovPopulation returns a synthetic database of persons people with
// seqsPerPerson sequences each, drawn from the first-order Markov chain of
// db's sequences: the empirical distribution of first symbols, of
// transitions, and of stopping after each symbol. It is for evaluation
// only (it copies db's structure without any privacy): a corpus with the
// spatial structure of a small real one and a population large enough for
// user-level DP to leave signal. Person i is "m<i>".
func MarkovPopulation(db *trajdb.DB, persons, seqsPerPerson int, src noise.Source) (*trajdb.DB, error) {
	if persons < 1 || seqsPerPerson < 1 {
		return nil, fmt.Errorf("repro: markov population: want persons and sequences per person >= 1, got %d and %d", persons, seqsPerPerson)
	}
	n := db.Size
	start := make([]float64, n)
	// next[x][y] counts x→y, stop[x] the sequences ending at x.
	next := make([]map[int]float64, n)
	stop := make([]float64, n)
	seen := false
	for _, s := range db.Sequences() {
		if len(s) == 0 {
			continue
		}
		seen = true
		start[s[0]]++
		for i := 1; i < len(s); i++ {
			if next[s[i-1]] == nil {
				next[s[i-1]] = map[int]float64{}
			}
			next[s[i-1]][s[i]]++
		}
		stop[s[len(s)-1]]++
	}
	if !seen {
		return nil, errors.New("repro: markov population: no sequences to learn from")
	}
	// Each symbol's outcomes: the stop (-1) then its successors in a fixed
	// order, so that a seeded population is reproducible.
	type outcome struct {
		sym int
		w   float64
	}
	outs := make([][]outcome, n)
	for x := range n {
		outs[x] = append(outs[x], outcome{-1, stop[x]})
		for y := range n {
			if w := next[x][y]; w > 0 {
				outs[x] = append(outs[x], outcome{y, w})
			}
		}
	}
	pick := func(o []outcome) int {
		var tot float64
		for _, e := range o {
			tot += e.w
		}
		u := noise.Uniform(src) * tot
		for _, e := range o {
			if u < e.w {
				return e.sym
			}
			u -= e.w
		}
		return o[len(o)-1].sym
	}
	starts := make([]outcome, 0, n)
	for x, w := range start {
		if w > 0 {
			starts = append(starts, outcome{x, w})
		}
	}
	const maxSteps = 1000 // a cycle-free bound on a sampled sequence
	out := &trajdb.DB{Size: n, Users: make([]trajdb.User, persons)}
	for p := range persons {
		u := trajdb.User{ID: "m" + strconv.Itoa(p), Seqs: make([][]int, seqsPerPerson)}
		for k := range seqsPerPerson {
			s := []int{pick(starts)}
			for len(s) < maxSteps {
				y := pick(outs[s[len(s)-1]])
				if y < 0 {
					break
				}
				s = append(s, y)
			}
			u.Seqs[k] = s
		}
		out.Users[p] = u
	}
	return out, nil
}
