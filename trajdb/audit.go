package trajdb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/risk"
)

// AuditOptions is the search budget of AuditSupport. Zero fields take the
// defaults given; a negative MaxRemovals, MaxAdditions or RandomCandidates
// means none.
type AuditOptions struct {
	// Epsilon is the privacy parameter the mechanism is run at and the
	// claim the statistical check tests.
	Epsilon float64
	// Draws is the number of releases sampled from the input database
	// (default 200), NeighbourDraws from each neighbour (default 100).
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
	// Confidence is the simultaneous confidence of every Clopper-Pearson
	// interval of the statistical check (default 0.95; Bonferroni over all
	// the probabilities estimated).
	Confidence float64
	// StopAtFirst ends the search at the first neighbour that shows a
	// support violation.
	StopAtFirst bool
	// Src is the randomness of the releases and the random candidates; nil
	// means crypto/rand. Each database's releases come from its own
	// stream, noise.Derive(Src, Stream), so a seeded witness can be
	// replayed.
	Src noise.Source
	// Progress, if set, is called with the number of releases just drawn.
	Progress func(releases int)
}

// AuditReport is the outcome of AuditSupport.
type AuditReport struct {
	Version   int     `json:"version"`
	Mechanism string  `json:"mechanism"`
	Epsilon   float64 `json:"epsilon"`
	// Violation is true when the search found evidence that the mechanism
	// is not Epsilon-DP at user level: a support violation (a sequence
	// observed in a release of one database that the mechanism's own,
	// unrefuted, support model says the neighbour can never release: an
	// infinite privacy loss, Propositions 3.5 and 3.6), or a statistical
	// one (an empirical lower bound on the privacy loss above Epsilon).
	// Witness is the strongest such finding.
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
	// EpsilonLower is the largest lower bound on the privacy loss that the
	// releases show, over every tested event "the release contains s"
	// (both directions, every neighbour), each bound holding at the
	// report's Confidence simultaneously; Strongest is that event.
	EpsilonLower float64       `json:"epsilon_lower"`
	Strongest    *AuditWitness `json:"strongest_event,omitempty"`
	Budget       AuditBudget   `json:"budget"`
	Verdict      string        `json:"verdict"`
	// Randomness names the source: "crypto" (crypto/rand) or "seeded:N".
	Randomness string `json:"randomness"`
}

// AuditBudget states how much of the neighbourhood the search covered.
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
	// Releases is the total number of releases drawn.
	Releases int `json:"releases"`
	// SequencesObserved is the number of distinct sequences seen in any
	// release, SupportChecks the number of CanOutput calls and Events the
	// number of (neighbour, sequence) events tested statistically.
	SequencesObserved int     `json:"sequences_observed"`
	SupportChecks     int     `json:"support_checks"`
	Events            int     `json:"events_tested"`
	Confidence        float64 `json:"confidence"`
	StoppedEarly      bool    `json:"stopped_early"`
}

// AuditWitness is one finding: a pair of neighbouring databases, D (the
// bounded input) and D' (D with one person removed or added), and a
// sequence whose presence in a release tells them apart.
type AuditWitness struct {
	// Kind is "support" (Under can release Sequence and, by the
	// mechanism's support model, Other cannot), "statistical" (releases
	// of Under contain Sequence more often than e^epsilon times those of
	// Other could) or "unsound" (a release of Under contained Sequence
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
	Sequence        []int   `json:"sequence"`
	// Under ("D" or "D'") is the database whose releases contained
	// Sequence, Other the other one.
	Under string `json:"under"`
	Other string `json:"other,omitempty"`
	// Stream labels Under's release stream (noise.Derive(Src, Stream)),
	// StreamSource names it ("seeded:N/label" for a seeded audit) and Draw
	// is the 0-based index of the first of its releases that contained
	// Sequence, so a seeded audit can be replayed.
	Stream       string `json:"stream"`
	StreamSource string `json:"stream_source"`
	Draw         int    `json:"draw"`
	// CanOutputUnder and CanOutputOther are the mechanism's support model
	// for Sequence on the two databases.
	CanOutputUnder bool `json:"can_output_under"`
	CanOutputOther bool `json:"can_output_other"`
	// Observed of Draws releases of Under contained Sequence, and
	// ObservedOther of DrawsOther releases of Other.
	Observed      int `json:"observed"`
	Draws         int `json:"draws"`
	ObservedOther int `json:"observed_other"`
	DrawsOther    int `json:"draws_other"`
	// ProbLower and ProbOtherUpper bound P(Sequence in M(Under)) from
	// below and P(Sequence in M(Other)) from above (Clopper-Pearson, at
	// the report's simultaneous Confidence); EpsilonLower =
	// max(0, ln(ProbLower/ProbOtherUpper)) is the privacy loss they prove.
	ProbLower      float64 `json:"prob_lower"`
	ProbOtherUpper float64 `json:"prob_other_upper"`
	EpsilonLower   float64 `json:"epsilon_lower"`
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
	auditDefaultDraws          = 200
	auditDefaultNeighbourDraws = 100
	auditDefaultRemovals       = 32
	auditDefaultAdditions      = 64
	auditDefaultRandom         = 32
	auditDefaultConfidence     = 0.95
	auditStreamD               = "audit/D"
)

// AuditSupport searches the neighbours of db for evidence that m is not
// Epsilon-DP, in the style of the thesis's Propositions 3.5 and 3.6: an
// output that one database can produce and its neighbour cannot.
//
// The search does not take the mechanism's word for anything it can check.
// It draws opt.Draws releases of D = Bound(db, m.Bounds()) and
// opt.NeighbourDraws of each neighbour D' (one person removed; one person
// holding a candidate sequence added), and for every sequence s actually
// observed in a release of one database asks m.CanOutput whether the other
// can release it: an observed s that the other cannot release is a support
// violation. Before it believes CanOutput's "no", it checks every
// observation against the model on the database it came from; a model that
// excludes an observed output is reported unsound, and its answers are then
// not counted as evidence. Independently of the model, each event "the
// release contains s" gives a Clopper-Pearson lower bound on the privacy
// loss between the two databases; a bound above Epsilon is a statistical
// violation, which catches a mechanism whose support model claims more than
// it releases.
//
// What it cannot do: a search finds violations, it does not prove their
// absence. "No violation" means none among the neighbours, candidates and
// draws of the stated budget; a violation needing a neighbour outside the
// budget, or an output rarer than about 1/Draws, goes unseen. A support
// violation is exactly as trustworthy as CanOutput's "no" on the other
// database, which no finite sampling can confirm; the statistical check
// needs no model but only proves losses that the draws can resolve.
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
	if err := opt.fill(b); err != nil {
		return nil, err
	}
	d, err := Bound(db, b)
	if err != nil {
		return nil, err
	}
	a := &auditor{m: m, opt: opt, d: d, seen: map[string]bool{}}
	a.rep = &AuditReport{
		Version: 1, Mechanism: m.Name(), Epsilon: opt.Epsilon, SupportModelSound: true,
		Randomness: describeSource(opt.Src),
		Budget: AuditBudget{
			Persons: len(d.Users), Draws: opt.Draws, NeighbourDraws: opt.NeighbourDraws,
			MaxCandidateLen: opt.MaxCandidateLen, Confidence: opt.Confidence,
		},
	}
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
	if err := def(&o.NeighbourDraws, auditDefaultNeighbourDraws, "NeighbourDraws", false); err != nil {
		return err
	}
	_ = def(&o.MaxRemovals, auditDefaultRemovals, "", true)
	_ = def(&o.MaxAdditions, auditDefaultAdditions, "", true)
	_ = def(&o.RandomCandidates, auditDefaultRandom, "", true)
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
// sequence (Key), in how many releases it appeared and the first one.
type auditObs struct {
	draws int
	count map[string]int
	first map[string]int
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
}

// auditEvent is the event "the release contains key" between D and one
// neighbour, with how often each side showed it.
type auditEvent struct {
	nb     int
	key    string
	kD, kN int
}

type auditor struct {
	m      Mechanism
	opt    AuditOptions
	d      *DB
	rep    *AuditReport
	obsD   *auditObs
	nbs    []auditNeighbour
	obsN   []*auditObs
	cands  [][]int
	seen   map[string]bool
	events []auditEvent
	// support holds the support violations, before the soundness verdict.
	support []*AuditWitness
}

func (a *auditor) canOutput(db *DB, s []int) bool {
	a.rep.Budget.SupportChecks++
	return a.m.CanOutput(db, s)
}

// sample draws n releases of db from the stream labelled stream.
func (a *auditor) sample(db *DB, stream string, n int) (*auditObs, error) {
	src := noise.Derive(a.opt.Src, stream)
	o := &auditObs{draws: n, count: map[string]int{}, first: map[string]int{}}
	for i := range n {
		rel, err := a.m.Release(db, a.opt.Epsilon, src)
		if err != nil {
			return nil, fmt.Errorf("trajdb: audit: %s release of %s: %w", a.m.Name(), stream, err)
		}
		inThis := map[string]bool{}
		for _, s := range rel.Seqs {
			k := Key(s)
			if inThis[k] {
				continue
			}
			inThis[k] = true
			if o.count[k] == 0 {
				o.first[k] = i
			}
			o.count[k]++
			a.seen[k] = true
		}
		a.rep.Budget.Releases++
		if a.opt.Progress != nil {
			a.opt.Progress(1)
		}
	}
	return o, nil
}

func (a *auditor) run() error {
	var err error
	if a.obsD, err = a.sample(a.d, auditStreamD, a.opt.Draws); err != nil {
		return err
	}
	a.checkSound(-1, a.obsD)
	a.candidates()
	a.neighbours()
	for j := range a.nbs {
		if err := a.visit(j); err != nil {
			return err
		}
		if a.opt.StopAtFirst && len(a.support) > 0 {
			a.rep.Budget.StoppedEarly = j+1 < len(a.nbs)
			break
		}
	}
	a.rep.Budget.SequencesObserved = len(a.seen)
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
// support betrays), then additions of one person per candidate.
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
	for _, nb := range a.nbs {
		if nb.change == "remove" {
			a.rep.Budget.Removals++
		} else {
			a.rep.Budget.Additions++
		}
	}
	a.rep.Budget.Neighbours = len(a.nbs)
}

// witness fills the fields every finding shares. j < 0 means D alone.
func (a *auditor) witness(kind string, j int, key string, underD bool) *AuditWitness {
	w := &AuditWitness{Kind: kind, Sequence: FromKey(key), PersonsD: len(a.d.Users), Under: "D", Stream: auditStreamD}
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
			w := a.witness("unsound", j, k, j < 0)
			w.Draw, w.Observed, w.Draws = o.first[k], o.count[k], o.draws
			a.rep.UnsoundWitness = w
		}
	}
}

// visit samples neighbour j and compares it with D both ways.
func (a *auditor) visit(j int) error {
	nb := a.nbs[j]
	o, err := a.sample(nb.db, nb.stream, a.opt.NeighbourDraws)
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
	// Events for the statistical check.
	union := map[string]bool{}
	for k := range a.obsD.count {
		union[k] = true
	}
	for k := range o.count {
		union[k] = true
	}
	keys := make([]string, 0, len(union))
	for k := range union {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.events = append(a.events, auditEvent{nb: j, key: k, kD: a.obsD.count[k], kN: o.count[k]})
	}
	return nil
}

func (a *auditor) supportWitness(j int, key string, underD bool) *AuditWitness {
	w := a.witness("support", j, key, underD)
	under, other := a.obsD, a.obsN[j]
	if !underD {
		under, other = other, under
	}
	w.CanOutputUnder, w.CanOutputOther = true, false
	w.Draw, w.Observed, w.Draws = under.first[key], under.count[key], under.draws
	w.ObservedOther, w.DrawsOther = other.count[key], other.draws
	return w
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
	lo, hi = risk.ClopperPearson(k, n, c.level)
	c.memo[[2]int{k, n}] = [2]float64{lo, hi}
	return lo, hi
}

// epsLower is max(0, ln(lo/hi)).
func auditEpsLower(lo, hi float64) float64 {
	if !(lo > 0) || !(hi > 0) || lo <= hi {
		return 0
	}
	return math.Log(lo / hi)
}

func (a *auditor) conclude() {
	rep := a.rep
	// Bonferroni over every probability estimated: one per sequence for D
	// (its releases are shared by all neighbours) and one per event for
	// the neighbour.
	dKeys := map[string]bool{}
	for _, e := range a.events {
		dKeys[e.key] = true
	}
	estimates := len(dKeys) + len(a.events)
	rep.Budget.Events = len(a.events)
	cp := &auditCP{level: 1 - (1-a.opt.Confidence)/float64(max(estimates, 1)), memo: map[[2]int][2]float64{}}
	nD := a.obsD.draws
	var best *AuditWitness
	for _, e := range a.events {
		nN := a.obsN[e.nb].draws
		loD, hiD := cp.interval(e.kD, nD)
		loN, hiN := cp.interval(e.kN, nN)
		for _, underD := range []bool{true, false} {
			lo, hi := loD, hiN
			if !underD {
				lo, hi = loN, hiD
			}
			eps := auditEpsLower(lo, hi)
			if eps <= 0 || (best != nil && !(eps > best.EpsilonLower)) {
				continue
			}
			w := a.witness("statistical", e.nb, e.key, underD)
			under, other := a.obsD, a.obsN[e.nb]
			if !underD {
				under, other = other, under
			}
			w.Draw, w.Observed, w.Draws = under.first[e.key], under.count[e.key], under.draws
			w.ObservedOther, w.DrawsOther = other.count[e.key], other.draws
			w.ProbLower, w.ProbOtherUpper, w.EpsilonLower = lo, hi, eps
			underDB, otherDB := a.d, a.nbs[e.nb].db
			if !underD {
				underDB, otherDB = otherDB, underDB
			}
			w.CanOutputUnder, w.CanOutputOther = a.m.CanOutput(underDB, w.Sequence), a.m.CanOutput(otherDB, w.Sequence)
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
		// with the largest lower confidence bound on its probability.
		var w *AuditWitness
		for _, s := range a.support {
			lo, _ := cp.interval(s.Observed, s.Draws)
			_, hi := cp.interval(s.ObservedOther, s.DrawsOther)
			s.ProbLower, s.ProbOtherUpper, s.EpsilonLower = lo, hi, auditEpsLower(lo, hi)
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
			if s.ProbLower > w.ProbLower {
				w = s
			}
		}
		rep.Violation, rep.Witness = true, w
	} else if best != nil && best.EpsilonLower > a.opt.Epsilon {
		rep.Violation, rep.Witness = true, best
	}
	switch {
	case rep.Violation && rep.Witness.Kind == "support":
		rep.Verdict = fmt.Sprintf("not DP: a release of %s contained a sequence that %s cannot release (infinite privacy loss; %d such pairs)",
			rep.Witness.Under, rep.Witness.Other, rep.SupportViolations)
	case rep.Violation:
		rep.Verdict = fmt.Sprintf("not %g-DP: the releases prove a privacy loss of at least %.3g at %g confidence", a.opt.Epsilon, rep.EpsilonLower, a.opt.Confidence)
	case !rep.SupportModelSound:
		rep.Verdict = "support model unsound: releases contained sequences CanOutput excludes; no violation shown by the releases alone"
	default:
		rep.Verdict = "no violation found within the stated budget"
	}
	if !rep.SupportModelSound && rep.Violation {
		rep.Verdict += "; support model unsound as well"
	}
}
