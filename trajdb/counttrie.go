package trajdb

import (
	"fmt"
	"slices"
)

// countTrie holds true gram counts as a trie over the alphabet: node 0 is
// the empty gram, and a node's count is the number of occurrences of its
// gram, end the number of those that end their sequence (the bin gram·&).
// It replaces string-keyed maps on the hot path: a release of MSNBC counts
// about 20 million gram occurrences, one array step each.
type countTrie struct {
	size  int
	count []int64
	end   []int64
	sym   []int32
	// first and next list each node's children (in insertion order).
	first, next []int32
	// Children are found in a dense table (node·size + x) over small
	// alphabets and in a map (node<<32 | x) otherwise.
	dense  []int32
	sparse map[uint64]int32
}

// denseTrieMax is the largest alphabet whose tries use dense child tables:
// 4·(|X|) bytes a node, cheap for click-stream alphabets, too much for a
// 1,000-cell grid.
const denseTrieMax = 64

func newCountTrie(size int) *countTrie {
	t := &countTrie{size: size}
	if size > denseTrieMax {
		t.sparse = make(map[uint64]int32)
	}
	t.newNode(-1)
	return t
}

func (t *countTrie) newNode(sym int32) int32 {
	n := int32(len(t.count))
	t.count = append(t.count, 0)
	t.end = append(t.end, 0)
	t.sym = append(t.sym, sym)
	t.first = append(t.first, -1)
	t.next = append(t.next, -1)
	if t.sparse == nil {
		t.dense = append(t.dense, make([]int32, t.size)...)
	}
	return n
}

// child returns the child of n for symbol x, or -1.
func (t *countTrie) child(n int32, x int) int32 {
	if t.sparse == nil {
		if c := t.dense[int(n)*t.size+x]; c > 0 {
			return c
		}
		return -1
	}
	if c, ok := t.sparse[uint64(n)<<32|uint64(x)]; ok {
		return c
	}
	return -1
}

// add returns the child of n for x, creating it if needed.
func (t *countTrie) add(n int32, x int) int32 {
	if c := t.child(n, x); c >= 0 {
		return c
	}
	c := t.newNode(int32(x))
	if t.sparse == nil {
		t.dense[int(n)*t.size+x] = c
	} else {
		t.sparse[uint64(n)<<32|uint64(x)] = c
	}
	t.next[c] = t.first[n]
	t.first[n] = c
	return c
}

// children returns n's children sorted by symbol.
func (t *countTrie) children(n int32) []int32 {
	var out []int32
	for c := t.first[n]; c >= 0; c = t.next[c] {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b int32) int { return int(t.sym[a] - t.sym[b]) })
	return out
}

// addGrams counts the grams of s of up to n symbols (every start
// position), and those of fewer than n symbols that end s: the n-gram
// tree's counts of one sequence.
func (t *countTrie) addGrams(s []int, n int) {
	for j := range s {
		v := int32(0)
		for l := 1; l <= n && j+l <= len(s); l++ {
			v = t.add(v, s[j+l-1])
			t.count[v]++
			if j+l == len(s) && l < n {
				t.end[v]++
			}
		}
	}
}

// trieOfCounts builds the trie of c's gram counts, checking that they are
// the counts of some sequences: a gram's proper prefix is counted at least
// as often (a gram is counted only if its prefix is), and an end bin at
// most as often as its gram.
func trieOfCounts(name MechanismName, c *TreeCounts) (*countTrie, error) {
	keys := make([]string, 0, len(c.Count))
	for k, v := range c.Count {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	// Shorter grams first, so that every parent exists before its
	// children; then in key order, so that the trie does not depend on the
	// map's iteration order.
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		if a < b {
			return -1
		}
		return 1
	})
	t := newCountTrie(c.Size)
	find := func(k string) int32 {
		v := int32(0)
		for _, x := range FromKey(k) {
			if v = t.child(v, x); v < 0 {
				return -1
			}
		}
		return v
	}
	for _, k := range keys {
		parent := int32(0)
		if len(k) > 4 {
			if parent = find(k[:len(k)-4]); parent < 0 {
				return nil, fmt.Errorf("trajdb: %s: inconsistent counts: %v counted but not its prefix", name, FromKey(k))
			}
		}
		if parent != 0 && t.count[parent] < c.Count[k] {
			return nil, fmt.Errorf("trajdb: %s: inconsistent counts: %v counted more often than its prefix", name, FromKey(k))
		}
		v := t.add(parent, FromKey(k[len(k)-4:])[0])
		t.count[v] = c.Count[k]
	}
	for k, e := range c.End {
		if e == 0 {
			continue
		}
		v := find(k)
		if v < 0 || e > t.count[v] {
			return nil, fmt.Errorf("trajdb: %s: inconsistent counts: %v ends a sequence more often than it occurs", name, FromKey(k))
		}
		t.end[v] = e
	}
	return t, nil
}
