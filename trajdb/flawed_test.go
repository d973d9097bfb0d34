package trajdb

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// The flawed control follows its stated law: a sequence held c times is
// released at least once with probability P(c + Z >= 1) for Z two-sided
// geometric with parameter epsilon/MaxSeqs, and nothing absent is ever
// released.
func TestFlawedPresentOnlyLaw(t *testing.T) {
	t.Parallel()
	b := Bounds{MaxLen: 3, MaxSeqs: 2}
	m := FlawedPresentOnly{Contribution: b}
	db := &DB{Size: 4, Users: []User{
		{ID: "x", Seqs: [][]int{{0, 1, 2}, {3}}},
		{ID: "y", Seqs: [][]int{{0, 1, 2}}},
		{ID: "z", Seqs: [][]int{{0, 1, 2}, {2, 2}}},
	}}
	const eps, n = 1.0, 20000
	lambda := eps / float64(b.MaxSeqs)
	q := math.Exp(-lambda)
	// P(Z >= t) for t <= 0 is 1 - P(Z <= t-1) = 1 - q^{1-t}/(1+q).
	pAtLeast := func(c int) float64 { return 1 - math.Pow(q, float64(c))/(1+q) }
	want := map[string]float64{Key([]int{0, 1, 2}): pAtLeast(3), Key([]int{3}): pAtLeast(1), Key([]int{2, 2}): pAtLeast(1)}
	got := map[string]int{}
	src := noise.Seeded(11)
	for range n {
		rel, err := m.Synthesize(db, eps, src)
		if err != nil {
			t.Fatal(err)
		}
		if rel.EpsilonSpent != eps || len(rel.Levels) != 1 || rel.Nodes != 3 {
			t.Fatalf("release accounting: %+v", rel)
		}
		seen := map[string]bool{}
		for _, s := range rel.Seqs {
			k := Key(s)
			if _, ok := want[k]; !ok {
				t.Fatalf("released %v, which is absent from the input", s)
			}
			if !m.CanOutput(db, s) {
				t.Fatalf("CanOutput denies released %v", s)
			}
			seen[k] = true
		}
		for k := range seen {
			got[k]++
		}
	}
	for k, p := range want {
		f := float64(got[k]) / n
		if z := (f - p) / math.Sqrt(p*(1-p)/n); math.Abs(z) > 4.5 {
			t.Errorf("%v released in %.4f of draws, want %.4f (z = %.1f)", FromKey(k), f, p, z)
		}
	}
	if m.CanOutput(db, []int{0, 1}) || m.CanOutput(db, []int{0, 1, 2, 3}) {
		t.Error("CanOutput admits an absent sequence")
	}
}

func TestFlawedPresentOnlyRefusesUnboundedInput(t *testing.T) {
	t.Parallel()
	m := FlawedPresentOnly{Contribution: Bounds{MaxLen: 2, MaxSeqs: 1}}
	db := &DB{Size: 3, Users: []User{{ID: "x", Seqs: [][]int{{0, 1, 2}}}}}
	if _, err := m.Synthesize(db, 1, noise.Seeded(1)); err == nil {
		t.Fatal("unbounded input accepted")
	}
	bd, _ := Bound(db, m.Bounds())
	rel, err := m.Synthesize(bd, 1, noise.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rel.Seqs {
		if !slices.Equal(s, []int{0, 1}) {
			t.Fatalf("released %v", s)
		}
	}
	if _, err := m.Synthesize(bd, 0, nil); err == nil {
		t.Fatal("epsilon 0 accepted")
	}
}

// The negative controls are what they say they are: refused by
// NewMechanism (so never offered by release), named as controls, claiming
// the trees' support, and broken in the stated way.
func TestNegativeControls(t *testing.T) {
	t.Parallel()
	b := auditDemoBounds
	db, _ := auditDemoDB()
	for _, name := range NegativeControls() {
		if _, err := NewMechanism(name, b, 0); err == nil {
			t.Errorf("NewMechanism offers the control %s", name)
		}
		m, err := NewNegativeControl(name, b)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := m.Synthesize(db, 1, noise.Seeded(1))
		if err != nil {
			t.Fatal(err)
		}
		if m.Name() != name || rel.Mechanism != name || m.Bounds() != b {
			t.Errorf("%s: named %q, release names %q, bounds %+v", name, m.Name(), rel.Mechanism, m.Bounds())
		}
		if name != ControlPresentOnly {
			// The broken trees claim the trees' data-independent support.
			empty := &DB{Size: db.Size}
			for _, s := range [][]int{{0}, {3, 1, 2}, {2, 2, 2}} {
				if !m.CanOutput(db, s) || !m.CanOutput(empty, s) {
					t.Errorf("%s: CanOutput(%v) is not the tree's", name, s)
				}
			}
		}
	}
	for _, bad := range []MechanismName{MechanismPrefix, MechanismNGram, "", "flawed"} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			if _, err := NewNegativeControl(bad, b); err == nil {
				t.Errorf("NewNegativeControl(%q) accepted", bad)
			}
		})
	}
	if _, err := NewNegativeControl(ControlPrefixNoiseless, Bounds{}); err == nil {
		t.Error("control without bounds accepted")
	}

	input := sortedSequences(db.Sequences())
	prefixes := map[string]bool{}
	for _, s := range input {
		for l := 1; l <= len(s); l++ {
			prefixes[Key(s[:l])] = true
		}
	}
	noiseless, _ := NewNegativeControl(ControlPrefixNoiseless, b)
	presentOnly, _ := NewNegativeControl(ControlPresentOnlyPrefix, b)
	tenth, _ := NewNegativeControl(ControlNGramTenthNoise, b)
	for seed := range uint64(20) {
		// No noise: the release is the input, at any epsilon.
		rel, err := noiseless.Synthesize(db, 0.1, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		if got := sortedSequences(rel.Seqs); !slices.EqualFunc(got, input, slices.Equal) {
			t.Fatalf("noiseless release is not the input:\n got %v\nwant %v", got, input)
		}
		// Present children only: nothing but prefixes of the input.
		rel, err = presentOnly.Synthesize(db, 4, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rel.Seqs {
			if !prefixes[Key(s)] {
				t.Fatalf("present-only prefix tree released %v, no prefix of the input", s)
			}
		}
	}
	// A tenth of the noise: the n-gram tree calibrated to a tenth of its
	// sensitivity (the hook TestExploreFalsifier shows is not DP).
	if g, ok := tenth.(brokenTree).tree.(*NGram); !ok || g.hooks != (exploreHooks{sensFactor: 0.1}) || g.Contribution != b {
		t.Errorf("ngram-tenth-noise is %+v", tenth)
	}
}
