package trajdb

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// noisyTree is the n-gram tree of clickDB(n) at epsilon 1 (l_max lmax,
// one sequence a person), with its noise drawn from seed.
func noisyTree(t *testing.T, n, lmax int, seed uint64) *ngramTree {
	t.Helper()
	g := &NGram{Contribution: Bounds{MaxLen: lmax, MaxSeqs: 1}}
	tr, err := g.build(clickDB(n), 1, noise.Seeded(seed))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestReconstructionPostProcessing: every reconstruction is a function of
// the noisy tree and its own random source only. The same tree and seed
// give the same sequences with the true counts taken away (a
// reconstruction that read them would panic on the nil trie), and
// reconstructing twice gives the same sequences (no state carried from one
// run to the next).
func TestReconstructionPostProcessing(t *testing.T) {
	t.Parallel()
	for _, rec := range Reconstructions() {
		t.Run(string(rec), func(t *testing.T) {
			t.Parallel()
			tr := noisyTree(t, 3000, 10, 11)
			first := tr.reconstruct(rec, 10, noise.Seeded(5))
			if len(first) == 0 {
				t.Fatal("no sequences")
			}
			tr.counts = nil
			for i := range 2 {
				again := tr.reconstruct(rec, 10, noise.Seeded(5))
				if !slices.EqualFunc(first, again, slices.Equal) {
					t.Fatalf("run %d: %d sequences, then %d different ones from the same noisy tree and seed", i, len(first), len(again))
				}
			}
		})
	}
}

// TestJoinedKeepsPeopleAndCounts: on noisy trees of clickDB, the joined
// reconstruction releases exactly the noisy number of people N (the sum of
// the noisy starts) of at most l_max symbols, holds every unigram exactly as often as its truncated
// noisy count, and its bigrams' occurrences are at most a third as far
// (L1) from the truncated noisy counts as those of the pieces it joins,
// the authors' decomposition, which lacks P − N bigrams for P pieces. The
// controls fail where they should: the authors' release has P > N
// sequences, and the persons reconstruction does not hold the unigram
// counts.
func TestJoinedKeepsPeopleAndCounts(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			tr := noisyTree(t, 6000, 10, 20+seed)
			m := tr.m
			w := make([]float64, m+1)
			persons := int64(math.Round(tr.startWeights(nil, w)))
			// check reports what a release gets wrong against the claim
			// and returns its bigrams' L1 distance to the counts.
			check := func(seqs [][]int) (bad []string, l1 float64) {
				if int64(len(seqs)) != persons {
					bad = append(bad, fmt.Sprintf("%d sequences, want N = %d", len(seqs), persons))
				}
				for _, q := range seqs {
					if len(q) > 10 {
						bad = append(bad, fmt.Sprintf("sequence of %d symbols, more than l_max 10", len(q)))
						break
					}
				}
				// The occurrences of every gram (those with & aside).
				occ := gramCounts(&DB{Size: m, Users: []User{{ID: "all", Seqs: seqs}}}, 2, m)
				for x := range m {
					if c := math.Max(math.Trunc(tr.root.hist[x]), 0); float64(occ[Key([]int{x})]) != c {
						bad = append(bad, fmt.Sprintf("unigram %d: %d occurrences, truncated noisy count %v", x, occ[Key([]int{x})], c))
					}
					v := tr.node([]int{x})
					for y := range m {
						c := 0.0
						if v != nil {
							c = math.Max(math.Trunc(v.hist[y]), 0)
						}
						l1 += math.Abs(c - float64(occ[Key([]int{x, y})]))
					}
				}
				return bad, l1
			}
			pieces := tr.reconstruct(ReconstructAuthors, 10, nil)
			bad, l1 := check(tr.reconstruct(ReconstructJoined, 10, noise.Seeded(seed)))
			for _, b := range bad {
				t.Error("joined: " + b)
			}
			// A tight l_max (the clicks are 1 to 3 symbols, n_max is
			// 3): the joins that would pass it are not made.
			tight := noisyTree(t, 6000, 3, 20+seed)
			for _, q := range tight.reconstruct(ReconstructJoined, 3, noise.Seeded(seed)) {
				if len(q) > 3 {
					t.Fatalf("joined with l_max 3: sequence %v", q)
				}
			}
			aBad, aL1 := check(pieces)
			t.Logf("N %d (6000 people): %d pieces; bigram L1 joined %v, pieces %v", persons, len(pieces), l1, aL1)
			if !(l1 <= aL1/3) {
				t.Errorf("joined: bigram occurrences %v from the noisy counts (L1), the pieces' %v", l1, aL1)
			}
			if len(aBad) == 0 {
				t.Error("control authors holds the claim too: the test no longer tells")
			}
			if pBad, _ := check(tr.reconstruct(ReconstructPersons, 10, noise.Seeded(seed))); len(pBad) == 0 {
				t.Error("control persons holds the claim too: the test no longer tells")
			}
		})
	}
}
