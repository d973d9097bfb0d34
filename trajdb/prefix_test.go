package trajdb

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
)

// prefixCounts returns the number of sequences of db starting with each
// prefix, keyed by Key.
func prefixCounts(db *DB) map[string]int64 {
	out := make(map[string]int64)
	for _, s := range db.Sequences() {
		for d := 1; d <= len(s); d++ {
			out[Key(s[:d])]++
		}
	}
	return out
}

// TestPrefixExactRoundTrip: with the noise off (the epsilon -> infinity
// limit) every prefix of the data is a node with its true count, no other
// node exists, and the release is the input multiset.
func TestPrefixExactRoundTrip(t *testing.T) {
	t.Parallel()
	for seed := range uint64(5) {
		db := exploreRandomDB(seed, 3+int(seed), 30, 3, 5)
		p := &Prefix{Contribution: Bounds{MaxLen: 5, MaxSeqs: 3}, hooks: exploreHooks{exact: true}}
		tr, err := p.build(db, 1, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		want := prefixCounts(db)
		got := make(map[string]int64)
		var path []int
		var walk func(v *prefixNode)
		walk = func(v *prefixNode) {
			for _, u := range v.children {
				path = append(path, int(u.sym))
				got[Key(path)] = int64(u.noisy)
				walk(u)
				path = path[:len(path)-1]
			}
		}
		walk(tr.root)
		if len(got) != len(want) {
			t.Errorf("seed %d: %d nodes, want %d prefixes", seed, len(got), len(want))
		}
		for k, c := range want {
			if got[k] != c {
				t.Errorf("seed %d: prefix %v count %d, want %d", seed, FromKey(k), got[k], c)
			}
		}
		rel, err := p.Synthesize(db, 1, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := sortedSequences(rel.Seqs), sortedSequences(db.Sequences()); !slices.EqualFunc(g, w, slices.Equal) {
			t.Errorf("seed %d: release is not the input multiset:\n got %v\nwant %v", seed, g, w)
		}
	}
}

// TestPrefixBudget: h levels of ε/h each, summing to ε; the reported scale
// and threshold are the paper's.
func TestPrefixBudget(t *testing.T) {
	t.Parallel()
	db := exploreWalkDB(1, 8, 8, 400, 2, 6)
	b := Bounds{MaxLen: 6, MaxSeqs: 1}
	for _, eps := range []float64{0.1, 1, 3.7} {
		rel, err := (&Prefix{Contribution: b}).Synthesize(db, eps, noise.Seeded(3))
		if err != nil {
			t.Fatal(err)
		}
		if len(rel.Levels) != b.MaxLen {
			t.Fatalf("%d levels, want %d", len(rel.Levels), b.MaxLen)
		}
		sum, nodes := 0.0, 0
		for i, l := range rel.Levels {
			if l.Depth != i+1 || math.Abs(l.Epsilon-eps/6) > 1e-15 {
				t.Errorf("level %d: depth %d epsilon %v, want %v", i, l.Depth, l.Epsilon, eps/6)
			}
			if want := 6 / eps; math.Abs(l.Scale-want) > 1e-12*want {
				t.Errorf("level %d: scale %v, want %v", i, l.Scale, want)
			}
			// 64 cells: the floor ln(64/2) ≈ 3.47 is above 2√2 ≈ 2.83.
			if want := math.Log(32) * 6 / eps; math.Abs(l.Threshold-want) > 1e-12*want {
				t.Errorf("level %d: threshold %v, want %v", i, l.Threshold, want)
			}
			sum += l.Epsilon
			nodes += l.Nodes
		}
		// EpsilonSpent is the guarantee; the levels' float sum never
		// exceeds it, not even by an ulp.
		if math.Abs(sum-eps) > 1e-12 || sum > eps || rel.WorstPathEpsilon != sum || rel.EpsilonSpent != eps {
			t.Errorf("levels sum to %v (worst path %v), EpsilonSpent %v, want %v", sum, rel.WorstPathEpsilon, rel.EpsilonSpent, eps)
		}
		if nodes != rel.Nodes {
			t.Errorf("levels count %d noisy counts, Nodes says %d", nodes, rel.Nodes)
		}
		if rel.Source != "seeded:3" {
			t.Errorf("source %q", rel.Source)
		}
	}
}

// TestPrefixNoisesEveryChild counts the noisy draws: every expanded node
// (the root and every kept node above level h) perturbs |X| children,
// whatever their true counts. With the naive sampler every one of them is
// an actual draw.
func TestPrefixNoisesEveryChild(t *testing.T) {
	t.Parallel()
	db := exploreWalkDB(2, 6, 5, 300, 1, 5)
	b := Bounds{MaxLen: 5, MaxSeqs: 1}
	for _, naive := range []bool{false, true} {
		for _, eps := range []float64{0.5, 4, 40} {
			p := &Prefix{Contribution: b, hooks: exploreHooks{naive: naive}}
			tr, err := p.build(db, eps, noise.Seeded(5))
			if err != nil {
				t.Fatal(err)
			}
			expanded, perLevel := 0, make([]int, b.MaxLen)
			var walk func(v *prefixNode, d int)
			walk = func(v *prefixNode, d int) {
				if d < b.MaxLen {
					expanded++
					perLevel[d] += db.Size
				}
				for _, u := range v.children {
					walk(u, d+1)
				}
			}
			walk(tr.root, 0)
			if want := int64(expanded * db.Size); tr.cn.drawn != want {
				t.Errorf("naive=%v eps=%v: %d noisy counts for %d expanded nodes × %d symbols = %d", naive, eps, tr.cn.drawn, expanded, db.Size, want)
			}
			if naive && tr.cn.calls != tr.cn.drawn {
				t.Errorf("naive sampler: %d draws for %d noisy counts", tr.cn.calls, tr.cn.drawn)
			}
			if !naive && eps == 0.5 && tr.cn.calls >= tr.cn.drawn {
				t.Errorf("shortcut made %d draws for %d noisy counts", tr.cn.calls, tr.cn.drawn)
			}
			if !slices.Equal(perLevel, tr.nodes) {
				t.Errorf("per-level counts %v, want %v", tr.nodes, perLevel)
			}
		}
	}
}

// TestPrefixConsistency: after post-processing every count is a
// non-negative integer, no node's children exceed it, and the release
// holds exactly the counts of the tree.
func TestPrefixConsistency(t *testing.T) {
	t.Parallel()
	db := exploreWalkDB(3, 4, 4, 200, 1, 4)
	p := &Prefix{Contribution: Bounds{MaxLen: 4, MaxSeqs: 1}}
	for seed := range uint64(20) {
		tr, err := p.build(db, 2, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		tr.consistent()
		counts := make(map[string]int64)
		var path []int
		var walk func(v *prefixNode)
		walk = func(v *prefixNode) {
			sum := int64(0)
			for _, u := range v.children {
				if u.n < 0 {
					t.Fatalf("negative count %d", u.n)
				}
				sum += u.n
				path = append(path, int(u.sym))
				if u.n > 0 {
					counts[Key(path)] = u.n
				}
				walk(u)
				path = path[:len(path)-1]
			}
			if v != tr.root && sum > v.n {
				t.Fatalf("children sum %d above parent %d", sum, v.n)
			}
		}
		walk(tr.root)
		rel := &DB{Size: db.Size, Users: []User{{Seqs: tr.sequences()}}}
		got := prefixCounts(rel)
		if len(got) != len(counts) {
			t.Fatalf("release has %d prefixes, tree %d", len(got), len(counts))
		}
		for k, c := range counts {
			if got[k] != c {
				t.Fatalf("prefix %v: release count %d, tree %d", FromKey(k), got[k], c)
			}
		}
	}
}

func TestProjectSimplex(t *testing.T) {
	t.Parallel()
	z := []float64{3, 1, -2, 0.5}
	projectSimplex(z, 2)
	// τ = 1: (2, 0, 0, 0).
	if want := []float64{2, 0, 0, 0}; !slices.Equal(z, want) {
		t.Errorf("got %v, want %v", z, want)
	}
	z = []float64{2, 2, 2}
	projectSimplex(z, 3)
	for _, v := range z {
		if math.Abs(v-1) > 1e-15 {
			t.Errorf("got %v, want all 1", z)
		}
	}
}

// exploreSupportCheck checks that CanOutput is the same for two different
// databases and covers exactly the sequences of length 1..maxLen.
func exploreSupportCheck(t *testing.T, m Mechanism) {
	t.Helper()
	a := &DB{Size: 3, Users: []User{{ID: "x", Seqs: [][]int{{0, 1}}}}}
	b := &DB{Size: 3}
	maxLen := m.Bounds().MaxLen
	var all [][]int
	var gen func(s []int)
	gen = func(s []int) {
		if len(s) > 0 {
			all = append(all, slices.Clone(s))
		}
		if len(s) == maxLen+1 {
			return
		}
		for x := range 3 {
			gen(append(s, x))
		}
	}
	gen(nil)
	for _, s := range all {
		want := len(s) <= maxLen
		if m.CanOutput(a, s) != want || m.CanOutput(b, s) != want {
			t.Errorf("%s: CanOutput(%v) = %v / %v, want %v for both databases", m.Name(), s, m.CanOutput(a, s), m.CanOutput(b, s), want)
		}
	}
	for _, s := range [][]int{nil, {3}, {-1}} {
		if m.CanOutput(a, s) {
			t.Errorf("%s: CanOutput(%v) = true", m.Name(), s)
		}
	}
}

// exploreReleasesAbsent checks empirically that the release can contain
// a sequence absent from the data: the support is not the data's.
func exploreReleasesAbsent(t *testing.T, m Mechanism, absent []int) {
	t.Helper()
	db := &DB{Size: 2, Users: []User{{ID: "a", Seqs: [][]int{{0, 0}}}, {ID: "b", Seqs: [][]int{{0}}}}}
	k := Key(absent)
	for i := range 20000 {
		rel, err := m.Synthesize(db, 0.5, noise.Seeded(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rel.Seqs {
			if Key(s) == k {
				return
			}
		}
	}
	t.Errorf("%s: %v, absent from the data, never released in 20000 runs", m.Name(), absent)
}

func TestPrefixSupport(t *testing.T) {
	t.Parallel()
	p := &Prefix{Contribution: Bounds{MaxLen: 2, MaxSeqs: 1}}
	exploreSupportCheck(t, p)
	exploreReleasesAbsent(t, p, []int{1, 1})
}

// exploreFalsify runs the histogram DP falsifier on neighbours: D, where
// the victim holds victim (in the tests, one or two copies of [0 1], held
// by no one else), six persons hold [0] and three hold [1], and D', D
// without the victim. The event space is the joint histogram of
// how many times [0 1] and [1] (each capped at 3) and [0] (capped at 15)
// are released;
// every bin (bins with fewer than 100 samples pooled into one event) must
// satisfy P(S|D) <= e^ε P(S|D') within the falsifier's slack, both ways.
func exploreFalsify(m Mechanism, eps float64, runs int, seed uint64, victim [][]int) (stattest.DPResult, error) {
	d := &DB{Size: 2, Users: []User{{ID: "victim", Seqs: victim}}}
	for i := range 6 {
		d.Users = append(d.Users, User{ID: fmt.Sprint("a", i), Seqs: [][]int{{0}}})
	}
	for i := range 3 {
		d.Users = append(d.Users, User{ID: fmt.Sprint("b", i), Seqs: [][]int{{1}}})
	}
	dp := d.Without(0)
	hist := func(db *DB, s uint64) ([]int, error) {
		h := make([]int, 4*16*4)
		src := noise.Seeded(s)
		k01, k0, k1 := Key([]int{0, 1}), Key([]int{0}), Key([]int{1})
		for range runs {
			rel, err := m.Synthesize(db, eps, src)
			if err != nil {
				return nil, err
			}
			var a, b, c int
			for _, q := range rel.Seqs {
				switch Key(q) {
				case k01:
					a++
				case k0:
					b++
				case k1:
					c++
				}
			}
			h[min(a, 3)*64+min(b, 15)*4+min(c, 3)]++
		}
		return h, nil
	}
	ha, err := hist(d, seed)
	if err != nil {
		return stattest.DPResult{}, err
	}
	hb, err := hist(dp, seed+1)
	if err != nil {
		return stattest.DPResult{}, err
	}
	return stattest.DPCheck{Epsilon: eps}.Check(ha, hb)
}

// TestExploreFalsifier: both mechanisms pass the histogram falsifier at
// their ε; two negative controls of each, noise for a tenth of the
// sensitivity and noise on the children present in the data only, are
// caught. With -short a quarter of the runs, where every control is still
// caught (measured: the closest, the prefix tree on present children
// only, exceeds by 0.0164 against a slack of 0.0057), and the n-gram tree
// at ε = 3 in 3,000 runs.
func TestExploreFalsifier(t *testing.T) {
	t.Parallel()
	b := Bounds{MaxLen: 2, MaxSeqs: 1}
	eps := 1.0
	runs := 40000
	if testing.Short() {
		runs = 10000
	}
	mechs := []func(exploreHooks) Mechanism{
		func(h exploreHooks) Mechanism { return &Prefix{Contribution: b, hooks: h} },
		func(h exploreHooks) Mechanism { return &NGram{Contribution: b, NMax: 2, hooks: h} },
	}
	for i, mk := range mechs {
		for _, c := range []struct {
			name  string
			hooks exploreHooks
			dp    bool
		}{
			{"as documented", exploreHooks{}, true},
			{"noise for a tenth of the sensitivity", exploreHooks{sensFactor: 0.1}, false},
			{"present children only", exploreHooks{presentOnly: true}, false},
		} {
			m := mk(c.hooks)
			eps, runs := eps, runs
			if _, ngram := m.(*NGram); ngram && testing.Short() {
				// The n-gram tree at ε = 3 in 3,000 runs: every control still
				// caught (present children only: excess 0.071-0.080 against
				// a slack of 0.021-0.023; seeds 20-23), the documented tree not.
				eps, runs = 3, 3000
			}
			t.Run(fmt.Sprintf("%s/%s", m.Name(), c.name), func(t *testing.T) {
				t.Parallel()
				r, err := exploreFalsify(m, eps, runs, uint64(10+10*i), [][]int{{0, 1}})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s, %s: ok=%v tested %d events, max ratio %.3f (e^ε = %.3f), worst bin %d: P %.4f vs %.4f, excess %.4f, slack %.4f",
					m.Name(), c.name, r.OK, r.Tested, r.MaxRatio, math.Exp(eps), r.Worst.Bin, r.Worst.PA, r.Worst.PB, r.Worst.Excess, r.Worst.Slack)
				if r.OK != c.dp {
					t.Errorf("%s, %s: falsifier says ok=%v, want %v", m.Name(), c.name, r.OK, c.dp)
				}
			})
		}
	}
}

// TestExploreUserLevelFalsifier: the victim holds two sequences
// (MaxSeqs 2), so the sensitivity is twice a sequence's; both mechanisms
// pass, and versions calibrated to one sequence (MaxSeqs forgotten) are
// caught (the n-gram one at ε = 3, where the falsifier has the power;
// with -short at ε = 4 in fewer runs).
func TestExploreUserLevelFalsifier(t *testing.T) {
	t.Parallel()
	b := Bounds{MaxLen: 2, MaxSeqs: 2}
	victim := [][]int{{0, 1}, {0, 1}}
	for _, c := range []struct {
		m    Mechanism
		eps  float64
		runs int
		dp   bool
	}{
		{&Prefix{Contribution: b}, 1, 40000, true},
		{&Prefix{Contribution: b, hooks: exploreHooks{sensFactor: 0.5}}, 1, 40000, false},
		{&NGram{Contribution: b, NMax: 2}, 3, 25000, true},
		{&NGram{Contribution: b, NMax: 2, hooks: exploreHooks{sensFactor: 0.5}}, 3, 25000, false},
	} {
		if _, ngram := c.m.(*NGram); ngram && testing.Short() {
			// At ε = 4 the forgotten MaxSeqs shows in a quarter of the
			// runs: the control's worst ratio was 101-370 against e^ε =
			// 55, the documented tree's 9.9-17 (seeds 30-36, 6,000 runs).
			c.eps, c.runs = 4, 6000
		}
		t.Run(fmt.Sprintf("%s/dp=%v", c.m.Name(), c.dp), func(t *testing.T) {
			t.Parallel()
			r, err := exploreFalsify(c.m, c.eps, c.runs, 30, victim)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (dp=%v) at ε = %v: ok=%v tested %d events, max ratio %.2f (e^ε = %.2f)", c.m.Name(), c.dp, c.eps, r.OK, r.Tested, r.MaxRatio, math.Exp(c.eps))
			if r.OK != c.dp {
				t.Errorf("%s (dp=%v) at ε = %v: falsifier says ok=%v; worst %+v", c.m.Name(), c.dp, c.eps, r.OK, r.Worst)
			}
		})
	}
}
