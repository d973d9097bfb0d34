package trajdb

import (
	"cmp"
	"slices"
)

// This file holds the gram counting behind the metrics: a trie of query
// patterns walked once per database, and an exact level-wise search for
// the k most frequent grams that never builds the trie of every
// substring (on MSNBC that trie held tens of millions of nodes).

// patternTrie stores sequences of symbols as paths from the root (node 0).
// Children are found in a dense table over small alphabets and in a map
// otherwise (as countTrie).
type patternTrie struct {
	size   int
	dense  []int32 // node·size + x -> child, 0 for none
	sparse map[uint64]int32
	parent []int32
	sym    []int32
	depth  []int32
}

func newPatternTrie(size int) *patternTrie {
	t := &patternTrie{size: size, parent: []int32{-1}, sym: []int32{-1}, depth: []int32{0}}
	if size > denseTrieMax {
		t.sparse = map[uint64]int32{}
	} else {
		t.dense = make([]int32, size)
	}
	return t
}

func (t *patternTrie) next(n int32, x int) (int32, bool) {
	if x < 0 || x >= t.size {
		return 0, false
	}
	if t.sparse == nil {
		c := t.dense[int(n)*t.size+x]
		return c, c > 0
	}
	c, ok := t.sparse[uint64(n)<<32|uint64(uint32(x))]
	return c, ok
}

// insert1 returns the child of n for symbol x, creating it if needed.
func (t *patternTrie) insert1(n int32, x int) int32 {
	if c, ok := t.next(n, x); ok {
		return c
	}
	c := int32(len(t.parent))
	if t.sparse == nil {
		t.dense[int(n)*t.size+x] = c
		t.dense = append(t.dense, make([]int32, t.size)...)
	} else {
		t.sparse[uint64(n)<<32|uint64(uint32(x))] = c
	}
	t.parent = append(t.parent, n)
	t.sym = append(t.sym, int32(x))
	t.depth = append(t.depth, t.depth[n]+1)
	return c
}

func (t *patternTrie) insert(p []int) int32 {
	n := int32(0)
	for _, x := range p {
		n = t.insert1(n, x)
	}
	return n
}

// walk follows s from the root along existing nodes, calling visit on each
// node reached.
func (t *patternTrie) walk(s []int, visit func(int32)) {
	n := int32(0)
	for _, x := range s {
		c, ok := t.next(n, x)
		if !ok {
			return
		}
		visit(c)
		n = c
	}
}

// trieCounts counts, for every node of t, the sequences of seqs that
// contain its pattern contiguously (support) and its occurrences
// (every start position).
func (t *patternTrie) counts(seqs [][]int) (support, occ []int64) {
	support = make([]int64, len(t.parent))
	occ = make([]int64, len(t.parent))
	seen := make([]int32, len(t.parent)) // last sequence (1-based) that matched a node
	maxDepth := 0
	for _, d := range t.depth {
		maxDepth = max(maxDepth, int(d))
	}
	for si, s := range seqs {
		stamp := int32(si + 1)
		for i := range s {
			n := int32(0)
			for _, x := range s[i:min(len(s), i+maxDepth)] {
				c, ok := t.next(n, x)
				if !ok {
					break
				}
				n = c
				occ[n]++
				if seen[n] != stamp {
					seen[n] = stamp
					support[n]++
				}
			}
		}
	}
	return support, occ
}

// topGrams returns the k most frequent grams (contiguous subsequences) of
// seqs of minLen to maxLen symbols, ranked by support (sequences
// containing the gram, each counted once) or, with occurrences, by the
// number of occurrences, ties broken by the lexicographic order of the
// symbols. Fewer come back if seqs have fewer distinct grams.
func topGrams(seqs [][]int, size, k, minLen, maxLen int, occurrences bool) [][]int {
	return topGramsBy(seqs, size, k, maxLen, []gramRank{{minLen, occurrences}})[0]
}

// gramRank is one ranking of topGramsBy: grams of at least minLen
// symbols, by occurrences or by support.
type gramRank struct {
	minLen      int
	occurrences bool
}

// topGramsBy returns the top k of seqs for each ranking, in one search.
//
// The search is level-wise and exact. A gram's count is at most its
// prefix's and its suffix's (both kinds of count are anti-monotone), so
// once a ranking has k grams with count τ or more, no gram whose prefix
// or suffix counts less than τ can enter its top k. Level L counts only
// the windows whose two (L−1)-symbol sub-windows pass that test for some
// ranking, τ being the k-th largest count so far, which only grows.
// Whether a window is counted depends only on its gram, so every gram
// counted is counted in full; and every gram counting at least a
// ranking's final τ has both sub-grams counting at least as much, so it
// was counted: the result is that of counting every gram. Memory is a few
// int32 per symbol plus the grams counted.
func topGramsBy(seqs [][]int, size, k, maxLen int, ranks []gramRank) [][][]int {
	out := make([][][]int, len(ranks))
	if k < 1 || maxLen < 1 {
		return out
	}
	flat, seqOf := flattenSeqs(seqs)
	// Grams: level-1 ids are the symbols.
	g := &gramTable{seqOf: seqOf}
	for x := range size {
		g.add(-1, int32(x), 1)
	}
	newGram, count, counts := g.add, g.count, g.counts
	// win[p] is the gram of the window of the current length at p, -1
	// once the window is dead; alive lists the live windows in order.
	win := make([]int32, len(flat))
	alive := make([]int32, 0, len(flat))
	for p, x := range flat {
		win[p] = x
		if x >= 0 {
			count(x, p)
			alive = append(alive, int32(p))
		}
	}
	// best[r] holds ranking r's k largest counts so far.
	best := make([][]int64, len(ranks))
	tau := make([]int64, len(ranks))
	addLevel := func(from int) {
		for r, rk := range ranks {
			c := counts(rk)
			if from < len(c) && int(g.len[from]) < rk.minLen {
				continue
			}
			for id := from; id < len(c); id++ {
				best[r] = append(best[r], c[id])
			}
			slices.SortFunc(best[r], func(a, b int64) int { return cmp.Compare(b, a) })
			best[r] = best[r][:min(len(best[r]), k)]
			if len(best[r]) == k {
				tau[r] = best[r][k-1]
			}
		}
	}
	// okBy[r][id]: gram id counts at least ranking r's τ (as of the end
	// of its level); a window extends when both its sub-grams pass for
	// the same ranking.
	okBy := make([][]bool, len(ranks))
	mark := func(from int) {
		for r, rk := range ranks {
			c := counts(rk)
			for len(okBy[r]) < len(c) {
				okBy[r] = append(okBy[r], false)
			}
			for id := from; id < len(c); id++ {
				okBy[r][id] = c[id] >= tau[r]
			}
		}
	}
	pass := func(a, b int32) bool {
		for r := range ranks {
			if okBy[r][a] && okBy[r][b] {
				return true
			}
		}
		return false
	}
	addLevel(0)
	mark(0)
	from := 0 // first id of the previous level
	for l := 2; l <= maxLen && len(alive) > 0; l++ {
		prevFrom, prevN := from, len(g.occ)-from
		from = len(g.occ)
		// Children of the previous level's grams: a dense table when it
		// is small, a map otherwise.
		var dense []int32
		var ids map[uint64]int32
		if prevN*size <= 1<<22 {
			dense = make([]int32, prevN*size)
		} else {
			ids = map[uint64]int32{}
		}
		next := alive[:0]
		for _, p32 := range alive {
			p := int(p32)
			a, b := win[p], win[p+1]
			x := flat[p+l-1]
			if a < 0 || b < 0 || x < 0 || !pass(a, b) {
				win[p] = -1
				continue
			}
			var id int32
			if dense != nil {
				slot := int(a-int32(prevFrom))*size + int(x)
				if id = dense[slot] - 1; id < 0 {
					id = newGram(a, x, l)
					dense[slot] = id + 1
				}
			} else {
				key := uint64(a)<<32 | uint64(uint32(x))
				var ok bool
				if id, ok = ids[key]; !ok {
					id = newGram(a, x, l)
					ids[key] = id
				}
			}
			count(id, p)
			win[p] = id
			next = append(next, p32)
		}
		alive = next
		if from == len(g.occ) {
			break
		}
		addLevel(from)
		mark(from)
	}
	for r, rk := range ranks {
		out[r] = topCounted(counts(rk), g.len, g.symbols, rk.minLen, maxLen, k, tau[r])
	}
	return out
}

// gramTable holds topGramsBy's grams by id, as parallel slices: a gram is
// its prefix gram and last symbol, its length, its occurrences and its
// support (the number of sequences it occurs in; stamp is the last
// sequence counted, so that a sequence counts once).
type gramTable struct {
	seqOf              []int32
	prefix, sym, stamp []int32
	len                []uint8
	occ, sup           []int64
}

// add makes the gram prefix·x of length l and returns its id.
func (g *gramTable) add(prefix int32, x int32, l int) int32 {
	g.prefix = append(g.prefix, prefix)
	g.sym = append(g.sym, x)
	g.len = append(g.len, uint8(min(l, 255)))
	g.occ = append(g.occ, 0)
	g.sup = append(g.sup, 0)
	g.stamp = append(g.stamp, 0)
	return int32(len(g.occ) - 1)
}

// count counts one occurrence of gram id at position p of the flattened
// sequences.
func (g *gramTable) count(id int32, p int) {
	g.occ[id]++
	if si := g.seqOf[p] + 1; g.stamp[id] != si {
		g.stamp[id] = si
		g.sup[id]++
	}
}

// counts returns the counts ranking r ranks by.
func (g *gramTable) counts(r gramRank) []int64 {
	if r.occurrences {
		return g.occ
	}
	return g.sup
}

// symbols returns gram id's symbols.
func (g *gramTable) symbols(id int32) []int {
	out := make([]int, g.len[id])
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = int(g.sym[id])
		id = g.prefix[id]
	}
	return out
}

// flattenSeqs puts the symbols in one array, each sequence followed by a
// -1 sentinel (a window holds no sentinel exactly when it lies in one
// sequence), with the sequence of each position, for support.
func flattenSeqs(seqs [][]int) (flat, seqOf []int32) {
	total := 0
	for _, s := range seqs {
		total += len(s) + 1
	}
	flat = make([]int32, 0, total)
	seqOf = make([]int32, 0, total)
	for si, s := range seqs {
		for _, x := range s {
			flat = append(flat, int32(x))
			seqOf = append(seqOf, int32(si))
		}
		flat = append(flat, -1)
		seqOf = append(seqOf, int32(si))
	}
	return flat, seqOf
}

// topCounted returns the k grams of length minLen..maxLen with the largest
// positive counts c (at least tau), ties broken by the symbols in order.
func topCounted(c []int64, gLen []uint8, symbols func(int32) []int, minLen, maxLen, k int, tau int64) [][]int {
	var cand []int32
	for id := range c {
		if int(gLen[id]) >= minLen && int(gLen[id]) <= maxLen && c[id] > 0 && c[id] >= tau {
			cand = append(cand, int32(id))
		}
	}
	pats := make([][]int, len(cand))
	for i, id := range cand {
		pats[i] = symbols(id)
	}
	order := make([]int, len(cand))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if d := cmp.Compare(c[cand[b]], c[cand[a]]); d != 0 {
			return d
		}
		return slices.Compare(pats[a], pats[b])
	})
	top := make([][]int, 0, min(k, len(order)))
	for _, i := range order[:min(k, len(order))] {
		top = append(top, pats[i])
	}
	return top
}
