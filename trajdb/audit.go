package trajdb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracepriv/tracepriv/internal/stats"
	"github.com/tracepriv/tracepriv/noise"
)

// AuditOptions is the search budget of AuditSupport. Zero fields take the
// defaults given; a negative MaxRemovals, MaxAdditions, RandomCandidates or
// ConfirmNeighbours means none.
type AuditOptions struct {
	// Epsilon is the privacy parameter the mechanism is run at and the
	// claim the audit tests.
	Epsilon float64
	// Draws is the number of exploration releases sampled from the input
	// database (default 1000), NeighbourDraws from each neighbour
	// (default 100).
	Draws          int
	NeighbourDraws int
	// MaxRemovals caps the neighbours made by removing one person (default
	// 32). People holding sequences nobody else holds are tried first.
	MaxRemovals int
	// MaxAdditions caps the neighbours made by adding one person who holds
	// one candidate sequence (default 64). Candidates are taken in turn
	// from three groups: the distinct sequences of the input, their proper
	// prefixes and suffixes, and RandomCandidates sequences drawn uniformly
	// over the universe (default 32) with lengths uniform in
	// [1, MaxCandidateLen] (default and cap: the mechanism's MaxLen).
	MaxAdditions     int
	RandomCandidates int
	MaxCandidateLen  int
	// RefineNeighbours is how many of the neighbours whose events score
	// best get RefineDraws more exploration releases (default 8 and 400),
	// so that the events tested are chosen on more than NeighbourDraws.
	RefineNeighbours int
	RefineDraws      int
	// ConfirmNeighbours is how many neighbours the exploration picks for
	// the statistical test (default 2), and ConfirmDraws how many fresh
	// releases of D and of each of them the test draws (default 8000).
	ConfirmNeighbours int
	ConfirmDraws      int
	// Confidence bounds the statistical test's false alarms: an
	// Epsilon-DP mechanism is declared a violation by it with probability
	// at most 1 - Confidence (default 0.95; Bonferroni over the
	// ConfirmNeighbours tests, each a pair of one-sided Clopper-Pearson
	// bounds).
	Confidence float64
	// StopAtFirst ends the search at the first neighbour that shows a
	// support violation, without the statistical test.
	StopAtFirst bool
	// NoiseDraws is the number of noisy counts AuditNoise tests against
	// the noise the tree states (default 2000; negative: no noise test;
	// a mechanism that is not a prefix or n-gram tree has none). When it
	// runs, the statistical test and the noise test share 1 - Confidence
	// equally (Bonferroni), so the false alarms stay within it.
	NoiseDraws int
	// Src is the randomness of the releases and the random candidates; nil
	// means crypto/rand. Each database's releases come from its own
	// stream, noise.Derive(Src, Stream), so a seeded witness can be
	// replayed.
	Src noise.Source
	// Progress, if set, is called with the number of releases just drawn.
	Progress func(releases int)
	// MaxWork caps the search's cost for a large database: the releases
	// it plans times the size of the bounded database (its symbols plus
	// its persons, what a release's cost grows with). When the defaults
	// would cost more, the fields left at their defaults (the draws, the
	// neighbours and the candidates) are scaled down to fit, each to a
	// floor (50 draws of D, 10 of each neighbour, 20 refinement and 100
	// confirmation draws, 2 neighbours of each kind, 1 tested); a database
	// too large for even those is refused with the size that fits. 0
	// means 2e8 (the 31,790-person MSNBC sample at l_max 20, work 4.3e5,
	// gets about 400 releases; the 40-person demonstration database is far
	// below it; full MSNBC is refused); negative means no cap. The noise
	// test's releases (NoiseDraws) are not counted: they are few.
	MaxWork float64
	// MaxTracked caps the distinct released sequences the support check
	// records (default 200,000), which bounds the audit's memory: a large
	// database's releases are mostly sequences never seen before, and
	// holding them all took 2 GB within 50 releases of the MSNBC sample.
	// Sequences first seen beyond the cap are not support-checked
	// (Budget.Untracked counts them); the counts are read regardless.
	MaxTracked int
}

// auditDefaultMaxWork is AuditOptions.MaxWork's default.
const auditDefaultMaxWork = 2e8

// fitWork scales the fields of o that given (the options as the caller
// passed them) left at their defaults so that the planned releases times
// work stay within o.MaxWork, and returns the factor applied (1: none).
func (o *AuditOptions) fitWork(given AuditOptions, work float64, persons int) (float64, error) {
	if o.MaxWork == 0 {
		o.MaxWork = auditDefaultMaxWork
	}
	if o.MaxWork < 0 {
		return 1, nil
	}
	planned := func() float64 {
		return float64(o.Draws + (o.MaxRemovals+o.MaxAdditions)*o.NeighbourDraws + o.RefineNeighbours*o.RefineDraws + (1+o.ConfirmNeighbours)*o.ConfirmDraws)
	}
	f := o.MaxWork / (planned() * work)
	if f >= 1 {
		return 1, nil
	}
	scale := func(v *int, was, floor int, by float64) {
		if was == 0 {
			*v = max(floor, int(math.Floor(float64(*v)*by)))
		}
	}
	scale(&o.Draws, given.Draws, 50, f)
	scale(&o.NeighbourDraws, given.NeighbourDraws, 10, f)
	scale(&o.RefineDraws, given.RefineDraws, 20, f)
	scale(&o.ConfirmDraws, given.ConfirmDraws, 100, f)
	// The neighbours shrink by the square root: fewer of them, each
	// sampled less.
	r := math.Sqrt(f)
	scale(&o.MaxRemovals, given.MaxRemovals, 2, r)
	scale(&o.MaxAdditions, given.MaxAdditions, 2, r)
	scale(&o.RandomCandidates, given.RandomCandidates, 2, r)
	scale(&o.RefineNeighbours, given.RefineNeighbours, 1, r)
	scale(&o.ConfirmNeighbours, given.ConfirmNeighbours, 1, r)
	if p := planned(); p*work > o.MaxWork {
		fits := o.MaxWork / p
		return f, fmt.Errorf("trajdb: audit: even scaled down, the search would draw %.0f releases of this database of %d persons (work %.3g: symbols plus persons), %.3g in all, beyond --max-work %.3g: "+
			"it takes a database of work up to %.3g (about %.0f persons like these); give a smaller budget (--draws, --neighbour-draws, --confirm-draws, --max-removals, --max-additions), a larger --max-work, or --max-work -1 for no cap",
			p, persons, work, p*work, o.MaxWork, fits, fits/work*float64(persons))
	}
	return f, nil
}

// AuditReport is the outcome of AuditSupport.
type AuditReport struct {
	// Version is 2 since the statistical test moved to fresh releases
	// (Tests, FalseAlarmBound; Budget.Events counts events scored).
	Version   int           `json:"version"`
	Mechanism MechanismName `json:"mechanism"`
	Epsilon   float64       `json:"epsilon"`
	// Violation is true when the audit found evidence that the mechanism
	// is not Epsilon-DP at user level: a support violation (a sequence
	// observed in a release of one database that the mechanism's own,
	// unrefuted, support model says the neighbour can never release: an
	// infinite privacy loss, Propositions 3.5 and 3.6), or a statistical
	// one (an event on the releases' counts whose probabilities, measured
	// on fresh releases, prove a privacy loss above Epsilon). Witness is
	// the strongest such finding.
	Violation bool          `json:"violation"`
	Witness   *AuditWitness `json:"witness,omitempty"`
	// SupportViolations counts the (neighbour, sequence) pairs showing a
	// support violation (0 when the support model is unsound: its answers
	// are then not evidence).
	SupportViolations int `json:"support_violations"`
	// SupportModelSound is false when some release contained a sequence
	// that CanOutput says the database it came from cannot release: the
	// mechanism lies about its support. UnsoundWitness shows the first
	// such observation and UnsoundObservations counts them.
	SupportModelSound   bool          `json:"support_model_sound"`
	UnsoundWitness      *AuditWitness `json:"unsound_witness,omitempty"`
	UnsoundObservations int           `json:"unsound_observations"`
	// ClaimedSupportDifferences counts the (neighbour, sequence) pairs,
	// over the candidates and every observed sequence, on which CanOutput
	// answers differently for the two databases, observed or not. A DP
	// mechanism's support model claims none (Proposition 3.6).
	ClaimedSupportDifferences int `json:"claimed_support_differences"`
	// Tests are the statistical tests, one per neighbour the exploration
	// picked, each with the event it tested and the privacy loss its
	// fresh releases prove. EpsilonLower is the largest of those losses,
	// Strongest its test.
	Tests        []*AuditWitness `json:"tests"`
	EpsilonLower float64         `json:"epsilon_lower"`
	Strongest    *AuditWitness   `json:"strongest_event,omitempty"`
	// NoiseTest is the white-box test of the tree's noise (AuditNoise),
	// nil when it did not run. Its violation is the audit's too, and its
	// EpsilonLower counts towards the report's.
	NoiseTest *NoiseAuditReport `json:"noise_test,omitempty"`
	// FalseAlarmBound = 1 - Confidence bounds the probability that the
	// statistical test and the noise test together declare an Epsilon-DP
	// mechanism a violation; Confidence is the level of EpsilonLower.
	FalseAlarmBound float64     `json:"false_alarm_bound"`
	Confidence      float64     `json:"confidence"`
	Budget          AuditBudget `json:"budget"`
	Verdict         string      `json:"verdict"`
	// Randomness names the source: "crypto" (crypto/rand) or "seeded:N".
	Randomness string `json:"randomness"`
}

// AuditBudget states how much of the neighbourhood the audit covered.
type AuditBudget struct {
	Persons int `json:"persons"`
	// Removals and Additions are the neighbours tried by removing and by
	// adding one person; Neighbours is their sum.
	Removals   int `json:"neighbours_removed"`
	Additions  int `json:"neighbours_added"`
	Neighbours int `json:"neighbours"`
	// Candidates is the size of the candidate set for additions, of which
	// CandidatesInput came from the input's sequences, CandidatesAffix
	// from their prefixes and suffixes and CandidatesRandom were drawn at
	// random.
	Candidates       int `json:"candidates"`
	CandidatesInput  int `json:"candidates_input"`
	CandidatesAffix  int `json:"candidates_affix"`
	CandidatesRandom int `json:"candidates_random"`
	MaxCandidateLen  int `json:"max_candidate_len"`
	Draws            int `json:"draws"`
	NeighbourDraws   int `json:"neighbour_draws"`
	// RefineNeighbours and RefineDraws: the neighbours given more
	// exploration releases, and how many more each; Refined is how many
	// were (those with an event to score, up to RefineNeighbours).
	RefineNeighbours int `json:"refine_neighbours"`
	RefineDraws      int `json:"refine_draws"`
	Refined          int `json:"refined"`
	// ConfirmNeighbours and ConfirmDraws are the statistical test's
	// budget: neighbours tested and fresh releases per database.
	ConfirmNeighbours int `json:"confirm_neighbours"`
	ConfirmDraws      int `json:"confirm_draws"`
	// Releases is the total number of releases drawn.
	Releases int `json:"releases"`
	// SequencesObserved is the number of distinct sequences seen in an
	// exploration release, SupportChecks the number of CanOutput calls,
	// Statistics the number of counts read off each release and Events
	// the number of (neighbour, event) pairs the exploration scored.
	SequencesObserved int     `json:"sequences_observed"`
	SupportChecks     int     `json:"support_checks"`
	Statistics        int     `json:"statistics"`
	Events            int     `json:"events_scored"`
	Confidence        float64 `json:"confidence"`
	StoppedEarly      bool    `json:"stopped_early"`
	// Work is the size of the bounded database (symbols plus persons),
	// MaxWork the cap on releases times Work, and ScaledBy the factor the
	// defaulted draws were scaled by to fit it (1: not scaled; the
	// neighbours by its square root).
	// Untracked counts the observations of sequences first seen after
	// MaxTracked distinct ones were recorded: not support-checked.
	MaxTracked int     `json:"max_tracked"`
	Untracked  int     `json:"untracked_observations"`
	Work       float64 `json:"work"`
	MaxWork    float64 `json:"max_work"`
	ScaledBy   float64 `json:"scaled_by"`
}

// AuditWitness is one finding: a pair of neighbouring databases, D (the
// bounded input) and D' (D with one person removed or added), and what in
// their releases tells them apart.
type AuditWitness struct {
	// Kind is "support" (Under can release Sequence and, by the
	// mechanism's support model, Other cannot), "statistical" (releases
	// of Under fall in Event more often than e^epsilon times those of
	// Other could; for the entries of AuditReport.Tests, the test whether
	// they do), "noise" (the noise test, NoiseTest, found less noise than
	// the tree states) or "unsound" (a release of Under contained Sequence
	// although CanOutput(Under, Sequence) is false).
	Kind string `json:"kind"`
	// Change is how D' differs from D ("remove" or "add"; empty when the
	// finding involves D alone) and Person and PersonSequences the person
	// removed or added.
	Change          string  `json:"change,omitempty"`
	Person          string  `json:"person,omitempty"`
	PersonSequences [][]int `json:"person_sequences,omitempty"`
	PersonsD        int     `json:"persons_d"`
	PersonsDPrime   int     `json:"persons_d_prime,omitempty"`
	// Sequence is the sequence observed (support, unsound) or the one the
	// event counts (statistical; empty for the release's size).
	Sequence []int `json:"sequence"`
	// Event is the event of a statistical finding.
	Event *AuditEvent `json:"event,omitempty"`
	// Under ("D" or "D'") is the database whose releases contained
	// Sequence or fell in Event more often, Other the other one.
	Under string `json:"under"`
	Other string `json:"other,omitempty"`
	// Stream labels Under's release stream (noise.Derive(Src, Stream)),
	// StreamSource names it ("seeded:N/label" for a seeded audit) and Draw
	// is the 0-based index of the first of its releases that contained
	// Sequence (or fell in Event; -1 if none did), so a seeded audit can
	// be replayed.
	Stream       string `json:"stream"`
	StreamSource string `json:"stream_source"`
	Draw         int    `json:"draw"`
	// CanOutputUnder and CanOutputOther are the mechanism's support model
	// for Sequence on the two databases.
	CanOutputUnder bool `json:"can_output_under"`
	CanOutputOther bool `json:"can_output_other"`
	// Observed of Draws releases of Under contained Sequence (or fell in
	// Event), and ObservedOther of DrawsOther releases of Other.
	Observed      int `json:"observed"`
	Draws         int `json:"draws"`
	ObservedOther int `json:"observed_other"`
	DrawsOther    int `json:"draws_other"`
	// ProbLower and ProbOtherUpper bound the two probabilities from below
	// and above (one-sided Clopper-Pearson bounds holding together with
	// every other test's at the report's Confidence); EpsilonLower =
	// max(0, ln(ProbLower/ProbOtherUpper)) is the privacy loss they prove.
	ProbLower      float64 `json:"prob_lower"`
	ProbOtherUpper float64 `json:"prob_other_upper"`
	EpsilonLower   float64 `json:"epsilon_lower"`
}

// AuditEvent is an event on one count read off a release: Statistic of
// Sequence lies in In, or, when In is empty, in [AtLeast, AtMost] (a nil
// end is unbounded).
type AuditEvent struct {
	// Statistic is "copies" (released sequences equal to Sequence),
	// "prefix_count" (released sequences beginning with Sequence),
	// "gram_count" (occurrences of Sequence as a contiguous part of a
	// released sequence) or "size" (released sequences).
	Statistic string `json:"statistic"`
	Sequence  []int  `json:"sequence,omitempty"`
	In        []int  `json:"in,omitempty"`
	AtLeast   *int   `json:"at_least,omitempty"`
	AtMost    *int   `json:"at_most,omitempty"`
	// Text states the event in words.
	Text string `json:"text"`
}

// Holds reports whether a release (its sequences) falls in e.
func (e *AuditEvent) Holds(release [][]int) bool {
	return e.holdsValue(auditStatValue(e.Statistic, e.Sequence, release))
}

func (e *AuditEvent) holdsValue(v int) bool {
	if len(e.In) > 0 {
		return slices.Contains(e.In, v)
	}
	return (e.AtLeast == nil || v >= *e.AtLeast) && (e.AtMost == nil || v <= *e.AtMost)
}

func (e *AuditEvent) describe() {
	what := map[string]string{
		auditStatCopies: "copies of %v released",
		auditStatPrefix: "released sequences beginning with %v",
		auditStatGram:   "occurrences of %v in the released sequences",
	}[e.Statistic]
	if e.Statistic == auditStatSize {
		what = "released sequences"
	} else {
		what = fmt.Sprintf(what, e.Sequence)
	}
	switch {
	case len(e.In) > 0:
		vs := make([]string, len(e.In))
		for i, v := range e.In {
			vs[i] = strconv.Itoa(v)
		}
		e.Text = fmt.Sprintf("%s in {%s}", what, strings.Join(vs, ", "))
	case e.AtLeast != nil && e.AtMost != nil:
		e.Text = fmt.Sprintf("%s between %d and %d", what, *e.AtLeast, *e.AtMost)
	case e.AtLeast != nil:
		e.Text = fmt.Sprintf("%s >= %d", what, *e.AtLeast)
	case e.AtMost != nil:
		e.Text = fmt.Sprintf("%s <= %d", what, *e.AtMost)
	default:
		e.Text = "any release"
	}
}

// Neighbour rebuilds D' from D (the bounded input the audit ran on).
func (w *AuditWitness) Neighbour(d *DB) (*DB, error) {
	switch w.Change {
	case "remove":
		for i, u := range d.Users {
			if u.ID == w.Person {
				return d.Without(i), nil
			}
		}
		return nil, fmt.Errorf("trajdb: witness: no person %q in the database", w.Person)
	case "add":
		return d.With(User{ID: w.Person, Seqs: w.PersonSequences}), nil
	default:
		return nil, fmt.Errorf("trajdb: witness of kind %q involves no neighbour", w.Kind)
	}
}

const (
	auditDefaultDraws          = 1000
	auditDefaultNeighbourDraws = 100
	auditDefaultRemovals       = 32
	auditDefaultAdditions      = 64
	auditDefaultRandom         = 32
	auditDefaultRefine         = 8
	auditDefaultRefineDraws    = 400
	auditDefaultConfirm        = 2
	auditDefaultConfirmDraws   = 8000
	auditDefaultConfidence     = 0.95
	auditStreamD               = "audit/D"
	auditStreamConfirm         = "audit/confirm/"
	// auditScoreLevel is the level of the two-sided Clopper-Pearson
	// intervals whose ends the exploration plugs in when it predicts a
	// test's outcome: pessimistic on both sides, so that a single lucky
	// observation does not outrank a frequent one.
	auditScoreLevel = 0.6
	// auditMaxGram caps the length of the grams counted (the n-gram
	// tree's default height).
	auditMaxGram = 5

	auditStatCopies = "copies"
	auditStatPrefix = "prefix_count"
	auditStatGram   = "gram_count"
	auditStatSize   = "size"
)

// AuditSupport searches the neighbours of db for evidence that m is not
// Epsilon-DP at user level, in two ways.
//
// Support (the thesis's Propositions 3.5 and 3.6): it draws opt.Draws
// releases of D = Bound(db, m.Bounds()) and opt.NeighbourDraws of each
// neighbour D' (one person removed; one person holding a candidate
// sequence added), and for every sequence s observed in a release of one
// database asks m.CanOutput whether the other can release it: an observed
// s that the other cannot release is an infinite privacy loss. Before it
// believes CanOutput's "no", it checks every observation against the model
// on the database it came from; a model that excludes an observed output is
// reported unsound, and its answers are then not evidence.
//
// Counts: a mechanism can claim a data-independent support and still leak
// (no noise, too little noise, noise on the data's own nodes only). So the
// same exploration releases are read as counts: for each neighbour, the
// copies of each of the person's sequences and of their prefixes, the
// released sequences beginning with each prefix, the occurrences of each of
// their grams (up to 5 symbols) and the number of released sequences. For
// each count it scores the events "count >= t", "count <= t" and the
// likelihood-ratio sets (the values where D's releases are the more likely,
// or D”s, by their estimated ratio: the Neyman-Pearson events), in both
// directions, by the privacy loss a test on ConfirmDraws fresh releases
// would prove if the pessimistic ends of the exploration's intervals were
// true. The ConfirmNeighbours neighbours with the best-scoring events are
// then tested on fresh releases, ConfirmDraws of D and of each: the
// one-sided Clopper-Pearson bounds P(E | under) >= lo and P(E | other) <=
// hi, all holding together at Confidence (Bonferroni), prove a privacy loss
// of at least ln(lo/hi); above Epsilon, that is a violation. The exploration
// only chooses what to test, and the test's releases are independent of it,
// so an Epsilon-DP mechanism is declared a violation with probability at
// most 1 - Confidence, whatever the exploration found (the mechanism's
// own noise source must be what it says: a seeded audit is as good as its
// generator).
//
// What it cannot do: a search finds violations, it does not prove their
// absence. "No violation" means none among the neighbours, candidates,
// events and draws of the stated budget. A support violation is exactly as
// trustworthy as CanOutput's "no" on the other database, which no finite
// sampling can confirm. A statistical violation needs enough fresh
// releases: an event of probability p under one database and none under the
// other proves at most about ln(p·ConfirmDraws/ln(2·ConfirmNeighbours/(1 -
// Confidence))) (7.5 for a certain event at the defaults), so a leak
// through outputs rarer than about 4.4·e^epsilon/ConfirmDraws goes
// unproved.
func AuditSupport(m Mechanism, db *DB, opt AuditOptions) (*AuditReport, error) {
	if m == nil {
		return nil, errors.New("trajdb: audit: no mechanism")
	}
	if db == nil {
		return nil, errors.New("trajdb: audit: no database")
	}
	if err := db.Validate(); err != nil {
		return nil, err
	}
	if !(opt.Epsilon > 0) || math.IsInf(opt.Epsilon, 1) {
		return nil, fmt.Errorf("trajdb: audit: epsilon must be positive and finite, got %v", opt.Epsilon)
	}
	b := m.Bounds()
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("trajdb: audit: mechanism %s: %w", m.Name(), err)
	}
	given := opt
	if err := opt.fill(b); err != nil {
		return nil, err
	}
	d, err := Bound(db, b)
	if err != nil {
		return nil, err
	}
	work := float64(len(d.Users))
	for _, u := range d.Users {
		for _, s := range u.Seqs {
			work += float64(len(s))
		}
	}
	scaled, err := opt.fitWork(given, work, len(d.Users))
	if err != nil {
		return nil, err
	}
	a := &auditor{m: m, opt: opt, d: d, seen: map[string]bool{}}
	a.rep = &AuditReport{
		Version: 2, Mechanism: m.Name(), Epsilon: opt.Epsilon, SupportModelSound: true,
		Randomness: describeSource(opt.Src), FalseAlarmBound: 1 - opt.Confidence, Tests: []*AuditWitness{},
		Budget: AuditBudget{
			Persons: len(d.Users), Draws: opt.Draws, NeighbourDraws: opt.NeighbourDraws,
			MaxCandidateLen: opt.MaxCandidateLen, Confidence: opt.Confidence,
			ConfirmNeighbours: opt.ConfirmNeighbours, ConfirmDraws: opt.ConfirmDraws,
			RefineNeighbours: opt.RefineNeighbours, RefineDraws: opt.RefineDraws,
			Work: work, MaxWork: opt.MaxWork, ScaledBy: scaled, MaxTracked: opt.MaxTracked,
		},
	}
	a.rep.Confidence = opt.Confidence
	alpha := 1 - opt.Confidence
	if opt.NoiseDraws > 0 {
		_, _, _, err := tapped(m, nil, opt.Epsilon)
		switch {
		case err == nil:
			// The noise test runs: it and the statistical test get half
			// of alpha each.
			alpha /= 2
			bar := opt.Progress
			a.rep.NoiseTest, err = AuditNoise(m, db, NoiseAuditOptions{
				Epsilon: opt.Epsilon, Draws: opt.NoiseDraws, Confidence: 1 - alpha, Src: opt.Src, Progress: bar,
			})
			if err != nil {
				return nil, err
			}
			a.rep.Budget.Releases += a.rep.NoiseTest.Releases
		case !errors.Is(err, ErrNotWhiteBox):
			return nil, err
		}
	}
	a.cpScore = &auditCP{level: auditScoreLevel, memo: map[[2]int][2]float64{}}
	a.cpTest = &auditCP{level: 1 - alpha/float64(max(opt.ConfirmNeighbours, 1)), memo: map[[2]int][2]float64{}}
	if err := a.run(); err != nil {
		return nil, err
	}
	return a.rep, nil
}

func (o *AuditOptions) fill(b Bounds) error {
	def := func(v *int, d int, name string, allowNone bool) error {
		switch {
		case *v == 0:
			*v = d
		case *v < 0 && allowNone:
			*v = 0
		case *v < 0:
			return fmt.Errorf("trajdb: audit: %s must be positive, got %d", name, *v)
		}
		return nil
	}
	if err := def(&o.Draws, auditDefaultDraws, "Draws", false); err != nil {
		return err
	}
	if err := def(&o.NoiseDraws, 2000, "NoiseDraws", true); err != nil {
		return err
	}
	if err := def(&o.MaxTracked, 200_000, "MaxTracked", false); err != nil {
		return err
	}
	if err := def(&o.NeighbourDraws, auditDefaultNeighbourDraws, "NeighbourDraws", false); err != nil {
		return err
	}
	if err := def(&o.ConfirmDraws, auditDefaultConfirmDraws, "ConfirmDraws", false); err != nil {
		return err
	}
	_ = def(&o.MaxRemovals, auditDefaultRemovals, "", true)
	_ = def(&o.MaxAdditions, auditDefaultAdditions, "", true)
	_ = def(&o.RandomCandidates, auditDefaultRandom, "", true)
	_ = def(&o.ConfirmNeighbours, auditDefaultConfirm, "", true)
	_ = def(&o.RefineNeighbours, auditDefaultRefine, "", true)
	if err := def(&o.RefineDraws, auditDefaultRefineDraws, "RefineDraws", false); err != nil {
		return err
	}
	if o.MaxCandidateLen <= 0 || o.MaxCandidateLen > b.MaxLen {
		o.MaxCandidateLen = b.MaxLen
	}
	if o.Confidence == 0 {
		o.Confidence = auditDefaultConfidence
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return fmt.Errorf("trajdb: audit: confidence must be in (0, 1), got %v", o.Confidence)
	}
	return nil
}

// auditObs is what the releases of one database showed: for each distinct
// sequence (Key), in how many releases it appeared and the first one, and
// the histogram of each count the database's probes read.
type auditObs struct {
	draws int
	count map[string]int
	first map[string]int
	// hist[i] is the histogram of statistic i of the probe set.
	hist []map[int]int
}

func (o *auditObs) keys() []string {
	ks := make([]string, 0, len(o.count))
	for k := range o.count {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// auditNeighbour is one D'.
type auditNeighbour struct {
	change string
	person User
	db     *DB
	stream string
	// stats are the indexes, in the auditor's probe set, of the counts
	// that bear on the person.
	stats []int
}

// auditStat is one count read off a release.
type auditStat struct {
	kind string
	seq  []int
}

// auditStatValue computes one statistic of a release directly.
func auditStatValue(kind string, seq []int, release [][]int) int {
	if kind == auditStatSize {
		return len(release)
	}
	n := 0
	for _, s := range release {
		switch kind {
		case auditStatCopies:
			if slices.Equal(s, seq) {
				n++
			}
		case auditStatPrefix:
			if len(s) >= len(seq) && slices.Equal(s[:len(seq)], seq) {
				n++
			}
		case auditStatGram:
			for i := 0; i+len(seq) <= len(s); i++ {
				if slices.Equal(s[i:i+len(seq)], seq) {
					n++
				}
			}
		}
	}
	return n
}

// probeSet reads many counts off a release in one pass over its sequences,
// by looking up each sequence, its prefixes and its short grams.
type probeSet struct {
	stats                []auditStat
	copies, prefix, gram map[string]int
	size                 int
	maxPrefix, maxGram   int
}

func newProbeSet() *probeSet {
	return &probeSet{copies: map[string]int{}, prefix: map[string]int{}, gram: map[string]int{}, size: -1}
}

// add registers a statistic (once) and returns its index.
func (p *probeSet) add(kind string, seq []int) int {
	if kind == auditStatSize {
		if p.size < 0 {
			p.size = len(p.stats)
			p.stats = append(p.stats, auditStat{kind: kind})
		}
		return p.size
	}
	idx := map[string]map[string]int{auditStatCopies: p.copies, auditStatPrefix: p.prefix, auditStatGram: p.gram}[kind]
	k := Key(seq)
	if i, ok := idx[k]; ok {
		return i
	}
	i := len(p.stats)
	idx[k] = i
	p.stats = append(p.stats, auditStat{kind: kind, seq: slices.Clone(seq)})
	switch kind {
	case auditStatPrefix:
		p.maxPrefix = max(p.maxPrefix, len(seq))
	case auditStatGram:
		p.maxGram = max(p.maxGram, len(seq))
	}
	return i
}

// eval writes every statistic of release into out (len(p.stats)).
func (p *probeSet) eval(release [][]int, out []int) {
	clear(out)
	if p.size >= 0 {
		out[p.size] = len(release)
	}
	for _, s := range release {
		k := Key(s)
		if i, ok := p.copies[k]; ok {
			out[i]++
		}
		for l := 1; l <= min(len(s), p.maxPrefix); l++ {
			if i, ok := p.prefix[k[:4*l]]; ok {
				out[i]++
			}
		}
		if p.maxGram == 0 {
			continue
		}
		for a := range s {
			for b := a + 1; b <= min(len(s), a+p.maxGram); b++ {
				if i, ok := p.gram[k[4*a:4*b]]; ok {
					out[i]++
				}
			}
		}
	}
}

// auditHypothesis is an event between D and one neighbour, chosen by the
// exploration for the statistical test.
type auditHypothesis struct {
	nb     int
	stat   int
	event  AuditEvent
	underD bool    // the event is the more likely under D
	score  float64 // the loss the test is predicted to prove
}

type auditor struct {
	m       Mechanism
	opt     AuditOptions
	d       *DB
	rep     *AuditReport
	obsD    *auditObs
	nbs     []auditNeighbour
	obsN    []*auditObs
	cands   [][]int
	seen    map[string]bool
	probes  *probeSet
	best    []*auditHypothesis // per neighbour
	cpScore *auditCP
	cpTest  *auditCP
	// support holds the support violations, before the soundness verdict.
	support []*AuditWitness
}

func (a *auditor) canOutput(db *DB, s []int) bool {
	a.rep.Budget.SupportChecks++
	return a.m.CanOutput(db, s)
}

// draw samples n releases of db from the stream labelled stream and calls
// visit with each.
func (a *auditor) draw(db *DB, stream string, n int, visit func(i int, seqs [][]int)) error {
	src := noise.Derive(a.opt.Src, stream)
	for i := range n {
		rel, err := a.m.Synthesize(db, a.opt.Epsilon, src)
		if err != nil {
			return fmt.Errorf("trajdb: audit: %s release of %s: %w", a.m.Name(), stream, err)
		}
		visit(i, rel.Seqs)
		a.rep.Budget.Releases++
		if a.opt.Progress != nil {
			a.opt.Progress(1)
		}
	}
	return nil
}

// sample draws the exploration releases of db: the sequences they contain
// and the histograms of the statistics stats of the probe set.
func (a *auditor) sample(db *DB, stream string, n int, stats []int) (*auditObs, error) {
	o := &auditObs{draws: n, count: map[string]int{}, first: map[string]int{}, hist: make([]map[int]int, len(a.probes.stats))}
	for _, i := range stats {
		o.hist[i] = map[int]int{}
	}
	return o, a.sampleInto(o, db, stream, n, stats, true)
}

// sampleInto draws n more exploration releases of db into o's histograms
// and, if seqs, records the sequences they contain.
func (a *auditor) sampleInto(o *auditObs, db *DB, stream string, n int, stats []int, seqs bool) error {
	vals := make([]int, len(a.probes.stats))
	return a.draw(db, stream, n, func(i int, rel [][]int) {
		a.probes.eval(rel, vals)
		for _, j := range stats {
			o.hist[j][vals[j]]++
		}
		if !seqs {
			return
		}
		inThis := map[string]bool{}
		for _, s := range rel {
			k := Key(s)
			if inThis[k] {
				continue
			}
			inThis[k] = true
			if !a.seen[k] {
				if len(a.seen) >= a.opt.MaxTracked {
					// Memory: beyond the cap a new sequence is not
					// support-checked (counted in the budget).
					a.rep.Budget.Untracked++
					continue
				}
				a.seen[k] = true
			}
			if o.count[k] == 0 {
				o.first[k] = i
			}
			o.count[k]++
		}
	})
}

func (a *auditor) run() error {
	a.candidates()
	a.neighbours()
	all := make([]int, len(a.probes.stats))
	for i := range all {
		all[i] = i
	}
	a.rep.Budget.Statistics = len(a.probes.stats)
	var err error
	if a.obsD, err = a.sample(a.d, auditStreamD, a.opt.Draws, all); err != nil {
		return err
	}
	a.checkSound(-1, a.obsD)
	for j := range a.nbs {
		if err := a.visit(j); err != nil {
			return err
		}
		if a.opt.StopAtFirst && len(a.support) > 0 {
			a.rep.Budget.StoppedEarly = j+1 < len(a.nbs) || a.opt.ConfirmNeighbours > 0
			break
		}
	}
	a.rep.Budget.SequencesObserved = len(a.seen)
	if !(a.opt.StopAtFirst && len(a.support) > 0) {
		if err := a.refine(); err != nil {
			return err
		}
		if err := a.confirm(); err != nil {
			return err
		}
	}
	a.conclude()
	return nil
}

// candidates builds the candidate sequences for additions.
func (a *auditor) candidates() {
	have := map[string]bool{}
	var input, affix, random [][]int
	for _, s := range a.d.Sequences() {
		if k := Key(s); !have[k] {
			have[k] = true
			input = append(input, slices.Clone(s))
		}
	}
	for _, s := range input {
		for l := 1; l < len(s); l++ {
			for _, c := range [][]int{s[:l], s[len(s)-l:]} {
				if k := Key(c); !have[k] {
					have[k] = true
					affix = append(affix, slices.Clone(c))
				}
			}
		}
	}
	if a.opt.RandomCandidates > 0 {
		src := noise.Derive(a.opt.Src, "audit/candidates")
		// A small universe may hold fewer new sequences than asked for;
		// give up after a generous number of repeats.
		for tries := 0; len(random) < a.opt.RandomCandidates && tries < 100*a.opt.RandomCandidates; tries++ {
			s := make([]int, 1+noise.Int64N(src, int64(a.opt.MaxCandidateLen)))
			for i := range s {
				s[i] = int(noise.Int64N(src, int64(a.d.Size)))
			}
			if k := Key(s); !have[k] {
				have[k] = true
				random = append(random, s)
			}
		}
	}
	bud := &a.rep.Budget
	bud.CandidatesInput, bud.CandidatesAffix, bud.CandidatesRandom = len(input), len(affix), len(random)
	// Take the groups in turn so that a small budget still covers all three.
	for i := 0; i < max(len(input), len(affix), len(random)); i++ {
		for _, g := range [][][]int{input, affix, random} {
			if i < len(g) {
				a.cands = append(a.cands, g[i])
			}
		}
	}
	bud.Candidates = len(a.cands)
}

// neighbours lists the D' to try: removals first, people holding the most
// sequences nobody else holds leading (those are the ones a data-dependent
// support betrays), then additions of one person per candidate; and
// registers the counts that bear on each person.
func (a *auditor) neighbours() {
	holders := map[string]int{}
	for _, u := range a.d.Users {
		mine := map[string]bool{}
		for _, s := range u.Seqs {
			mine[Key(s)] = true
		}
		for k := range mine {
			holders[k]++
		}
	}
	unique := make([]int, len(a.d.Users))
	for i, u := range a.d.Users {
		for _, s := range u.Seqs {
			if holders[Key(s)] == 1 {
				unique[i]++
			}
		}
	}
	order := make([]int, len(a.d.Users))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return unique[order[x]] > unique[order[y]] })
	for _, i := range order[:min(len(order), a.opt.MaxRemovals)] {
		a.nbs = append(a.nbs, auditNeighbour{
			change: "remove", person: a.d.Users[i], db: a.d.Without(i),
			stream: "audit/remove/" + strconv.Itoa(i),
		})
	}
	ids := map[string]bool{}
	for _, u := range a.d.Users {
		ids[u.ID] = true
	}
	for i, c := range a.cands[:min(len(a.cands), a.opt.MaxAdditions)] {
		id := "audit-added-" + strconv.Itoa(i)
		for ids[id] {
			id += "'"
		}
		u := User{ID: id, Seqs: [][]int{c}}
		a.nbs = append(a.nbs, auditNeighbour{
			change: "add", person: u, db: a.d.With(u),
			stream: "audit/add/" + strconv.Itoa(i),
		})
	}
	a.probes = newProbeSet()
	for j := range a.nbs {
		nb := &a.nbs[j]
		if nb.change == "remove" {
			a.rep.Budget.Removals++
		} else {
			a.rep.Budget.Additions++
		}
		stats := map[int]bool{a.probes.add(auditStatSize, nil): true}
		for _, s := range nb.person.Seqs {
			for l := 1; l <= len(s); l++ {
				stats[a.probes.add(auditStatCopies, s[:l])] = true
				stats[a.probes.add(auditStatPrefix, s[:l])] = true
			}
			for x := range s {
				for y := x + 1; y <= min(len(s), x+auditMaxGram); y++ {
					stats[a.probes.add(auditStatGram, s[x:y])] = true
				}
			}
		}
		for i := range stats {
			nb.stats = append(nb.stats, i)
		}
		slices.Sort(nb.stats)
	}
	a.rep.Budget.Neighbours = len(a.nbs)
}

// witness fills the fields every finding shares. j < 0 means D alone.
func (a *auditor) witness(kind string, j int, seq []int, underD bool) *AuditWitness {
	w := &AuditWitness{Kind: kind, Sequence: seq, PersonsD: len(a.d.Users), Under: "D", Stream: auditStreamD}
	if w.Sequence == nil {
		w.Sequence = []int{}
	}
	if j >= 0 {
		nb := a.nbs[j]
		w.Change, w.Person, w.PersonSequences = nb.change, nb.person.ID, nb.person.Seqs
		w.PersonsDPrime = len(nb.db.Users)
		w.Other = "D'"
		if !underD {
			w.Under, w.Other, w.Stream = "D'", "D", nb.stream
		}
	}
	w.StreamSource = describeSource(noise.Derive(a.opt.Src, w.Stream))
	return w
}

// checkSound checks every observation of database j (-1 for D) against
// the support model on that database.
func (a *auditor) checkSound(j int, o *auditObs) {
	db := a.d
	if j >= 0 {
		db = a.nbs[j].db
	}
	for _, k := range o.keys() {
		if a.canOutput(db, FromKey(k)) {
			continue
		}
		a.rep.UnsoundObservations++
		if a.rep.SupportModelSound {
			a.rep.SupportModelSound = false
			w := a.witness("unsound", j, FromKey(k), j < 0)
			w.Draw, w.Observed, w.Draws = o.first[k], o.count[k], o.draws
			a.rep.UnsoundWitness = w
		}
	}
}

// visit samples neighbour j, compares its sequences with D's both ways
// and scores the events on its counts.
func (a *auditor) visit(j int) error {
	nb := a.nbs[j]
	o, err := a.sample(nb.db, nb.stream, a.opt.NeighbourDraws, nb.stats)
	if err != nil {
		return err
	}
	a.obsN = append(a.obsN, o)
	a.checkSound(j, o)
	// Support: an observed sequence of one side that the model excludes
	// on the other.
	for _, k := range a.obsD.keys() {
		if !a.canOutput(nb.db, FromKey(k)) {
			a.support = append(a.support, a.supportWitness(j, k, true))
		}
	}
	for _, k := range o.keys() {
		if !a.canOutput(a.d, FromKey(k)) {
			a.support = append(a.support, a.supportWitness(j, k, false))
		}
	}
	// What the model claims, observed or not: the candidates, the person's
	// own sequences and everything seen so far.
	claim := map[string]bool{}
	for _, c := range a.cands {
		claim[Key(c)] = true
	}
	for _, s := range nb.person.Seqs {
		claim[Key(s)] = true
	}
	for k := range a.seen {
		claim[k] = true
	}
	for k := range claim {
		s := FromKey(k)
		if a.canOutput(a.d, s) != a.canOutput(nb.db, s) {
			a.rep.ClaimedSupportDifferences++
		}
	}
	a.best = append(a.best, a.bestOf(j))
	return nil
}

// bestOf returns the best-scoring event on neighbour j's counts.
func (a *auditor) bestOf(j int) *auditHypothesis {
	var best *auditHypothesis
	for _, i := range a.nbs[j].stats {
		if h := a.bestEvent(j, i, a.obsD.hist[i], a.obsN[j].hist[i]); h != nil && (best == nil || h.score > best.score) {
			best = h
		}
	}
	return best
}

// byScore lists the neighbours with an event, best-scoring first.
func (a *auditor) byScore() []int {
	var js []int
	for j, h := range a.best {
		if h != nil {
			js = append(js, j)
		}
	}
	sort.SliceStable(js, func(x, y int) bool { return a.best[js[x]].score > a.best[js[y]].score })
	return js
}

// refine gives the RefineNeighbours best-scoring neighbours RefineDraws
// more exploration releases each and scores their events again.
func (a *auditor) refine() error {
	js := a.byScore()
	for _, j := range js[:min(a.opt.RefineNeighbours, len(js))] {
		nb := a.nbs[j]
		o := a.obsN[j]
		// The counts only: the support checks stay on the first draws,
		// which the witnesses' streams replay.
		if err := a.sampleInto(o, nb.db, nb.stream+"/refine", a.opt.RefineDraws, nb.stats, false); err != nil {
			return err
		}
		o.draws += a.opt.RefineDraws
		a.best[j] = a.bestOf(j)
		a.rep.Budget.Refined++
	}
	return nil
}

func (a *auditor) supportWitness(j int, key string, underD bool) *AuditWitness {
	w := a.witness("support", j, FromKey(key), underD)
	under, other := a.obsD, a.obsN[j]
	if !underD {
		under, other = other, under
	}
	w.CanOutputUnder, w.CanOutputOther = true, false
	w.Draw, w.Observed, w.Draws = under.first[key], under.count[key], under.draws
	w.ObservedOther, w.DrawsOther = other.count[key], other.draws
	w.ProbLower, _ = a.cpTest.interval(w.Observed, w.Draws)
	_, w.ProbOtherUpper = a.cpTest.interval(w.ObservedOther, w.DrawsOther)
	w.EpsilonLower = auditEpsLower(w.ProbLower, w.ProbOtherUpper)
	return w
}

// predict is the loss a test on ConfirmDraws fresh releases would prove
// if the event's probabilities were the pessimistic ends of the
// exploration's intervals (kHi of nHi releases of the database where the
// event is the more likely, kLo of nLo of the other). It is a ranking, not
// a bound, and may be negative.
func (a *auditor) predict(kHi, nHi, kLo, nLo int) float64 {
	pHi, _ := a.cpScore.interval(kHi, nHi)
	_, pLo := a.cpScore.interval(kLo, nLo)
	n := a.opt.ConfirmDraws
	lo, _ := a.cpTest.interval(int(math.Floor(pHi*float64(n))), n)
	_, hi := a.cpTest.interval(min(int(math.Ceil(pLo*float64(n))), n), n)
	if !(lo > 0) {
		// Too rare to be proved: rank by the plug-in ratio, below every
		// event that could be.
		return math.Log(math.Max(pHi, 1e-300)/pLo) - 1e3
	}
	return math.Log(lo / hi)
}

// bestEvent scores the events on statistic i between D (histogram hD) and
// neighbour j (hN) and returns the best, or nil if the statistic took one
// value only.
func (a *auditor) bestEvent(j, i int, hD, hN map[int]int) *auditHypothesis {
	vals := make([]int, 0, len(hD)+len(hN))
	for v := range hD {
		vals = append(vals, v)
	}
	for v := range hN {
		if _, ok := hD[v]; !ok {
			vals = append(vals, v)
		}
	}
	if len(vals) < 2 {
		return nil
	}
	slices.Sort(vals)
	nD, nN := a.obsD.draws, a.obsN[j].draws
	var best *auditHypothesis
	try := func(kD, kN int, ev AuditEvent) {
		a.rep.Budget.Events++
		for _, underD := range []bool{true, false} {
			var s float64
			if underD {
				s = a.predict(kD, nD, kN, nN)
			} else {
				s = a.predict(kN, nN, kD, nD)
			}
			if best == nil || s > best.score {
				e := ev
				best = &auditHypothesis{nb: j, stat: i, event: e, underD: underD, score: s}
			}
		}
	}
	st := a.probes.stats[i]
	base := AuditEvent{Statistic: st.kind, Sequence: st.seq}
	// Thresholds: count >= t and count <= t.
	totD, totN := 0, 0
	for _, v := range vals {
		totD += hD[v]
		totN += hN[v]
	}
	cumD, cumN := 0, 0
	for x := 0; x+1 < len(vals); x++ {
		cumD += hD[vals[x]]
		cumN += hN[vals[x]]
		lo, hi := vals[x], vals[x+1]
		le := base
		le.AtMost = &lo
		try(cumD, cumN, le)
		ge := base
		ge.AtLeast = &hi
		try(totD-cumD, totN-cumN, ge)
	}
	// Likelihood-ratio sets: the values in order of their estimated ratio
	// P(v | D)/P(v | D'); each proper initial segment is an event the more
	// likely under D, each final one under D' (try scores both).
	ratio := func(v int) float64 {
		return (float64(hD[v]) + 0.5) / float64(nD+1) / ((float64(hN[v]) + 0.5) / float64(nN+1))
	}
	byRatio := slices.Clone(vals)
	sort.SliceStable(byRatio, func(x, y int) bool { return ratio(byRatio[x]) > ratio(byRatio[y]) })
	kD, kN := 0, 0
	for x := 0; x+1 < len(byRatio); x++ {
		kD += hD[byRatio[x]]
		kN += hN[byRatio[x]]
		in := slices.Clone(byRatio[:x+1])
		slices.Sort(in)
		ev := base
		ev.In = in
		try(kD, kN, ev)
		rest := slices.Clone(byRatio[x+1:])
		slices.Sort(rest)
		ev.In = rest
		try(totD-kD, totN-kN, ev)
	}
	return best
}

// confirm tests the best events of the ConfirmNeighbours best-scoring
// neighbours on fresh releases.
func (a *auditor) confirm() error {
	k := a.opt.ConfirmNeighbours
	if k == 0 {
		return nil
	}
	var hs []*auditHypothesis
	for _, j := range a.byScore() {
		hs = append(hs, a.best[j])
	}
	hs = hs[:min(k, len(hs))]
	if len(hs) == 0 {
		return nil
	}
	ps := newProbeSet()
	idx := make([]int, len(hs))
	for t, h := range hs {
		st := a.probes.stats[h.stat]
		idx[t] = ps.add(st.kind, st.seq)
	}
	vals := make([]int, len(ps.stats))
	n := a.opt.ConfirmDraws
	kD, firstD := make([]int, len(hs)), make([]int, len(hs))
	for t := range firstD {
		firstD[t] = -1
	}
	err := a.draw(a.d, auditStreamConfirm+"D", n, func(i int, seqs [][]int) {
		ps.eval(seqs, vals)
		for t, h := range hs {
			if h.event.holdsValue(vals[idx[t]]) {
				if kD[t]++; firstD[t] < 0 {
					firstD[t] = i
				}
			}
		}
	})
	if err != nil {
		return err
	}
	for t, h := range hs {
		nb := a.nbs[h.nb]
		kN, firstN := 0, -1
		stream := auditStreamConfirm + strings.TrimPrefix(nb.stream, "audit/")
		err := a.draw(nb.db, stream, n, func(i int, seqs [][]int) {
			if h.event.holdsValue(auditStatValue(h.event.Statistic, h.event.Sequence, seqs)) {
				if kN++; firstN < 0 {
					firstN = i
				}
			}
		})
		if err != nil {
			return err
		}
		ev := h.event
		ev.describe()
		w := a.witness("statistical", h.nb, ev.Sequence, h.underD)
		w.Event = &ev
		w.Observed, w.ObservedOther, w.Draw, w.Stream = kD[t], kN, firstD[t], auditStreamConfirm+"D"
		if !h.underD {
			w.Observed, w.ObservedOther, w.Draw, w.Stream = kN, kD[t], firstN, stream
		}
		w.StreamSource = describeSource(noise.Derive(a.opt.Src, w.Stream))
		w.Draws, w.DrawsOther = n, n
		w.ProbLower, _ = a.cpTest.interval(w.Observed, n)
		_, w.ProbOtherUpper = a.cpTest.interval(w.ObservedOther, n)
		w.EpsilonLower = auditEpsLower(w.ProbLower, w.ProbOtherUpper)
		underDB, otherDB := a.d, nb.db
		if !h.underD {
			underDB, otherDB = otherDB, underDB
		}
		if len(w.Sequence) > 0 {
			w.CanOutputUnder, w.CanOutputOther = a.m.CanOutput(underDB, w.Sequence), a.m.CanOutput(otherDB, w.Sequence)
		}
		a.rep.Tests = append(a.rep.Tests, w)
	}
	return nil
}

// auditCP caches Clopper-Pearson intervals by (k, n) at one level.
type auditCP struct {
	level float64
	memo  map[[2]int][2]float64
}

func (c *auditCP) interval(k, n int) (lo, hi float64) {
	if v, ok := c.memo[[2]int{k, n}]; ok {
		return v[0], v[1]
	}
	lo, hi = stats.ClopperPearson(k, n, c.level)
	c.memo[[2]int{k, n}] = [2]float64{lo, hi}
	return lo, hi
}

// auditEpsLower is max(0, ln(lo/hi)).
func auditEpsLower(lo, hi float64) float64 {
	if !(lo > 0) || !(hi > 0) || lo <= hi {
		return 0
	}
	return math.Log(lo / hi)
}

func (a *auditor) conclude() {
	rep := a.rep
	var best *AuditWitness
	for _, w := range rep.Tests {
		if best == nil || w.EpsilonLower > best.EpsilonLower {
			best = w
		}
	}
	if best != nil {
		rep.EpsilonLower, rep.Strongest = best.EpsilonLower, best
	}
	// Support violations count only if the model survived every check.
	if rep.SupportModelSound && len(a.support) > 0 {
		rep.SupportViolations = len(a.support)
		// The witness: a person of the input exposed by their removal if
		// any (the situation of Proposition 3.5), then the output seen
		// most often.
		var w *AuditWitness
		for _, s := range a.support {
			if w == nil {
				w = s
				continue
			}
			if rs, rw := s.Change == "remove", w.Change == "remove"; rs != rw {
				if rs {
					w = s
				}
				continue
			}
			if float64(s.Observed)/float64(s.Draws) > float64(w.Observed)/float64(w.Draws) {
				w = s
			}
		}
		rep.Violation, rep.Witness = true, w
	} else if best != nil && best.EpsilonLower > a.opt.Epsilon {
		rep.Violation, rep.Witness = true, best
	}
	if nt := rep.NoiseTest; nt != nil {
		rep.EpsilonLower = max(rep.EpsilonLower, nt.EpsilonLower)
		if nt.Violation && !rep.Violation {
			rep.Violation = true
			rep.Witness = &AuditWitness{
				Kind: "noise", PersonsD: len(a.d.Users), Sequence: []int{}, Under: "D", Stream: "audit/noise",
				StreamSource: describeSource(noise.Derive(a.opt.Src, "audit/noise")), Draw: -1,
				Draws: nt.Test.Draws, EpsilonLower: nt.EpsilonLower,
			}
		}
	}
	switch {
	case rep.Violation && rep.Witness.Kind == "noise":
		nt := rep.NoiseTest
		rep.Verdict = fmt.Sprintf("not %g-DP: %d noisy counts from %d releases show less noise than stated (p = %.3g); the noise spends at least %.3g, at %g confidence",
			a.opt.Epsilon, nt.Test.Draws, nt.Releases, nt.Test.PValue, nt.EpsilonLower, nt.Confidence)
	case rep.Violation && rep.Witness.Kind == "support":
		rep.Verdict = fmt.Sprintf("not DP: a release of %s contained a sequence that %s cannot release (infinite privacy loss; %d such pairs)",
			rep.Witness.Under, rep.Witness.Other, rep.SupportViolations)
	case rep.Violation:
		rep.Verdict = fmt.Sprintf("not %g-DP: %d fresh releases of each database prove a privacy loss of at least %.3g on the event %q (%s vs %s), at %g confidence",
			a.opt.Epsilon, a.opt.ConfirmDraws, rep.EpsilonLower, rep.Witness.Event.Text, rep.Witness.Under, rep.Witness.Other, a.opt.Confidence)
	case !rep.SupportModelSound:
		rep.Verdict = "support model unsound: releases contained sequences CanOutput excludes; the counts show no violation"
	default:
		rep.Verdict = fmt.Sprintf("no violation found within the stated budget (largest proved loss %.3g, at %g confidence)", rep.EpsilonLower, a.opt.Confidence)
	}
	if f := rep.Budget.ScaledBy; f < 1 {
		rep.Verdict += fmt.Sprintf("; the search was scaled down to the database's size (draws by %.3g, neighbours by %.3g: budget)", f, math.Sqrt(f))
	}
	if !rep.SupportModelSound && rep.Violation {
		rep.Verdict += "; support model unsound as well"
	}
}
