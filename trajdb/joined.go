package trajdb

import (
	"math"
	"math/rand/v2"

	"github.com/tracepriv/tracepriv/noise"
)

// This file holds ReconstructJoined (see NGram): the authors' pieces
// joined into as many sequences as the noisy counts say there are people.

// joinCandidates is how many chains ending, and how many starting, with
// the planned symbols a join draws before it keeps the pair whose new
// grams the noisy counts most lack.
const joinCandidates = 4

// joinChain is a run of joined pieces: its first and last n_max − 1
// symbols (all of them when shorter) and its length.
type joinChain struct {
	head, tail []int
	n          int
	free       bool // can still be joined after another chain
}

// joined returns the pieces of the authors' decomposition joined into
// N sequences, N the noisy number of sequences (as for
// ReconstructPersons: Σ_y of the noisy starts), or into as few as l_max
// allows. The pieces hold the noisy grams' occurrences (each gram of up to
// n_max symbols at most its truncated count, unigrams exactly), so the
// grams they lack are what the joins should add; and since a sequence has
// one bigram fewer than unigrams, P pieces for N people lack P − N
// bigrams, one per join. The joins are planned as a table J(x, y), in
// proportion to the bigrams x·y the pieces lack (systematic rounding to
// P − N in all); each planned join draws joinCandidates chains ending
// with x and as many starting with y and keeps the pair whose junction
// adds the most grams of 3 to n_max symbols that the counts hold and the
// pieces lack (less those it adds in surplus). A pair that would pass
// l_max symbols or close a cycle is not joined; the joins the plan could
// not place are then made between any chains, scored the same way over
// all the junction's grams. It reads only the noisy tree and src:
// post-processing.
func (t *ngramTree) joined(lmax int, src noise.Source) [][]int {
	m, n := t.m, t.nmax
	pieces := ngramReconstruct(t.grams(), m, lmax)
	rootW := make([]float64, m+1)
	persons := int64(math.Round(t.startWeights(nil, rootW)))
	joins := int64(len(pieces)) - max(persons, 0)
	if joins <= 0 || len(pieces) == 0 {
		return pieces
	}

	// def[v][y]: the noisy count of the gram v.gram·y (truncated, as the
	// pieces were cut from) less its occurrences in the pieces.
	for _, v := range t.nodes {
		v.def = nil
		if v.nReleased == 0 {
			continue
		}
		v.def = make([]float64, m+1)
		for y, h := range v.hist {
			if c := math.Trunc(h); c >= 1 {
				v.def[y] = c
			}
		}
	}
	// gramAt walks the grams s[i..i], s[i..i+1], … up to n symbols and
	// calls f with each one's deficit row and bin.
	gramAt := func(s []int, i int, f func(d []float64, y, l int)) {
		v := t.root
		for j := i; j < len(s) && j-i < n; j++ {
			if d := v.def; d != nil {
				f(d, s[j], j-i+1)
			}
			if v.kids == nil || v.kids[s[j]] == nil {
				return
			}
			v = v.kids[s[j]]
		}
	}
	for _, p := range pieces {
		for i := range p {
			gramAt(p, i, func(d []float64, y, _ int) { d[y]-- })
		}
	}

	// The plan: the joins x→y in proportion to the bigrams x·y the
	// pieces lack (a sparse table: the alphabet can be large).
	type pair struct{ x, y int }
	var pairs []pair
	var plan []float64
	s := 0.0
	for x := range m {
		if v := t.node([]int{x}); v != nil && v.def != nil {
			for y, d := range v.def[:m] {
				if d > 0 {
					pairs = append(pairs, pair{x, y})
					plan = append(plan, d)
					s += d
				}
			}
		}
	}
	// One generator for the draws below (noise.Int64N makes one a call):
	// the same draws from src.
	rng := rand.New(src)
	counts := make([]int64, len(plan))
	if s > 0 {
		systematicSplit(joins, plan, s, uniform01(src), counts)
	}
	// Every planned join once, in a random order.
	order := make([]int32, 0, joins)
	for k, c := range counts {
		for range c {
			order = append(order, int32(k))
		}
	}
	for i := len(order) - 1; i > 0; i-- {
		j := rng.Int64N(int64(i + 1))
		order[i], order[j] = order[j], order[i]
	}

	// Chains: every piece starts as one. byEnd[x] lists the chains ending
	// with x, byStart[y] the free chains starting with y (swap-removed).
	ch := make([]joinChain, len(pieces))
	next := make([]int32, len(pieces))
	headOf := make([]int32, len(pieces)) // the chain of a chain's last piece
	tailOf := make([]int32, len(pieces)) // the last piece of a chain
	byEnd := make([][]int32, m)
	byStart := make([][]int32, m)
	posEnd := make([]int32, len(pieces))
	posStart := make([]int32, len(pieces))
	for i, p := range pieces {
		k := min(len(p), n-1)
		ch[i] = joinChain{head: p[:k:k], tail: p[len(p)-k:], n: len(p), free: true}
		next[i] = -1
		headOf[i] = int32(i)
		tailOf[i] = int32(i)
		x, y := p[len(p)-1], p[0]
		posEnd[i] = int32(len(byEnd[x]))
		byEnd[x] = append(byEnd[x], int32(i))
		posStart[i] = int32(len(byStart[y]))
		byStart[y] = append(byStart[y], int32(i))
	}
	remove := func(list [][]int32, pos []int32, s int, id int32) {
		l := list[s]
		i := pos[id]
		last := l[len(l)-1]
		l[i] = last
		pos[last] = i
		list[s] = l[:len(l)-1]
	}
	// score counts the junction's grams of minLen to n symbols the pieces
	// lack, less those they already hold in full.
	buf := make([]int, 0, 2*n)
	// tailNodes sets from[i] to the node of the context a.tail[i:] (nil if
	// the tree has none): where the junction's grams that start at i
	// continue into the next chain.
	tailNodes := func(a *joinChain, from []*ngramNode) {
		for i := range a.tail {
			v := t.root
			for _, x := range a.tail[i:] {
				if v.kids == nil || v.kids[x] == nil {
					v = nil
					break
				}
				v = v.kids[x]
			}
			from[i] = v
		}
	}
	score := func(from []*ngramNode, la int, b *joinChain, minLen int) int {
		sc := 0
		for i, v := range from[:la] {
			for k, y := range b.head {
				l := la - i + k + 1
				if v == nil || l > n {
					break
				}
				if v.def != nil && l >= minLen {
					if v.def[y] >= 1 {
						sc++
					} else {
						sc--
					}
				}
				if v.kids == nil {
					break
				}
				v = v.kids[y]
			}
		}
		return sc
	}
	from := make([]*ngramNode, n)
	// pick draws joinCandidates last pieces from tails() and as many
	// chains from heads() and returns the best pair to join (-1 if none
	// fits in l_max symbols without closing a cycle).
	pick := func(tails, heads func() int32, minLen int) (ta, b int32) {
		ta, b, best := -1, -1, math.MinInt
		for range joinCandidates {
			t := tails()
			a := headOf[t]
			tailNodes(&ch[a], from)
			for range joinCandidates {
				h := heads()
				if h == a || ch[a].n+ch[h].n > lmax {
					continue
				}
				if sc := score(from, len(ch[a].tail), &ch[h], minLen); sc > best {
					ta, b, best = t, h, sc
				}
			}
		}
		return ta, b
	}
	chains := int64(len(pieces))
	// join joins chain a (last piece ta) to chain b: the new chain is a,
	// ending with b's last piece. Its junction's grams are no longer
	// lacking.
	join := func(ta, b int32) {
		a := headOf[ta]
		ca, cb := &ch[a], &ch[b]
		x, y := pieces[ta][len(pieces[ta])-1], pieces[b][0]
		buf = append(append(buf[:0], ca.tail...), cb.head...)
		for i := range len(ca.tail) {
			gramAt(buf, i, func(d []float64, y, l int) {
				if i+l > len(ca.tail) {
					d[y]--
				}
			})
		}
		next[ta] = b
		tb := tailOf[b]
		headOf[tb], tailOf[a] = a, tb
		remove(byEnd, posEnd, x, ta)
		remove(byStart, posStart, y, b)
		k := min(ca.n+cb.n, n-1)
		if ca.n < n-1 {
			ca.head = append(append([]int{}, ca.head...), cb.head...)[:k:k]
		}
		if cb.n < n-1 {
			ca.tail = append([]int{}, buf[len(buf)-k:]...)
		} else {
			ca.tail = cb.tail
		}
		ca.n += cb.n
		cb.free = false
		chains--
	}
	randomIn := func(lists [][]int32) func() int32 {
		return func() int32 {
			i := rng.Int64N(chains)
			for _, l := range lists {
				if i < int64(len(l)) {
					return l[i]
				}
				i -= int64(len(l))
			}
			return lists[len(lists)-1][0] // not reached: the lists hold chains entries
		}
	}
	for _, k := range order {
		x, y := pairs[k].x, pairs[k].y
		if len(byEnd[x]) == 0 || len(byStart[y]) == 0 {
			continue
		}
		ta, b := pick(func() int32 { return byEnd[x][rng.Int64N(int64(len(byEnd[x])))] },
			func() int32 { return byStart[y][rng.Int64N(int64(len(byStart[y])))] }, 3)
		if ta >= 0 {
			join(ta, b)
		}
	}
	// Joins the plan could not place (no chain ends or starts with its
	// symbols any more, or none fits) are made between any chains, the
	// pair chosen by all the grams of its junction.
	for tries := 4 * (chains - persons); chains > persons && tries > 0; tries-- {
		if ta, b := pick(randomIn(byEnd), randomIn(byStart), 2); ta >= 0 {
			join(ta, b)
		}
	}

	// Emit each chain, from its first piece; a chain of one piece is the
	// piece itself (each is its own capacity-limited slice).
	sb := newSeqBuilder()
	out := make([][]int, 0, chains)
	seq := make([]int, 0, lmax)
	for i := range ch {
		if !ch[i].free {
			continue
		}
		if next[i] < 0 {
			out = append(out, pieces[i])
			continue
		}
		seq = seq[:0]
		for p := int32(i); p >= 0; p = next[p] {
			seq = append(seq, pieces[p]...)
		}
		sb.emit(seq, 1)
		out = append(out, sb.seqs[len(sb.seqs)-1])
	}
	return out
}
