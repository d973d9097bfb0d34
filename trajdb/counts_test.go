package trajdb

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// Counting each person apart and adding, then releasing from the counts,
// is the release of the database: the same bytes for the same seed.
func TestReleaseCountsEqualsRelease(t *testing.T) {
	t.Parallel()
	db := exploreWalkDB(7, 6, 5, 300, 2, 7)
	b := Bounds{MaxLen: 6, MaxSeqs: 1}
	bd, err := Bound(db, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []CountingMechanism{&Prefix{Contribution: b}, &NGram{Contribution: b}, &NGram{Contribution: b, NMax: 3}} {
		total := NewTreeCounts(bd.Size)
		for _, u := range bd.Users {
			if err := total.Add(m.Counts(bd.Size, u.Seqs)); err != nil {
				t.Fatal(err)
			}
		}
		for _, eps := range []float64{0.5, 4} {
			a, err := m.Synthesize(bd, eps, noise.Seeded(11))
			if err != nil {
				t.Fatal(err)
			}
			c, err := m.SynthesizeCounts(total, eps, noise.Seeded(11))
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal([]any{a, a.Seqs})
			jc, _ := json.Marshal([]any{c, c.Seqs})
			if string(ja) != string(jc) {
				t.Errorf("%s at %g: the release from counts differs from the release", m.Name(), eps)
			}
		}
	}
}

// Counts that no sequences could give are refused, not released.
func TestReleaseCountsRefusesInconsistent(t *testing.T) {
	t.Parallel()
	b := Bounds{MaxLen: 3, MaxSeqs: 1}
	for _, tc := range []struct {
		m    CountingMechanism
		c    *TreeCounts
		want string
	}{
		{&Prefix{Contribution: b}, &TreeCounts{Size: 3, Count: map[string]int64{Key([]int{0, 1}): 2}}, "inconsistent"},
		{&Prefix{Contribution: b}, &TreeCounts{Size: 3, Count: map[string]int64{Key([]int{0}): 1, Key([]int{0, 1}): 2}}, "inconsistent"},
		{&Prefix{Contribution: b}, &TreeCounts{Size: 3, Count: map[string]int64{Key([]int{5}): 1}}, "alphabet"},
		{&Prefix{Contribution: b}, &TreeCounts{Size: 3, Count: map[string]int64{Key([]int{0, 1, 2, 0}): 1}}, "symbols"},
		{&NGram{Contribution: b}, &TreeCounts{Size: 3, Count: map[string]int64{Key([]int{0}): 1}, End: map[string]int64{Key([]int{0}): 2}}, "inconsistent"},
		{&NGram{Contribution: b}, &TreeCounts{Size: 3, Count: map[string]int64{Key([]int{0}): -1}}, "negative"},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.m.Name(), tc.want), func(t *testing.T) {
			t.Parallel()
			if _, err := tc.m.SynthesizeCounts(tc.c, 1, noise.Seeded(1)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %v: %v, want an error naming %q", tc.m.Name(), tc.c.Count, err, tc.want)
			}
		})
	}
	if err := NewTreeCounts(3).Add(NewTreeCounts(4)); err == nil {
		t.Error("adding counts over different alphabets")
	}
}
