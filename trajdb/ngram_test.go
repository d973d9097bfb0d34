package trajdb

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// gramCounts returns the true count of every gram of length <= n of db's
// sequences each ended with the symbol end (grams do not start with end).
func gramCounts(db *DB, n, end int) map[string]int64 {
	out := make(map[string]int64)
	for _, s := range db.Sequences() {
		t := append(slices.Clone(s), end)
		for j := range s {
			for l := 1; l <= n && j+l <= len(t); l++ {
				out[Key(t[j:j+l])]++
			}
		}
	}
	return out
}

// TestNGramExactCounts: with the noise off every node's histogram holds
// the true n-gram counts (& included), an inner node releases exactly its
// non-zero bins, and every context of positive count shorter than n_max
// is a node.
func TestNGramExactCounts(t *testing.T) {
	t.Parallel()
	for seed := range uint64(5) {
		m := 3 + int(seed)
		db := exploreRandomDB(seed, m, 30, 3, 5)
		g := &NGram{Contribution: Bounds{MaxLen: 5, MaxSeqs: 3}, NMax: 4, hooks: exploreHooks{exact: true, keepRaw: true}}
		tr, err := g.build(db, 1, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		want := gramCounts(db, 4, m)
		nodes := 0
		for _, v := range tr.nodes {
			bins := m + 1
			for x := range bins {
				c := want[Key(append(slices.Clone(v.gram), x))]
				if v == tr.root && x == m {
					c = 0
				}
				if v.raw[x] != float64(c) {
					t.Errorf("seed %d: gram %v·%d: noisy count %v, want %d", seed, v.gram, x, v.raw[x], c)
				}
				// The root and the leaves release every bin.
				if v.released[x] != (c > 0) && v != tr.root && v.leftLevel > 1 {
					t.Errorf("seed %d: gram %v·%d with count %d: released %v", seed, v.gram, x, c, v.released[x])
				}
			}
			if v != tr.root {
				nodes++
				if want[Key(v.gram)] == 0 {
					t.Errorf("seed %d: node %v has count 0", seed, v.gram)
				}
			}
		}
		contexts := 0
		for k := range want {
			if g := FromKey(k); len(g) < 4 && !slices.Contains(g, m) {
				contexts++
			}
		}
		if nodes != contexts {
			t.Errorf("seed %d: %d nodes, want the %d contexts of positive count", seed, nodes, contexts)
		}
	}
}

// TestNGramReconstructExact: given the exact counts of all grams (with
// the & grams), the authors' greedy reconstruction returns the database.
func TestNGramReconstructExact(t *testing.T) {
	t.Parallel()
	for seed := range uint64(10) {
		m := 2 + int(seed%4)
		db := exploreRandomDB(seed, m, 25, 2, 6)
		got := ngramReconstruct(gramCounts(db, 7, m), m, 6)
		if g, w := sortedSequences(got), sortedSequences(db.Sequences()); !slices.EqualFunc(g, w, slices.Equal) {
			t.Errorf("seed %d: reconstruction differs:\n got %v\nwant %v", seed, g, w)
		}
	}
}

// TestNGramExtension follows the Markov extension and the greedy
// decomposition by hand: c(abc) = ⌊c(ab)·c(bc)/c(b)⌋ = 2.
func TestNGramExtension(t *testing.T) {
	t.Parallel()
	a, b, c := 0, 1, 2
	grams := map[string]int64{
		Key([]int{a}): 4, Key([]int{b}): 4, Key([]int{c}): 2,
		Key([]int{a, b}): 4, Key([]int{b, c}): 2,
	}
	got := sortedSequences(ngramReconstruct(grams, 3, 3))
	want := [][]int{{a, b}, {a, b}, {a, b, c}, {a, b, c}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Nothing beyond lmax.
	grams = map[string]int64{Key([]int{a}): 9, Key([]int{a, a}): 9}
	for _, s := range ngramReconstruct(grams, 3, 4) {
		if len(s) > 4 {
			t.Errorf("sequence %v longer than lmax 4", s)
		}
	}
}

// TestNGramBudget: along every root-to-leaf path the budgets sum to at
// most ε (in floats too); the reported levels follow the path that spends
// the most, sum to WorstPathEpsilon, and reach ε when a path ends in a
// leaf; EpsilonSpent is ε, the guarantee, whatever the paths.
func TestNGramBudget(t *testing.T) {
	t.Parallel()
	db := exploreWalkDB(4, 3, 3, 3000, 2, 6)
	b := Bounds{MaxLen: 6, MaxSeqs: 1}
	for _, eps := range []float64{0.5, 2, 8} {
		g := &NGram{Contribution: b, NMax: 4}
		tr, err := g.build(db, eps, noise.Seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		leaf := false
		for _, v := range tr.nodes {
			if v.spent > eps {
				t.Errorf("eps %v: path to %v spends %v", eps, v.gram, v.spent)
			}
			if v != tr.root {
				if want := (eps - v.parent.spent) / float64(v.leftLevel); math.Abs(v.eps-want) > 1e-12 {
					t.Errorf("eps %v: node %v budget %v, want %v", eps, v.gram, v.eps, want)
				}
				if math.Abs(v.spent-(v.parent.spent+v.eps)) > 1e-12 {
					t.Errorf("eps %v: node %v path sum %v", eps, v.gram, v.spent)
				}
			}
			leaf = leaf || v.leftLevel == 1
		}
		rel, err := g.Synthesize(db, eps, noise.Seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		sum, nodes := 0.0, 0
		for i, l := range rel.Levels {
			if l.Depth != i+1 || l.EpsilonMax < l.Epsilon {
				t.Errorf("eps %v level %d: %+v", eps, i, l)
			}
			sum += l.Epsilon
			nodes += l.Nodes
		}
		if sum != rel.WorstPathEpsilon || sum > eps || rel.EpsilonSpent != eps {
			t.Errorf("eps %v: levels sum %v, WorstPathEpsilon %v, EpsilonSpent %v", eps, sum, rel.WorstPathEpsilon, rel.EpsilonSpent)
		}
		if !leaf {
			t.Fatalf("eps %v: no path reached a leaf; pick a denser database", eps)
		}
		if math.Abs(rel.WorstPathEpsilon-eps) > 1e-12 {
			t.Errorf("eps %v: a path reaches a leaf but WorstPathEpsilon is %v", eps, rel.WorstPathEpsilon)
		}
		if nodes != rel.Nodes {
			t.Errorf("eps %v: levels count %d noisy counts, Nodes %d", eps, nodes, rel.Nodes)
		}
		if _, err := json.Marshal(rel); err != nil {
			t.Errorf("eps %v: %v", eps, err)
		}
	}
}

// TestNGramNoisesEveryChild: the root perturbs |X| unigrams and every other
// node |X|+1 bins (the symbols and &), whatever their true counts; with the
// naive sampler each is an actual draw.
func TestNGramNoisesEveryChild(t *testing.T) {
	t.Parallel()
	db := exploreWalkDB(5, 4, 4, 500, 1, 5)
	for _, naive := range []bool{false, true} {
		for _, eps := range []float64{0.5, 5, 50} {
			g := &NGram{Contribution: Bounds{MaxLen: 5, MaxSeqs: 1}, NMax: 4, hooks: exploreHooks{naive: naive}}
			tr, err := g.build(db, eps, noise.Seeded(9))
			if err != nil {
				t.Fatal(err)
			}
			m := int64(db.Size)
			want := m + int64(len(tr.nodes)-1)*(m+1)
			if tr.cn.drawn != want {
				t.Errorf("naive=%v eps=%v: %d noisy counts for %d nodes, want %d", naive, eps, tr.cn.drawn, len(tr.nodes), want)
			}
			if naive && tr.cn.calls != tr.cn.drawn {
				t.Errorf("naive sampler: %d draws for %d noisy counts", tr.cn.calls, tr.cn.drawn)
			}
		}
	}
}

func TestNGramSupport(t *testing.T) {
	t.Parallel()
	g := &NGram{Contribution: Bounds{MaxLen: 2, MaxSeqs: 1}}
	exploreSupportCheck(t, g)
	exploreReleasesAbsent(t, g, []int{1, 1})
}

// TestLevelString: a level prints the budget its counts were drawn with
// (issue 32: "level 4: epsilon 0, noise scale 0, 17964 counts, threshold
// 0" for a depth the most expensive path does not reach, while
// release.json had epsilon_max 0.4). The nodes' largest budget and
// smallest scale are recomputed here from the tree's nodes.
func TestLevelString(t *testing.T) {
	t.Parallel()
	issue := Level{Depth: 4, Nodes: 17964, EpsilonMax: 0.4, ScaleMin: 125}
	if s := issue.String(); strings.Contains(s, "epsilon 0,") || !strings.Contains(s, "0.4") || !strings.Contains(s, "125") {
		t.Errorf("the issue's level prints %q", s)
	}
	db := exploreWalkDB(4, 3, 3, 3000, 2, 6)
	g := &NGram{Contribution: Bounds{MaxLen: 6, MaxSeqs: 1}, NMax: 5}
	for _, eps := range []float64{0.5, 2} {
		tr, err := g.build(db, eps, noise.Seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		maxEps := make([]float64, tr.nmax)
		for _, v := range tr.nodes {
			maxEps[v.level-1] = math.Max(maxEps[v.level-1], v.eps)
		}
		rel, err := g.Synthesize(db, eps, noise.Seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range rel.Levels {
			if l.EpsilonMax != maxEps[i] || (maxEps[i] > 0 && math.Abs(l.ScaleMin-tr.delta/maxEps[i]) > 1e-9*l.ScaleMin) {
				t.Errorf("eps %v level %d: EpsilonMax %v, ScaleMin %v; the nodes say %v, %v", eps, l.Depth, l.EpsilonMax, l.ScaleMin, maxEps[i], tr.delta/maxEps[i])
			}
			s := l.String()
			if l.Nodes > 0 && (strings.Contains(s, "epsilon 0,") || strings.Contains(s, "noise scale 0,")) {
				t.Errorf("eps %v: %q reads as noiseless", eps, s)
			}
			if l.EpsilonMax > 0 && !strings.Contains(s, fmt.Sprintf("%.4g", l.EpsilonMax)) {
				t.Errorf("eps %v: %q does not give the largest budget %.4g", eps, s, l.EpsilonMax)
			}
		}
	}
}
