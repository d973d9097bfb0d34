package trajdb

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

func metricNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestJSD(t *testing.T) {
	t.Parallel()
	p := map[int]float64{1: 2, 2: 6}
	if got := jsd(p, map[int]float64{1: 1, 2: 3}); got != 0 {
		t.Errorf("JSD of proportional weights = %v, want 0", got)
	}
	if got := jsd(p, map[int]float64{3: 1, 4: 1}); !metricNear(got, 1, 1e-15) {
		t.Errorf("JSD of disjoint supports = %v, want 1 (bits)", got)
	}
	// P = (1, 0), Q = (½, ½), M = (¾, ¼):
	// KL(P‖M) = log2(4/3), KL(Q‖M) = ½log2(2/3) + ½log2(2).
	want := 0.5*math.Log2(4.0/3) + 0.25*math.Log2(2.0/3) + 0.25
	if got := jsd(map[string]float64{"a": 1}, map[string]float64{"a": 1, "b": 1}); !metricNear(got, want, 1e-15) {
		t.Errorf("JSD = %v, want %v", got, want)
	}
	if jsd(map[int]float64{}, map[int]float64{}) != 0 || jsd(p, map[int]float64{}) != 1 {
		t.Error("empty-distribution conventions broken")
	}
}

func TestTripAndLengthJSD(t *testing.T) {
	t.Parallel()
	a := [][]int{{1, 2, 3}, {1, 5, 3}, {4, 4}}
	if tripJSD(a, a, nil) != 0 || lengthJSD(a, a) != 0 {
		t.Error("identical databases differ")
	}
	// Trips (1,3),(1,3),(4,4) against (2,2): disjoint.
	if got := tripJSD(a, [][]int{{2}}, nil); !metricNear(got, 1, 1e-15) {
		t.Errorf("disjoint trips: jsd %v, want 1", got)
	}
	// Same trips, different middles: trips identical, lengths not.
	b := [][]int{{1, 3}, {1, 3}, {4, 9, 8, 4}}
	if tripJSD(a, b, nil) != 0 {
		t.Error("trips differ although starts and ends agree")
	}
	// Lengths {3,3,2} against {2,2,4}: P = (⅓, ⅔, 0), Q = (⅔, 0, ⅓) over
	// lengths (2, 3, 4); M = (½, ⅓, ⅙).
	want := 0.5*((1.0/3)*math.Log2((1.0/3)/(0.5))+(2.0/3)*math.Log2((2.0/3)/(1.0/3))) +
		0.5*((2.0/3)*math.Log2((2.0/3)/0.5)+(1.0/3)*math.Log2((1.0/3)/(1.0/6)))
	if got := lengthJSD(a, b); !metricNear(got, want, 1e-15) {
		t.Errorf("length jsd %v, want %v", got, want)
	}
	// Blocks of 2×2 cells merge trips between neighbouring cells.
	g := mapGrid(t)
	key := tripBlockKey(MetricOptions{Universe: g, TripBlock: 2})
	if tripJSD([][]int{{0}}, [][]int{{1 + g.Cols}}, key) != 0 || tripJSD([][]int{{0}}, [][]int{{2}}, key) != 1 {
		t.Error("trip blocks")
	}
}

func TestDiameter(t *testing.T) {
	t.Parallel()
	g := mapGrid(t) // 1 km cells
	c := func(r, col int) int { return r*g.Cols + col }
	if d := diameter(g, []int{c(0, 0), c(3, 4), c(1, 1), c(0, 0)}); d != 5000 {
		t.Errorf("diameter %v, want 5000 m", d)
	}
	if d := diameter(g, []int{c(2, 2), c(2, 2)}); d != 0 {
		t.Errorf("diameter of one cell %v", d)
	}
	a := [][]int{{c(0, 0), c(0, 1)}, {c(0, 0), c(3, 4)}}
	if seqDiameterJSD(g, a, a, 20) != 0 {
		t.Error("identical diameters differ")
	}
	// 1 km against 0 km: different bins, disjoint.
	if got := seqDiameterJSD(g, [][]int{{c(0, 0), c(0, 1)}}, [][]int{{c(0, 0)}}, 20); !metricNear(got, 1, 1e-15) {
		t.Errorf("disjoint diameters: %v", got)
	}
	// A universe without a Distance method uses the centres' haversine
	// distance.
	if d := diameter(metricPlainUniverse{g}, []int{c(0, 0), c(3, 4)}); !metricNear(d, 5000, 50) {
		t.Errorf("haversine diameter %v, want about 5000", d)
	}
}

type metricPlainUniverse struct{ g *Grid }

func (p metricPlainUniverse) Size() int { return p.g.Size() }
func (p metricPlainUniverse) Cell(x geo.Point) (int, bool) {
	return p.g.Cell(x)
}
func (p metricPlainUniverse) Centre(c int) geo.Point { return p.g.Centre(c) }

func TestTopPatternsAndF1(t *testing.T) {
	t.Parallel()
	real := [][]int{{0, 1, 2}, {0, 1}, {5, 0, 1, 0, 1}}
	got := topPatterns(real, 3, 8)
	// Supports: 01 → 3 (once per sequence), 12 → 1, 012 → 1, 50 → 1,
	// 10 → 1, 501 → 1, ...; ties in lexicographic order.
	want := [][]int{{0, 1}, {0, 1, 0}, {0, 1, 0, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("top 3 = %v, want %v", got, want)
	}
	if f := patternF1(real, real, 100, 8); f != 1 {
		t.Errorf("F1 of identical = %v", f)
	}
	// Real patterns {01, 12, 012}; released {01, 56}: F1 = 2·1/(3+2).
	if f := patternF1([][]int{{0, 1, 2}}, [][]int{{0, 1}, {5, 6}}, 100, 8); !metricNear(f, 0.4, 1e-15) {
		t.Errorf("F1 = %v, want 0.4", f)
	}
	if f := patternF1([][]int{{0, 1}}, [][]int{{2, 3}}, 100, 8); f != 0 {
		t.Errorf("F1 of disjoint = %v", f)
	}
	if f := patternF1([][]int{{0}}, [][]int{{1}}, 100, 8); f != 1 {
		t.Errorf("F1 with no patterns on either side = %v, want 1 by convention", f)
	}
	// maxLen bounds the patterns.
	for _, p := range topPatterns([][]int{{1, 2, 3, 4, 5}}, 100, 3) {
		if len(p) < 2 || len(p) > 3 {
			t.Errorf("pattern %v outside lengths 2..3", p)
		}
	}
}

// metricKendallBrute is tau-b by its definition, over all pairs.
func metricKendallBrute(x, y []float64) float64 {
	var c, d, tx, ty float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			sx, sy := math.Copysign(1, x[i]-x[j]), math.Copysign(1, y[i]-y[j])
			switch {
			case x[i] == x[j] && y[i] == y[j]:
			case x[i] == x[j]:
				tx++
			case y[i] == y[j]:
				ty++
			case sx == sy:
				c++
			default:
				d++
			}
		}
	}
	den := math.Sqrt((c + d + tx) * (c + d + ty))
	if den == 0 {
		return 0
	}
	return (c - d) / den
}

func TestKendallTau(t *testing.T) {
	t.Parallel()
	if got := kendallTauB([]float64{1, 2, 3}, []float64{1, 3, 2}); !metricNear(got, 1.0/3, 1e-15) {
		t.Errorf("tau = %v, want 1/3 (2 concordant, 1 discordant)", got)
	}
	src := noise.Seeded(3)
	for trial := range 200 {
		n := 1 + int(noise.Int64N(src, 40))
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = float64(noise.Int64N(src, 5)) // many ties
			y[i] = float64(noise.Int64N(src, 1+int64(trial%7)))
		}
		if got, want := kendallTauB(x, y), metricKendallBrute(x, y); !metricNear(got, want, 1e-12) {
			t.Fatalf("x=%v y=%v: tau %v, brute force %v", x, y, got, want)
		}
	}
	// Popularity: real visits cell i i+1 times; reversed, the released
	// one visits it size−i times.
	const size = 12
	var real, rev [][]int
	for c := range size {
		for range c + 1 {
			real = append(real, []int{c})
		}
		for range size - c {
			rev = append(rev, []int{c})
		}
	}
	if got := popularityTau(real, rev, size); !metricNear(got, -1, 1e-15) {
		t.Errorf("reversed popularity: tau %v, want -1", got)
	}
	if got := popularityTau(real, real, size); !metricNear(got, 1, 1e-15) {
		t.Errorf("same popularity: tau %v, want 1", got)
	}
	if got := popularityTau(real, nil, size); got != 0 {
		t.Errorf("empty release: tau %v, want 0", got)
	}
}

func TestQueryARE(t *testing.T) {
	t.Parallel()
	real := [][]int{{0, 1}, {1, 2}, {0, 1, 2}}
	rel := [][]int{{0, 1}}
	qs := []query{patternQuery{0, 1}, patternQuery{2}}
	// [0 1]: 2 real, 1 released → 1/2; [2]: 2 real, 0 released → 1.
	if got := queryARE(real, rel, qs, 1); !metricNear(got, 0.75, 1e-15) {
		t.Errorf("ARE = %v, want 0.75", got)
	}
	// The sanity bound caps the weight of rare queries: [5] has 0 real and
	// 0 released, [2 0] has 0 real and 1 released (1/s with s = 4).
	if got := queryARE(real, [][]int{{2, 0}}, []query{patternQuery{5}, patternQuery{2, 0}}, 4); !metricNear(got, 0.125, 1e-15) {
		t.Errorf("ARE = %v, want 0.125", got)
	}
	if sanityBound(100000, 0.001) != 100 || sanityBound(300, 0.001) != 1 {
		t.Error("SanityBound")
	}
	// The trie answers pattern queries as the definition does.
	src := noise.Seeded(5)
	var db [][]int
	for range 300 {
		s := make([]int, 1+noise.Int64N(src, 12))
		for j := range s {
			s[j] = int(noise.Int64N(src, 4))
		}
		db = append(db, s)
	}
	qs, err := newQueries(MetricOptions{Size: 4, Queries: 300, MaxQueryLen: 5})
	if err != nil {
		t.Fatal(err)
	}
	qt := newQueryTrie(4, qs)
	got := qt.answer(qs, db, false)
	occ := qt.answer(qs, db, true)
	nonzero := 0
	for i, q := range qs {
		if want := queryCount(q, db); got[i] != int64(want) {
			t.Fatalf("query %v: trie count %d, by definition %d", q, got[i], want)
		}
		if want := occurrences(q.(patternQuery), db); occ[i] != want {
			t.Fatalf("query %v: trie occurrences %d, by definition %d", q, occ[i], want)
		}
		if got[i] > 0 {
			nonzero++
		}
	}
	if nonzero < 100 {
		t.Errorf("only %d of 300 queries match anything: the test checks little", nonzero)
	}
}

func TestNewQueries(t *testing.T) {
	t.Parallel()
	g := mapGrid(t)
	a, err := newQueries(MetricOptions{Universe: g, QuerySeed: 9})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newQueries(MetricOptions{Universe: g, QuerySeed: 9})
	if !reflect.DeepEqual(a, b) || len(a) != defaultQueries {
		t.Fatal("the same seed gave different queries")
	}
	for _, q := range a {
		r, ok := q.(rangeQuery)
		if !ok {
			t.Fatalf("default queries over a grid are %T, want RangeQuery", q)
		}
		if r.Row0 < 0 || r.Col0 < 0 || r.Row1 >= g.Rows || r.Col1 >= g.Cols || r.Row1 < r.Row0 || r.Col1 < r.Col0 ||
			r.Row1-r.Row0+1 > int(math.Ceil(defaultRangeFrac*float64(g.Rows))) {
			t.Fatalf("range query %+v outside the grid or too large", r)
		}
	}
	q := rangeQuery{Grid: g, Row0: 1, Col0: 1, Row1: 2, Col1: 2}
	if q.Match([]int{0, 3*g.Cols + 3}) || !q.Match([]int{0, 2*g.Cols + 1}) {
		t.Error("RangeQuery.Match")
	}
	p, _ := newQueries(MetricOptions{Size: 17, Queries: 50})
	for _, q := range p {
		pq := q.(patternQuery)
		if len(pq) < 1 || len(pq) > defaultMaxQueryLen || slices.Max(pq) >= 17 || slices.Min(pq) < 0 {
			t.Fatalf("pattern query %v", pq)
		}
	}
	for i, bad := range []MetricOptions{{}, {Size: 3, QueryKind: RangeQueries}, {Size: 3, QueryKind: "x"}, {Size: 3, TopK: -1}, {Size: 3, MaxPatternLen: 1}, {Universe: g, Size: 3}} {
		t.Run(fmt.Sprintf("bad options %d", i), func(t *testing.T) {
			if _, err := newQueries(bad); err == nil {
				t.Errorf("options %+v accepted", bad)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	g := mapGrid(t)
	src := noise.Seeded(11)
	var real [][]int
	for range 200 {
		// Walks along a row: realistic contiguity.
		r, c := int(noise.Int64N(src, int64(g.Rows))), int(noise.Int64N(src, int64(g.Cols-3)))
		n := 1 + int(noise.Int64N(src, 4))
		s := make([]int, n)
		for j := range s {
			s[j] = r*g.Cols + c + j
		}
		real = append(real, s)
	}
	m, err := Evaluate(real, real, MetricOptions{Universe: g})
	if err != nil {
		t.Fatal(err)
	}
	if m.QueryARE != 0 || m.PaperARE != 0 || m.TripJSD != 0 || m.LengthJSD != 0 || *m.DiameterJSD != 0 || m.PatternF1 != 1 || m.TopKPrecision != 1 || m.KendallTau != 1 {
		t.Errorf("real against itself: %+v", m)
	}
	uni, err := UniformSequences(len(real), g.Size(), 4, noise.Seeded(12))
	if err != nil {
		t.Fatal(err)
	}
	mu, err := Evaluate(real, uni, MetricOptions{Universe: g})
	if err != nil {
		t.Fatal(err)
	}
	if nb := m.NotBetter(mu); len(nb) != 0 {
		t.Errorf("real is not better than uniform on %v: %+v vs %+v", nb, m, mu)
	}
	if nb := mu.NotBetter(m); len(nb) != 8 {
		t.Errorf("uniform better than real on some metric: not better only on %v", nb)
	}
	// Symbolic: no geometry, no diameter.
	ms, err := Evaluate(real, real, MetricOptions{Size: g.Size()})
	if err != nil || ms.DiameterJSD != nil || ms.QueryKind != PatternQueries {
		t.Errorf("symbolic evaluation: %+v, %v", ms, err)
	}
	if _, err := Evaluate(real, [][]int{{g.Size()}}, MetricOptions{Universe: g}); err == nil {
		t.Error("a released symbol outside the universe was accepted")
	}
}

// TestScores checks the one list of metrics: field order, JSON names,
// directions, and diameter_jsd only with a universe.
func TestScores(t *testing.T) {
	t.Parallel()
	d := 0.25
	m := &Metrics{QueryARE: 1, PaperARE: 1.5, TripJSD: 2, LengthJSD: 3, DiameterJSD: &d, PatternF1: 4, TopKPrecision: 4.5, KendallTau: 5}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var byName map[string]any
	if err := json.Unmarshal(b, &byName); err != nil {
		t.Fatal(err)
	}
	want := []string{"query_are", "paper_are", "trip_jsd", "length_jsd", "diameter_jsd", "pattern_f1", "top_k_precision", "kendall_tau"}
	s := m.Scores()
	if len(s) != len(want) {
		t.Fatalf("%d scores, want %d", len(s), len(want))
	}
	for i, sc := range s {
		if sc.Name != want[i] || byName[sc.Name] != sc.Value {
			t.Errorf("score %d: %+v, JSON has %v", i, sc, byName[sc.Name])
		}
		if sc.HigherBetter != (sc.Name == "pattern_f1" || sc.Name == "top_k_precision" || sc.Name == "kendall_tau") {
			t.Errorf("%s: HigherBetter %v", sc.Name, sc.HigherBetter)
		}
	}
	m.DiameterJSD = nil
	if n := len(m.Scores()); n != 7 {
		t.Errorf("without a universe: %d scores, want 7", n)
	}
	// NotBetter skips a metric only one side has.
	o := &Metrics{QueryARE: 2, PaperARE: 2, TripJSD: 3, LengthJSD: 4, DiameterJSD: &d, PatternF1: 3, TopKPrecision: 4, KendallTau: 4}
	if nb := m.NotBetter(o); len(nb) != 0 {
		t.Errorf("m beats o everywhere, NotBetter %v", nb)
	}
	if nb := o.NotBetter(m); len(nb) != 7 {
		t.Errorf("o loses on the 7 shared metrics, NotBetter %v", nb)
	}
}

// occurrences counts the start positions of p in seqs, by definition.
func occurrences(p []int, seqs [][]int) int64 {
	n := int64(0)
	for _, s := range seqs {
		for i := 0; i+len(p) <= len(s); i++ {
			if slices.Equal(s[i:i+len(p)], p) {
				n++
			}
		}
	}
	return n
}

// bruteRanking ranks every gram of minLen..maxLen symbols of seqs by
// support or occurrences, ties in lexicographic order: the definition
// topGrams must reproduce. The order is total (count, then the grams, which
// differ), so every top k is a prefix of it.
func bruteRanking(seqs [][]int, minLen, maxLen int, occ bool) [][]int {
	counts := map[string]int{}
	for _, s := range seqs {
		seen := map[string]bool{}
		for i := range s {
			for l := minLen; l <= maxLen && i+l <= len(s); l++ {
				key := Key(s[i : i+l])
				if occ || !seen[key] {
					counts[key]++
					seen[key] = true
				}
			}
		}
	}
	type gram struct {
		g []int
		n int
	}
	grams := make([]gram, 0, len(counts))
	for k, n := range counts {
		grams = append(grams, gram{FromKey(k), n})
	}
	slices.SortFunc(grams, func(a, b gram) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return slices.Compare(a.g, b.g)
	})
	out := make([][]int, len(grams))
	for i, g := range grams {
		out[i] = g.g
	}
	return out
}

// TestTopGramsExact: the level-wise search returns exactly the ranking of
// every gram, by support and by occurrences, on skewed random databases
// (long repeats, many ties) and on uniform ones, and at k beyond the
// number of grams.
func TestTopGramsExact(t *testing.T) {
	t.Parallel()
	for seed := range uint64(12) {
		src := noise.Seeded(seed)
		size := 2 + int(seed%5)
		var db [][]int
		for range 60 + 20*int(seed) {
			s := make([]int, 1+noise.Int64N(src, 15))
			for j := range s {
				if seed%2 == 0 && j > 0 && noise.Int64N(src, 3) > 0 {
					s[j] = s[j-1] // runs: repeated grams within a sequence
				} else {
					s[j] = int(noise.Int64N(src, int64(size)))
				}
			}
			db = append(db, s)
		}
		// The brute-force rankings, once per database (each k's top is a prefix).
		type config struct {
			minLen, maxLen int
			occ            bool
		}
		configs := []config{{2, 8, false}, {1, 8, true}, {1, 3, false}, {3, 5, true}}
		rankings := map[config][][]int{}
		for _, c := range configs {
			rankings[c] = bruteRanking(db, c.minLen, c.maxLen, c.occ)
		}
		top := func(c config, k int) [][]int { r := rankings[c]; return r[:min(k, len(r))] }
		for _, k := range []int{1, 7, 40, 100000} {
			for _, c := range configs {
				got := topGrams(db, size, k, c.minLen, c.maxLen, c.occ)
				if want := top(c, k); !slices.EqualFunc(got, want, slices.Equal) {
					t.Fatalf("seed %d k %d %+v: level-wise %v\nwant %v", seed, k, c, got, want)
				}
			}
			// Both rankings of the metrics in one search.
			both := topGramsBy(db, size, k, 8, []gramRank{{2, false}, {1, true}})
			if !slices.EqualFunc(both[0], top(config{2, 8, false}, k), slices.Equal) ||
				!slices.EqualFunc(both[1], top(config{1, 8, true}, k), slices.Equal) {
				t.Fatalf("seed %d k %d: the joint search differs from the definitions", seed, k)
			}
		}
	}
}

// TestPaperMeasures checks paper_are and top_k_precision by hand and
// their defaults (10,000 queries of 1 to 6 symbols, sanity bound 0.1 % of
// the persons).
func TestPaperMeasures(t *testing.T) {
	t.Parallel()
	real := [][]int{{0, 0, 0}, {0, 1}}
	rel := [][]int{{0}, {0, 1}}
	// [0] occurs 4 times in real (3 in one sequence), 2 in rel: |4-2|/4;
	// [0 0] occurs 2 times, 0 in rel: 1. Support-based query_are would
	// see 2 and 2 sequences for [0]: no error.
	qs := []patternQuery{{0}, {0, 0}}
	if got := paperARE(real, rel, qs, 1); !metricNear(got, 0.75, 1e-15) {
		t.Errorf("PaperARE = %v, want 0.75", got)
	}
	if got := queryARE(real, rel, []query{patternQuery{0}}, 1); got != 0 {
		t.Errorf("QueryARE of [0] = %v, want 0 (support)", got)
	}
	// Top 2 by occurrences: real [0] (4), [0 0] (2); rel [0] (2), then
	// [0 1] and [1] tie at 1, [0 1] first: precision 1/2.
	if got := topKPrecision(real, rel, 2, 8); got != 0.5 {
		t.Errorf("TopKPrecision = %v, want 0.5", got)
	}
	if got := topKPrecision(real, real, 2, 8); got != 1 {
		t.Errorf("TopKPrecision of real against itself = %v, want 1", got)
	}
	qq := newPaperQueries(MetricOptions{Size: 17, QuerySeed: 3})
	if len(qq) != defaultPaperQueries {
		t.Fatalf("%d paper queries, want %d", len(qq), defaultPaperQueries)
	}
	lens := map[int]int{}
	for _, q := range qq {
		lens[len(q)]++
	}
	for l := 1; l <= 6; l++ {
		if lens[l] < defaultPaperQueries/6-300 || lens[l] > defaultPaperQueries/6+300 {
			t.Errorf("%d queries of length %d, want about %d", lens[l], l, defaultPaperQueries/6)
		}
	}
	if len(lens) != 6 {
		t.Errorf("query lengths %v, want 1 to 6", lens)
	}
	m, err := Evaluate(real, rel, MetricOptions{Size: 2, Persons: 200000, PaperQueries: 50})
	if err != nil {
		t.Fatal(err)
	}
	if m.PaperSanityBound != 200 || m.PaperQueries != 50 || m.SanityBound != 1 {
		t.Errorf("paper sanity bound %v over %d queries (query_are's %v), want 200 (0.1 %% of 200,000 persons) over 50",
			m.PaperSanityBound, m.PaperQueries, m.SanityBound)
	}
}
