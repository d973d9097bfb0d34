package trajdb

import (
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
		rel, err := m.Release(db, eps, src)
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
	m := FlawedPresentOnly{Contribution: Bounds{MaxLen: 2, MaxSeqs: 1}}
	db := &DB{Size: 3, Users: []User{{ID: "x", Seqs: [][]int{{0, 1, 2}}}}}
	if _, err := m.Release(db, 1, noise.Seeded(1)); err == nil {
		t.Fatal("unbounded input accepted")
	}
	bd, _ := Bound(db, m.Bounds())
	rel, err := m.Release(bd, 1, noise.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rel.Seqs {
		if !slices.Equal(s, []int{0, 1}) {
			t.Fatalf("released %v", s)
		}
	}
	if _, err := m.Release(bd, 0, nil); err == nil {
		t.Fatal("epsilon 0 accepted")
	}
}
