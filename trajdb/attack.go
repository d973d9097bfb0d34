package trajdb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tracepriv/tracepriv/internal/stats"
	"github.com/tracepriv/tracepriv/noise"
)

// QIAttack is the quasi-identifier attack the thesis describes after
// Proposition 3.5 (Sec. 3.4.1.4): an attacker who knows a victim's home and
// work cells looks, in a released trajectory database, for the sequences
// that visit home and later work, and reads the rest of the victim's path
// off the most frequent of them (ties go to the lexicographically first). ok is false when no released sequence matches. It is a
// post-processing of the release, so a DP release bounds its success.
func QIAttack(released [][]int, home, work int) (guess []int, ok bool) {
	count := map[string]int{}
	for _, s := range released {
		if qiMatch(s, home, work) {
			count[Key(s)]++
		}
	}
	best, bestN := "", 0
	for k, n := range count {
		if n > bestN || (n == bestN && slices.Compare(FromKey(k), FromKey(best)) < 0) {
			best, bestN = k, n
		}
	}
	if bestN == 0 {
		return nil, false
	}
	return FromKey(best), true
}

// qiMatch reports whether s visits home and, at some later position, work.
func qiMatch(s []int, home, work int) bool {
	i := slices.Index(s, home)
	return i >= 0 && slices.Contains(s[i+1:], work)
}

// qiCellsRecovered is the fraction of the victim's cells other than home
// and work that the guess visits.
func qiCellsRecovered(victim, guess []int) float64 {
	home, work := victim[0], victim[len(victim)-1]
	rest := map[int]bool{}
	for _, x := range victim {
		if x != home && x != work {
			rest[x] = true
		}
	}
	if len(rest) == 0 {
		return 0
	}
	hit := 0
	for x := range rest {
		if slices.Contains(guess, x) {
			hit++
		}
	}
	return float64(hit) / float64(len(rest))
}

// QIAttackOptions sets up MeasureQIAttack. Zero fields take the defaults
// given.
type QIAttackOptions struct {
	// Epsilon is the privacy parameter the mechanism runs at.
	Epsilon float64
	// Victims is how many people are attacked (default 50, or every
	// eligible person if fewer): people whose first sequence, after
	// bounding, has at least one cell besides its first (home) and last
	// (work). They are drawn at random from Src.
	Victims int
	// Draws is the number of releases per victim with and without the
	// victim (default 20).
	Draws int
	// Confidence is the joint level of the two Clopper-Pearson intervals
	// (default 0.95).
	Confidence float64
	// Src is the randomness; nil means crypto/rand.
	Src noise.Source
	// Progress, if set, is called with the number of releases just drawn.
	Progress func(releases int)
}

// QIAttackReport measures QIAttack against a mechanism as the thesis's
// attribute advantage (Def. 2.17): the attack's success on releases of D,
// which holds the victim (the true-positive rate), against its success on
// releases of D without the victim (the false-positive rate: what the
// attacker would "recover" from the rest of the data and the noise alone).
// An epsilon-DP release (user level) gives, for every victim and so on
// average over any set of victims chosen before the releases,
// TPR <= e^eps·FPR and 1-TPR >= e^-eps·(1-FPR), hence
// Advantage <= min((e^eps-1)·FPR, (1-e^-eps)·(1-FPR)) <= (e^eps-1)/(e^eps+1),
// the last being the thesis's Eq. 2.2 at delta = 0.
//
// The rates are given over all victims and over those whose path nobody
// else in D holds (UniquePath): averaging over victims whose path others
// share dilutes a leak that is total for the unique ones, since a
// present-only release then shows their path whether they are in D or not.
type QIAttackReport struct {
	Version   int           `json:"version"`
	Mechanism MechanismName `json:"mechanism"`
	Epsilon   float64       `json:"epsilon"`
	Persons   int           `json:"persons"`
	// Draws is the number of releases per victim and side.
	Draws      int           `json:"draws"`
	All        QIAttackRates `json:"all"`
	UniquePath QIAttackRates `json:"unique_path"`
	// AdvantageBoundPriorFree = (e^eps-1)/(e^eps+1) is the largest
	// advantage epsilon-DP allows at any FPR.
	AdvantageBoundPriorFree float64 `json:"advantage_bound_prior_free"`
	// ExceedsDP is true when either group's rates refute epsilon.
	ExceedsDP bool `json:"exceeds_dp_bound"`
	// Confidence is the joint level of the four Clopper-Pearson intervals
	// (TPR and FPR of both groups), counting the trials as independent
	// Bernoulli draws with victim-dependent rates, for which
	// Clopper-Pearson is the usual, slightly conservative, approximation.
	Confidence float64 `json:"confidence"`
	Randomness string  `json:"randomness"`
}

// QIAttackRates are the attack's rates over a group of victims.
type QIAttackRates struct {
	Victims int `json:"victims"`
	// Trials = Victims·Draws per side.
	Trials int `json:"trials"`
	// ExactWith (TPR) and ExactWithout (FPR): the fraction of releases
	// from which the attack recovered the victim's whole path, with
	// Clopper-Pearson intervals.
	ExactWith      float64    `json:"exact_with_victim"`
	ExactWithout   float64    `json:"exact_without_victim"`
	ExactWithCI    [2]float64 `json:"exact_with_victim_ci"`
	ExactWithoutCI [2]float64 `json:"exact_without_victim_ci"`
	// CellsWith and CellsWithout: the mean fraction of the victim's cells
	// other than home and work that the guess visits (0 when no guess).
	CellsWith    float64 `json:"cells_with_victim"`
	CellsWithout float64 `json:"cells_without_victim"`
	// MatchWith and MatchWithout: the fraction of releases holding at
	// least one sequence that matches the quasi-identifier.
	MatchWith    float64 `json:"qi_match_with_victim"`
	MatchWithout float64 `json:"qi_match_without_victim"`
	// PathWith and PathWithout: the fraction of releases that contain the
	// victim's exact path (the event of Proposition 3.5).
	PathWith    float64 `json:"path_released_with_victim"`
	PathWithout float64 `json:"path_released_without_victim"`
	// Advantage = ExactWith - ExactWithout, and AdvantageBound the most an
	// epsilon-DP release allows at the measured ExactWithout;
	// CellsAdvantage and CellsAdvantageBound are the same for the
	// recovered-cells score (a [0,1]-valued post-processing obeys the same
	// inequalities).
	Advantage           float64 `json:"advantage"`
	AdvantageBound      float64 `json:"advantage_bound"`
	CellsAdvantage      float64 `json:"cells_advantage"`
	CellsAdvantageBound float64 `json:"cells_advantage_bound"`
	// EpsilonLower is the privacy loss the attack proves at the report's
	// confidence: the larger of ln(TPR_lo/FPR_hi) and
	// ln((1-FPR_hi)/(1-TPR_lo)) (0 if neither is positive), from the two
	// inequalities above at the ends of the intervals. ExceedsDP is
	// EpsilonLower > epsilon: TPR's lower confidence bound exceeds the
	// largest TPR that epsilon-DP allows at FPR's upper one, and the
	// releases refute the mechanism's epsilon.
	EpsilonLower float64 `json:"epsilon_lower"`
	ExceedsDP    bool    `json:"exceeds_dp_bound"`
}

// qiTally accumulates one side (with or without the victim) of a group.
type qiTally struct {
	exact, match, path int
	cells              float64
}

func (r *QIAttackRates) finish(with, without qiTally, eps, level float64) {
	if r.Trials == 0 {
		return
	}
	n := float64(r.Trials)
	r.ExactWith, r.ExactWithout = float64(with.exact)/n, float64(without.exact)/n
	r.CellsWith, r.CellsWithout = with.cells/n, without.cells/n
	r.MatchWith, r.MatchWithout = float64(with.match)/n, float64(without.match)/n
	r.PathWith, r.PathWithout = float64(with.path)/n, float64(without.path)/n
	r.ExactWithCI[0], r.ExactWithCI[1] = stats.ClopperPearson(with.exact, r.Trials, level)
	r.ExactWithoutCI[0], r.ExactWithoutCI[1] = stats.ClopperPearson(without.exact, r.Trials, level)
	r.Advantage = r.ExactWith - r.ExactWithout
	r.AdvantageBound = dpAdvantageBound(eps, r.ExactWithout)
	r.CellsAdvantage = r.CellsWith - r.CellsWithout
	r.CellsAdvantageBound = dpAdvantageBound(eps, r.CellsWithout)
	tprLo, fprHi := r.ExactWithCI[0], r.ExactWithoutCI[1]
	r.EpsilonLower = max(auditEpsLower(tprLo, fprHi), auditEpsLower(1-fprHi, 1-tprLo))
	r.ExceedsDP = r.EpsilonLower > eps
}

// dpAdvantageBound is min((e^eps-1)·fpr, (1-e^-eps)·(1-fpr)): the largest
// TPR-FPR an epsilon-DP mechanism allows at false-positive rate fpr.
func dpAdvantageBound(eps, fpr float64) float64 {
	return math.Min(math.Expm1(eps)*fpr, -math.Expm1(-eps)*(1-fpr))
}

// MeasureQIAttack runs QIAttack against m on db for randomly chosen
// victims, each attacked on opt.Draws releases of D = Bound(db, m.Bounds())
// and as many of D without the victim, the victim's quasi-identifier being
// the first (home) and last (work) cells of their first sequence.
func MeasureQIAttack(m Mechanism, db *DB, opt QIAttackOptions) (*QIAttackReport, error) {
	if m == nil || db == nil {
		return nil, errors.New("trajdb: QI attack: no mechanism or database")
	}
	if !(opt.Epsilon > 0) || math.IsInf(opt.Epsilon, 1) {
		return nil, fmt.Errorf("trajdb: QI attack: epsilon must be positive and finite, got %v", opt.Epsilon)
	}
	if opt.Victims < 0 || opt.Draws < 0 {
		return nil, fmt.Errorf("trajdb: QI attack: victims and draws must be positive, got %d and %d", opt.Victims, opt.Draws)
	}
	if opt.Victims == 0 {
		opt.Victims = 50
	}
	if opt.Draws == 0 {
		opt.Draws = 20
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	if !(opt.Confidence > 0 && opt.Confidence < 1) {
		return nil, fmt.Errorf("trajdb: QI attack: confidence must be in (0, 1), got %v", opt.Confidence)
	}
	if err := db.Validate(); err != nil {
		return nil, err
	}
	d, err := Bound(db, m.Bounds())
	if err != nil {
		return nil, err
	}
	var eligible []int
	for i, u := range d.Users {
		if len(u.Seqs) > 0 && len(u.Seqs[0]) >= 3 {
			eligible = append(eligible, i)
		}
	}
	if len(eligible) == 0 {
		return nil, errors.New("trajdb: QI attack: nobody has a path with a cell between home and work")
	}
	// holders counts the people holding each sequence.
	holders := map[string]int{}
	for _, u := range d.Users {
		mine := map[string]bool{}
		for _, s := range u.Seqs {
			mine[Key(s)] = true
		}
		for k := range mine {
			holders[k]++
		}
	}
	// A partial Fisher-Yates shuffle picks the victims.
	vsrc := noise.Derive(opt.Src, "attack/victims")
	nv := min(opt.Victims, len(eligible))
	for i := range nv {
		j := i + int(noise.Int64N(vsrc, int64(len(eligible)-i)))
		eligible[i], eligible[j] = eligible[j], eligible[i]
	}
	victims := eligible[:nv]
	rep := &QIAttackReport{
		Version: 1, Mechanism: m.Name(), Epsilon: opt.Epsilon, Persons: len(d.Users), Draws: opt.Draws,
		AdvantageBoundPriorFree: math.Expm1(opt.Epsilon) / (math.Exp(opt.Epsilon) + 1),
		Confidence:              opt.Confidence, Randomness: describeSource(opt.Src),
	}
	var all, unique [2]qiTally
	for _, vi := range victims {
		path := d.Users[vi].Seqs[0]
		home, work := path[0], path[len(path)-1]
		isUnique := holders[Key(path)] == 1
		rep.All.Victims++
		if isUnique {
			rep.UniquePath.Victims++
		}
		for side, db := range []*DB{d, d.Without(vi)} {
			label := "attack/with/" + strconv.Itoa(vi)
			if side == 1 {
				label = "attack/without/" + strconv.Itoa(vi)
			}
			var t qiTally
			src := noise.Derive(opt.Src, label)
			for range opt.Draws {
				rel, err := m.Synthesize(db, opt.Epsilon, src)
				if err != nil {
					return nil, fmt.Errorf("trajdb: QI attack: %s release: %w", m.Name(), err)
				}
				if opt.Progress != nil {
					opt.Progress(1)
				}
				if slices.ContainsFunc(rel.Seqs, func(s []int) bool { return slices.Equal(s, path) }) {
					t.path++
				}
				guess, ok := QIAttack(rel.Seqs, home, work)
				if !ok {
					continue
				}
				t.match++
				if slices.Equal(guess, path) {
					t.exact++
				}
				t.cells += qiCellsRecovered(path, guess)
			}
			all[side].add(t)
			if isUnique {
				unique[side].add(t)
			}
		}
	}
	rep.All.Trials = rep.All.Victims * opt.Draws
	rep.UniquePath.Trials = rep.UniquePath.Victims * opt.Draws
	level := 1 - (1-opt.Confidence)/4
	rep.All.finish(all[0], all[1], opt.Epsilon, level)
	rep.UniquePath.finish(unique[0], unique[1], opt.Epsilon, level)
	rep.ExceedsDP = rep.All.ExceedsDP || rep.UniquePath.ExceedsDP
	return rep, nil
}

func (t *qiTally) add(u qiTally) {
	t.exact += u.exact
	t.match += u.match
	t.path += u.path
	t.cells += u.cells
}
