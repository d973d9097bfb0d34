package trajdb

import "sort"

// ngramReconstruct turns released n-gram counts (keyed by Key, the symbol
// end standing for &, counts >= 1) into a synthetic database, as the
// authors' Reconstruction does (see NGram): Markov extension of the longest
// grams up to lmax symbols, removal of the grams that end with &, then a
// greedy decomposition, longest gram first. It is post-processing: it sees
// only the noisy grams. grams is consumed.
func ngramReconstruct(grams map[string]int64, end, lmax int) [][]int {
	const w = 4 // bytes per symbol in a Key

	// Extension. prefixes[k] lists the grams k·y; total is c(∅), the
	// denominator of the unigram joins (0th-order Markov chain).
	maxLen := 0
	total := int64(0)
	prefixes := make(map[string][]string)
	for k, c := range grams {
		maxLen = max(maxLen, len(k))
		if len(k) == w {
			total += c
		}
		prefixes[k[:len(k)-w]] = append(prefixes[k[:len(k)-w]], k)
	}
	var longest []string
	for k := range grams {
		if len(k) == maxLen {
			longest = append(longest, k)
		}
	}
	sort.Strings(longest) // a fixed order; the result does not depend on it
	for len(longest) > 1 && maxLen/w < lmax {
		var fresh []string
		for _, g1 := range longest {
			k := g1[w:]
			den := total
			if k != "" {
				den = grams[k]
			}
			if den <= 0 {
				continue
			}
			for _, g2 := range prefixes[k] {
				// c(g1·y) = ⌊c(g1)·c(k·y)/c(k)⌋, the Markov estimate.
				c := int64(float64(grams[g1]) * float64(grams[g2]) / float64(den))
				if c >= 1 {
					g := g1 + g2[len(g2)-w:]
					grams[g] = c
					fresh = append(fresh, g)
				}
			}
		}
		for _, g := range fresh {
			prefixes[g[:len(g)-w]] = append(prefixes[g[:len(g)-w]], g)
		}
		longest = fresh
		maxLen += w
	}

	// Grams that end the sequence are not sequences.
	endKey := Key([]int{end})
	keys := make([]string, 0, len(grams))
	for k, c := range grams {
		if k[len(k)-w:] == endKey || c <= 0 {
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if len(keys[a]) != len(keys[b]) {
			return len(keys[a]) > len(keys[b])
		}
		return keys[a] > keys[b]
	})

	// Greedy decomposition: release a gram c times if its sub-grams can
	// pay for it, and charge them.
	sb := newSeqBuilder()
	sub := make(map[string]int64)
	for _, g := range keys {
		c := grams[g]
		if c <= 0 {
			continue
		}
		clear(sub)
		l := len(g) / w
		for i := 1; i < l; i++ {
			for s := 0; s+i <= l; s++ {
				sub[g[w*s:w*(s+i)]]++
			}
		}
		ok := true
		for k, n := range sub {
			if grams[k]-n*c < 0 {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		sb.emit(FromKey(g), c)
		for k, n := range sub {
			grams[k] -= n * c
		}
	}
	return sb.seqs
}
