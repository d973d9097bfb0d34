package trajdb

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tracepriv/tracepriv/noise"
)

// FlawedPresentOnly is NOT DIFFERENTIALLY PRIVATE, for any epsilon. It is
// the negative control of AuditSupport and of the Chapter 3 reproduction,
// and must never be used to release data: the CLI's release command does not
// offer it.
//
// It is a faithful version of the "noisy counts of present sequences"
// design shared by the sequence-tree and trajectory-count mechanisms that
// Guerra-Balboa's thesis (Sec. 3.4.1.4, Propositions 3.5 and 3.6) shows are
// not DP: [112] NTPT, [113], [114] and, most directly, [115], which adds
// Laplace noise to the count of each whole trajectory. Every distinct
// sequence present in the input gets its count perturbed with the discrete
// Laplace (two-sided geometric) noise that the designs' Laplace-mechanism
// argument calls for, with the user-level sensitivity MaxSeqs, and is
// released max(0, count+noise) times. What the designs miss is the rest of
// the universe: a sequence absent from the input has no count to perturb, so
// it can never be released. Removing the one person who holds a sequence
// therefore turns every output containing it from possible into impossible,
// and the privacy loss of such an output is infinite (Proposition 3.5).
//
// Its CanOutput is honest: a sequence can be released if and only if it is
// present in the database.
type FlawedPresentOnly struct {
	// Contribution is the per-person bounding the noise is calibrated to.
	Contribution Bounds
}

// Name returns ControlPresentOnly.
func (f FlawedPresentOnly) Name() MechanismName { return ControlPresentOnly }

// Bounds returns f.Contribution.
func (f FlawedPresentOnly) Bounds() Bounds { return f.Contribution }

// Synthesize perturbs the count of each distinct sequence of db with two-sided
// geometric noise of parameter epsilon/MaxSeqs and releases the sequence
// max(0, count+noise) times, in sorted order. db must already be bounded by
// f.Contribution (Bound); Synthesize refuses a database that is not. It spends,
// in the designs' own accounting, epsilon; that accounting is wrong (see the
// type's documentation). src nil means crypto/rand.
func (f FlawedPresentOnly) Synthesize(db *DB, epsilon float64, src noise.Source) (*Synthetic, error) {
	if err := checkExploreInput(f.Name(), db, f.Contribution, epsilon); err != nil {
		return nil, err
	}
	counts := seqCounts(db.Sequences())
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sens := float64(f.Contribution.MaxSeqs)
	lambda := epsilon / sens
	out := &Synthetic{Mechanism: f.Name(), EpsilonSpent: epsilon, Nodes: len(keys), Source: describeSource(src)}
	for _, k := range keys {
		n := int64(counts[k]) + noise.TwoSidedGeometric(src, lambda)
		s := FromKey(k)
		for range max(n, 0) {
			out.Seqs = append(out.Seqs, slices.Clone(s))
		}
	}
	// One "level": the whole sequences, with the scale and threshold the
	// designs use (a count rounded to 0 or below is dropped).
	out.Levels = []Level{{Depth: 0, Epsilon: epsilon, Scale: sens / epsilon, Nodes: len(keys), Threshold: 1}}
	return out, nil
}

// CanOutput reports whether seq is one of db's sequences: the only ones
// FlawedPresentOnly can release (each with probability
// P(count+noise >= 1) > 0).
func (f FlawedPresentOnly) CanOutput(db *DB, seq []int) bool {
	for _, u := range db.Users {
		if slices.ContainsFunc(u.Seqs, func(s []int) bool { return slices.Equal(s, seq) }) {
			return true
		}
	}
	return false
}

// The negative controls of AuditSupport, by name. None is differentially
// private at the epsilon it claims; NewMechanism refuses them all, so the
// CLI's release command never offers them.
const (
	// ControlPresentOnly is FlawedPresentOnly: noisy counts of the whole
	// sequences present in the input, with an honest support model.
	ControlPresentOnly MechanismName = "flawed-present-only"
	// ControlPresentOnlyPrefix is the prefix tree with noise on the
	// children present in the data only (the flaw of Proposition 3.5 in
	// a tree): a node nobody holds is never created, so a sequence held by
	// one person alone disappears with them.
	ControlPresentOnlyPrefix MechanismName = "flawed-present-only-prefix"
	// ControlPrefixNoiseless is the prefix tree with no noise and no
	// threshold: its release is the bounded input.
	ControlPrefixNoiseless MechanismName = "prefix-noiseless"
	// ControlNGramTenthNoise is the n-gram tree with its noise and
	// thresholds calibrated to a tenth of the sensitivity, so up to ten
	// times the epsilon it claims.
	ControlNGramTenthNoise MechanismName = "ngram-tenth-noise"
)

// NegativeControls lists the names NewNegativeControl accepts.
func NegativeControls() []MechanismName {
	return []MechanismName{ControlPresentOnly, ControlPresentOnlyPrefix, ControlPrefixNoiseless, ControlNGramTenthNoise}
}

// NegativeControlNames lists NegativeControls, joined by sep.
func NegativeControlNames(sep string) string {
	var s []string
	for _, n := range NegativeControls() {
		s = append(s, string(n))
	}
	return strings.Join(s, sep)
}

// NewNegativeControl returns the negative control called name (one of
// NegativeControls) with contribution bounds b. It is NOT DIFFERENTIALLY
// PRIVATE and exists to show that AuditSupport can fail.
//
// The three broken trees are the prefix and n-gram trees with one switch
// flipped, and they claim the support of the tree they break (every
// sequence of at most MaxLen symbols, whatever the data), as a mistaken
// implementation would: their support model cannot betray them, only their
// counts can. Their releases name the control, not the tree.
func NewNegativeControl(name MechanismName, b Bounds) (Mechanism, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("trajdb: control %s: %w", name, err)
	}
	switch name {
	case ControlPresentOnly:
		return FlawedPresentOnly{Contribution: b}, nil
	case ControlPresentOnlyPrefix:
		return brokenTree{name, &Prefix{Contribution: b, hooks: exploreHooks{presentOnly: true}}}, nil
	case ControlPrefixNoiseless:
		return brokenTree{name, &Prefix{Contribution: b, hooks: exploreHooks{exact: true}}}, nil
	case ControlNGramTenthNoise:
		return brokenTree{name, &NGram{Contribution: b, hooks: exploreHooks{sensFactor: 0.1}}}, nil
	}
	return nil, fmt.Errorf("trajdb: unknown negative control %q (want one of %s)", name, joinNames(NegativeControls(), ", "))
}

// brokenTree is an exploration tree with a test switch flipped, under its
// control's name.
type brokenTree struct {
	name MechanismName
	tree Mechanism
}

func (c brokenTree) Name() MechanismName { return c.name }
func (c brokenTree) Bounds() Bounds      { return c.tree.Bounds() }

// CanOutput is the tree's: the support the control claims.
func (c brokenTree) CanOutput(db *DB, seq []int) bool { return c.tree.CanOutput(db, seq) }

func (c brokenTree) Synthesize(db *DB, epsilon float64, src noise.Source) (*Synthetic, error) {
	rel, err := c.tree.Synthesize(db, epsilon, src)
	if err != nil {
		return nil, fmt.Errorf("%w (control %s)", err, c.name)
	}
	rel.Mechanism = c.name
	return rel, nil
}
