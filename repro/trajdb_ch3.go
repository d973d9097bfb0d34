// Chapter 3 of Guerra-Balboa's thesis (Sec. 3.4.1.4): Propositions 3.5
// and 3.6 and the home/work quasi-identifier attack the thesis describes
// after Proposition 3.5, computed with package trajdb's mechanisms, audit
// and attack.

package repro

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/internal/stats"
	"github.com/tracepriv/tracepriv/internal/trajdata"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trajdb"
)

// Chapter3Options sets up ReproduceChapter3. Zero fields take the defaults
// given.
type Chapter3Options struct {
	// Epsilon is the privacy parameter every mechanism runs at (default 1).
	Epsilon float64
	// Mechanisms builds, for given bounds, the mechanisms set beside the
	// flawed control, which always comes first (default
	// Chapter3Mechanisms). It is called with AuditDemoBounds for the
	// propositions and with the commuters' bounds for the attack.
	Mechanisms func(trajdb.Bounds) []trajdb.Mechanism
	// Draws is the number of releases of D and of D without the victim in
	// the Proposition 3.5 demonstration (default 1000).
	Draws int
	// Audit is the support auditor's budget (Epsilon and Src are set by
	// the reproduction); Attack the attack's (the same).
	Audit  trajdb.AuditOptions
	Attack trajdb.QIAttackOptions
	// AttackEpsilons are the privacy parameters the attack is run at
	// (default 0.5, 1, 2, 4 and 8: at small epsilon the exploration trees
	// release no individual path at all, so the larger ones show the
	// advantage growing within its bound).
	AttackEpsilons []float64
	// Commuters is the attack's synthetic database (default a 5x5 grid,
	// 150 people, paths of 3 to 5 cells).
	Commuters trajdata.CommuterOptions
	// Src is the randomness; nil means crypto/rand. Each part draws from
	// its own noise.Derive stream.
	Src noise.Source
	// Progress, if set, is called with the number of releases just drawn.
	Progress func(releases int)
}

// Chapter3QuickAudit is a support audit at about a third of the default
// budget (trajdb.AuditOptions' defaults): 300 exploration releases, 60
// from each of at most 8 removals and 16 additions, 3,000 confirmation
// draws. At epsilon 1 it still finds the flawed control's support
// violation and flags every broken tree from its counts, and finds no
// violation in a correct mechanism (TestReproduceChapter3 checks all three
// at this size), so it checks that the reproduction runs and still
// separates the mechanisms; the published figures use the default.
func Chapter3QuickAudit() trajdb.AuditOptions {
	return trajdb.AuditOptions{Draws: 300, NeighbourDraws: 60, MaxRemovals: 8, MaxAdditions: 16, ConfirmDraws: 3000}
}

// Chapter3SmallAudit is a support audit of draws exploration releases with
// every other budget of Chapter3QuickAudit (and the defaults it keeps:
// 32 random candidates, 8 refined neighbours of 400 releases, 2 confirmed
// of 3,000) scaled by draws/300, each at least 1: a check that the
// reproduction runs end to end at a fraction of the cost (tracepriv repro
// thesis --audit-draws, the CLI's wiring test). Below 300 draws it need
// not separate the mechanisms; TestReproduceChapter3 checks that they are
// at Chapter3QuickAudit's size.
func Chapter3SmallAudit(draws int) (trajdb.AuditOptions, error) {
	if draws < 1 {
		return trajdb.AuditOptions{}, fmt.Errorf("repro: %d audit draws: want at least 1", draws)
	}
	f := float64(draws) / 300
	scale := func(n int) int { return max(1, int(math.Ceil(float64(n)*f))) }
	return trajdb.AuditOptions{
		Draws: draws, NeighbourDraws: scale(60), MaxRemovals: scale(8), MaxAdditions: scale(16),
		RandomCandidates: scale(32), RefineNeighbours: scale(8), RefineDraws: scale(400),
		ConfirmNeighbours: scale(2), ConfirmDraws: scale(3000),
	}, nil
}

// Chapter3Result is the JSON of "tracepriv repro thesis --chapter 3".
type Chapter3Result struct {
	Version    int     `json:"version"`
	Epsilon    float64 `json:"epsilon"`
	Randomness string  `json:"randomness"`
	// Database is the small symbolic database of the Proposition 3.5 and
	// 3.6 demonstrations; Victim holds a sequence nobody else holds.
	Database Chapter3Database `json:"database"`
	// Prop35 is, per mechanism, how often a release contains the victim's
	// sequence with and without the victim.
	Prop35 []Chapter3Support `json:"prop3_5"`
	// Prop36 is the support auditor's report per mechanism.
	Prop36 []*trajdb.AuditReport `json:"prop3_6"`
	// Controls are the auditor's reports on the broken exploration trees
	// (trajdb.NewNegativeControl: noise on present children only, no
	// noise, a tenth of the noise), which claim the trees' support, so
	// that only the releases' counts can show their flaw.
	Controls []*trajdb.AuditReport `json:"audit_controls"`
	// AttackDatabase and QIAttack: the home/work quasi-identifier attack
	// the thesis describes after Proposition 3.5 (not its Example 3.7,
	// which is ReproduceExample37), per mechanism and attack epsilon, on a
	// synthetic commuter database.
	AttackDatabase trajdata.CommuterOptions `json:"attack_database"`
	QIAttack       []*trajdb.QIAttackReport `json:"qi_attack"`
	// Summary states each finding in a sentence.
	Summary []string `json:"summary"`
}

// Chapter3Database describes a demonstration database.
type Chapter3Database struct {
	Symbols   int           `json:"symbols"`
	Persons   int           `json:"persons"`
	Sequences [][]int       `json:"sequences"`
	Victim    string        `json:"victim"`
	VictimSeq []int         `json:"victim_sequence"`
	Bounds    trajdb.Bounds `json:"bounds"`
}

// Chapter3Support is the Proposition 3.5 event for one mechanism: "the
// release contains the victim's sequence", under D (with the victim) and
// D' (without).
type Chapter3Support struct {
	Mechanism trajdb.MechanismName `json:"mechanism"`
	Draws     int                  `json:"draws"`
	// With and Without count the releases containing the sequence;
	// ProbWith and ProbWithout are the frequencies, with Clopper-Pearson
	// intervals (joint 95 %).
	With          int        `json:"with_victim"`
	Without       int        `json:"without_victim"`
	ProbWith      float64    `json:"prob_with_victim"`
	ProbWithout   float64    `json:"prob_without_victim"`
	ProbWithCI    [2]float64 `json:"prob_with_victim_ci"`
	ProbWithoutCI [2]float64 `json:"prob_without_victim_ci"`
	// CanOutputWith and CanOutputWithout are the mechanism's support model.
	CanOutputWith    bool `json:"can_output_with_victim"`
	CanOutputWithout bool `json:"can_output_without_victim"`
	// ClosedFormWith is the exact probability where it is known in closed
	// form (the flawed control: 1 - q^c/(1+q), q = e^(-eps/MaxSeqs), c the
	// sequence's count).
	ClosedFormWith *float64 `json:"closed_form_with_victim,omitempty"`
	// EpsilonLower = max(0, ln(ProbWithCI[0]/ProbWithoutCI[1])) is the
	// privacy loss the draws prove; it is infinite when the support model
	// says the release without the victim cannot contain the sequence.
	EpsilonLower float64 `json:"epsilon_lower"`
	LossInfinite bool    `json:"loss_infinite"`
	Verdict      string  `json:"verdict"`
}

// ReproduceChapter3 reproduces the findings of Sec. 3.4.1.4 of
// Guerra-Balboa's thesis on the flawed present-only control and on each
// mechanism of opt.Mechanisms:
//
//   - Proposition 3.5: a release containing the victim's sequence has
//     probability 0 without the victim under the flawed design (its support
//     model says so, and no draw contradicts it) and positive probability
//     under a correct one;
//   - Proposition 3.6: trajdb.AuditSupport on each mechanism (a violation with a
//     witness for the flawed control, none in the budget for the others),
//     and on the broken trees of trajdb.NegativeControls, which it must
//     flag from their counts;
//   - the home/work quasi-identifier attack the thesis describes after
//     Proposition 3.5 (trajdb.MeasureQIAttack) on a synthetic commuter
//     database.
func ReproduceChapter3(opt Chapter3Options) (*Chapter3Result, error) {
	if opt.Epsilon == 0 {
		opt.Epsilon = 1
	}
	if !(opt.Epsilon > 0) || math.IsInf(opt.Epsilon, 1) {
		return nil, fmt.Errorf("repro: chapter 3: epsilon must be positive and finite, got %v", opt.Epsilon)
	}
	if opt.Draws == 0 {
		opt.Draws = 1000
	}
	if opt.Draws < 0 {
		return nil, fmt.Errorf("repro: chapter 3: draws must be positive, got %d", opt.Draws)
	}
	if opt.AttackEpsilons == nil {
		opt.AttackEpsilons = []float64{0.5, 1, 2, 4, 8}
	}
	for _, e := range opt.AttackEpsilons {
		if !(e > 0) || math.IsInf(e, 1) {
			return nil, fmt.Errorf("repro: chapter 3: attack epsilon must be positive and finite, got %v", e)
		}
	}
	if opt.Commuters == (trajdata.CommuterOptions{}) {
		opt.Commuters = trajdata.CommuterOptions{Rows: 5, Cols: 5, Persons: 150, MaxLen: 5}
	}
	if opt.Mechanisms == nil {
		opt.Mechanisms = Chapter3Mechanisms
	}
	demoBounds := AuditDemoBounds()
	mechs := append([]trajdb.Mechanism{trajdb.FlawedPresentOnly{Contribution: demoBounds}}, opt.Mechanisms(demoBounds)...)
	db, victim := AuditDemoDB()
	vi := slices.IndexFunc(db.Users, func(u trajdb.User) bool { return u.ID == victim })
	vseq := db.Users[vi].Seqs[0]
	res := &Chapter3Result{
		Version: 1, Epsilon: opt.Epsilon, Randomness: randomness(opt.Src),
		Database: Chapter3Database{Symbols: db.Size, Persons: len(db.Users), Sequences: db.Sequences(), Victim: victim, VictimSeq: vseq, Bounds: demoBounds},
	}
	for _, m := range mechs {
		s, err := chapter3Support(m, db, vi, opt)
		if err != nil {
			return nil, err
		}
		res.Prop35 = append(res.Prop35, s)
		res.Summary = append(res.Summary, fmt.Sprintf("Prop. 3.5, %s: %s", m.Name(), s.Verdict))
	}
	for _, m := range mechs {
		ao := opt.Audit
		ao.Epsilon, ao.Src, ao.Progress = opt.Epsilon, noise.Derive(opt.Src, "ch3/audit/"+string(m.Name())), opt.Progress
		rep, err := trajdb.AuditSupport(m, db, ao)
		if err != nil {
			return nil, err
		}
		res.Prop36 = append(res.Prop36, rep)
		res.Summary = append(res.Summary, fmt.Sprintf("Prop. 3.6, %s: %s (%d neighbours, %d releases, %d candidates)",
			m.Name(), rep.Verdict, rep.Budget.Neighbours, rep.Budget.Releases, rep.Budget.Candidates))
	}
	for _, name := range trajdb.NegativeControls()[1:] {
		m, err := trajdb.NewNegativeControl(name, demoBounds)
		if err != nil {
			return nil, err
		}
		ao := opt.Audit
		ao.Epsilon, ao.Src, ao.Progress = opt.Epsilon, noise.Derive(opt.Src, "ch3/audit/"+string(name)), opt.Progress
		rep, err := trajdb.AuditSupport(m, db, ao)
		if err != nil {
			return nil, err
		}
		res.Controls = append(res.Controls, rep)
		res.Summary = append(res.Summary, fmt.Sprintf("audit of the control %s: %s", name, rep.Verdict))
	}
	cdb, err := CommutersDB(opt.Commuters, noise.Derive(opt.Src, "ch3/commuters"))
	if err != nil {
		return nil, err
	}
	res.AttackDatabase = opt.Commuters
	attackBounds := trajdb.Bounds{MaxLen: opt.Commuters.MaxLen, MaxSeqs: 1}
	attackMechs := append([]trajdb.Mechanism{trajdb.FlawedPresentOnly{Contribution: attackBounds}}, opt.Mechanisms(attackBounds)...)
	for _, m := range attackMechs {
		for _, eps := range opt.AttackEpsilons {
			ao := opt.Attack
			ao.Epsilon, ao.Progress = eps, opt.Progress
			ao.Src = noise.Derive(opt.Src, fmt.Sprintf("ch3/attack/%s/%g", m.Name(), eps))
			rep, err := trajdb.MeasureQIAttack(m, cdb, ao)
			if err != nil {
				return nil, err
			}
			res.QIAttack = append(res.QIAttack, rep)
			u := rep.UniquePath
			res.Summary = append(res.Summary, fmt.Sprintf(
				"quasi-identifier attack, %s, epsilon %g: path recovered %.1f%% with the victim vs %.1f%% without (victims with a unique path: %.1f%% vs %.1f%%); advantage %.3f, DP allows %.3f; proved loss >= %.2f, %s",
				m.Name(), eps, 100*rep.All.ExactWith, 100*rep.All.ExactWithout, 100*u.ExactWith, 100*u.ExactWithout,
				rep.All.Advantage, rep.All.AdvantageBound, max(rep.All.EpsilonLower, u.EpsilonLower), chapter3Exceeds(rep.ExceedsDP, eps)))
		}
	}
	return res, nil
}

func chapter3Exceeds(b bool, eps float64) string {
	if b {
		return fmt.Sprintf("refutes epsilon = %g", eps)
	}
	return fmt.Sprintf("consistent with epsilon = %g", eps)
}

// chapter3Support measures the Proposition 3.5 event for m.
func chapter3Support(m trajdb.Mechanism, db *trajdb.DB, vi int, opt Chapter3Options) (Chapter3Support, error) {
	d, err := trajdb.Bound(db, m.Bounds())
	if err != nil {
		return Chapter3Support{}, err
	}
	vseq := d.Users[vi].Seqs[0]
	without := d.Without(vi)
	s := Chapter3Support{
		Mechanism: m.Name(), Draws: opt.Draws,
		CanOutputWith: m.CanOutput(d, vseq), CanOutputWithout: m.CanOutput(without, vseq),
	}
	for side, x := range []*trajdb.DB{d, without} {
		src := noise.Derive(opt.Src, fmt.Sprintf("ch3/prop3.5/%s/%d", m.Name(), side))
		for range opt.Draws {
			rel, err := m.Synthesize(x, opt.Epsilon, src)
			if err != nil {
				return s, fmt.Errorf("repro: chapter 3: %s: %w", m.Name(), err)
			}
			if opt.Progress != nil {
				opt.Progress(1)
			}
			if slices.ContainsFunc(rel.Seqs, func(t []int) bool { return slices.Equal(t, vseq) }) {
				if side == 0 {
					s.With++
				} else {
					s.Without++
				}
			}
		}
	}
	n := float64(opt.Draws)
	s.ProbWith, s.ProbWithout = float64(s.With)/n, float64(s.Without)/n
	level := 1 - 0.05/2
	s.ProbWithCI[0], s.ProbWithCI[1] = stats.ClopperPearson(s.With, opt.Draws, level)
	s.ProbWithoutCI[0], s.ProbWithoutCI[1] = stats.ClopperPearson(s.Without, opt.Draws, level)
	s.EpsilonLower = lossLower(s.ProbWithCI[0], s.ProbWithoutCI[1])
	if f, ok := m.(trajdb.FlawedPresentOnly); ok {
		c := 0 // the copies of the victim's sequence in D
		for _, t := range d.Sequences() {
			if slices.Equal(t, vseq) {
				c++
			}
		}
		q := math.Exp(-opt.Epsilon / float64(f.Contribution.MaxSeqs))
		p := 1 - math.Pow(q, float64(c))/(1+q)
		s.ClosedFormWith = &p
	}
	switch {
	case s.Without > 0 && !s.CanOutputWithout:
		return s, fmt.Errorf("repro: chapter 3: %s released the victim's sequence without the victim although its CanOutput says it cannot", m.Name())
	case s.With > 0 && !s.CanOutputWithout:
		s.LossInfinite = true
		s.Verdict = fmt.Sprintf("the victim's sequence is released in %d of %d draws with the victim and has probability 0 without (support model; 0 of %d draws): infinite privacy loss, not DP for any epsilon",
			s.With, opt.Draws, opt.Draws)
	case s.Without > 0:
		s.Verdict = fmt.Sprintf("the victim's sequence is released in %d of %d draws with the victim and %d of %d without: positive probability either way (proved loss >= %.3g)",
			s.With, opt.Draws, s.Without, opt.Draws, s.EpsilonLower)
	case s.CanOutputWithout:
		s.Verdict = fmt.Sprintf("the victim's sequence is released in %d of %d draws with the victim and none of %d without; the support model says it is possible (probability below %.3g at 95%%)",
			s.With, opt.Draws, opt.Draws, s.ProbWithoutCI[1])
	default:
		s.Verdict = fmt.Sprintf("the victim's sequence is never released (%d draws each way)", opt.Draws)
	}
	return s, nil
}

// Chapter3Mechanisms returns the correct mechanisms of the chapter, the
// prefix tree and the n-gram tree, with their default settings and the
// bounds b.
func Chapter3Mechanisms(b trajdb.Bounds) []trajdb.Mechanism {
	return []trajdb.Mechanism{&trajdb.Prefix{Contribution: b}, &trajdb.NGram{Contribution: b}}
}

// randomness names src for a result's "randomness" field (nil is
// crypto/rand).
func randomness(src noise.Source) string {
	if src == nil {
		return "crypto"
	}
	return noise.Describe(src)
}

// lossLower is max(0, ln(lo/hi)): the privacy loss that a lower bound lo
// on one probability and an upper bound hi on its neighbour's prove.
func lossLower(lo, hi float64) float64 {
	if !(lo > 0) || !(hi > 0) || lo <= hi {
		return 0
	}
	return math.Log(lo / hi)
}
