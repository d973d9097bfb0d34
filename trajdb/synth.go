package trajdb

import (
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// This file holds ReconstructPersons (see NGram): the release drawn as a
// prefix tree whose size, starts and ends come from the noisy grams.

// count returns bin y of v as ReconstructPersons reads it: the consistent
// noisy count, clipped at 0, except that a bin v did not release counts at
// most v's threshold θ. A bin is left unreleased because its noisy count
// did not exceed θ, so its true count is most likely below θ; but
// consistency fills it from the Markov neighbour, which can hand it far
// more: a context seen only before an end (⟨3 3⟩ in ⟨3 3⟩ · &) inherits
// its neighbour's continuations (⟨3⟩ followed by 3) and would start
// sequences ⟨3 3 3 …⟩ that no one has. The weights are normalised where
// they are used, so the counts need not add up.
func (v *ngramNode) count(y int) float64 {
	h := math.Max(v.hist[y], 0)
	if v.parent == nil || v.hooksExact || v.released[y] {
		return h
	}
	return math.Min(h, v.theta)
}

// gramCount returns the consistent noisy count c(h·y) of the tree (y = m
// for &), 0 when h's node was never expanded; negative noisy counts (the
// root's) count as 0.
func (t *ngramTree) gramCount(h []int, y int) float64 {
	v := t.node(h)
	if v == nil {
		return 0
	}
	return v.count(y)
}

// startWeights returns, for |h| <= n_max − 2, the noisy number of
// sequences that begin with h·y for every symbol y (c(h·y) − Σ_z c(z·h·y))
// and, at index m, of those that are exactly h (c(h·&) − Σ_z c(z·h·&); 0
// for the empty h), clipped at 0. w is filled and its sum returned.
func (t *ngramTree) startWeights(h []int, w []float64) float64 {
	m := t.m
	v := t.node(h)
	for y := range w {
		w[y] = 0
		if v != nil {
			w[y] = v.count(y)
		}
	}
	if len(h) == 0 {
		w[m] = 0
	}
	zh := make([]int, len(h)+1)
	copy(zh[1:], h)
	for z := range m {
		zh[0] = z
		u := t.node(zh)
		if u == nil {
			continue
		}
		for y := range w {
			w[y] -= u.count(y)
		}
	}
	s := 0.0
	for y := range w {
		w[y] = math.Max(w[y], 0)
		s += w[y]
	}
	return s
}

// markovWeights fills w with the transition weights after h: those of
// the node of the longest suffix of h, of at most n_max − 1 symbols, that
// has released bins and positive mass (transition), and returns their sum
// (0 if there is none: the root, with no & bin, cannot end a sequence).
func (t *ngramTree) markovWeights(h []int, w []float64) float64 {
	for l := min(len(h), t.nmax-1); l >= 1; l-- {
		v := t.node(h[len(h)-l:])
		if v == nil || v.nReleased == 0 {
			continue
		}
		if s := t.transition(v, w); s > 0 {
			return s
		}
	}
	return 0
}

// transition fills w with the weights of what follows v's context and
// returns their sum: v's histogram shrunk towards the transition of the
// next shorter context that has a node (recursively),
//
//	w_y = (h_y + α·q_y/Σq) · s/(s + α),  s = Σh,  α = 5·(|X|+1)·b,
//
// with b = calib/ε_v the noise scale of v's bins. Every bin carries noise
// of scale b, and clipping a bin at 0 adds b/2 to it on average (E max(0,
// Z) for a Laplace Z), so v's |X|+1 bins gain about (|X|+1)·b/2 of mass
// that no person put there; consistency then spreads a small context's
// mass in its neighbour's shape. A chain run through thousands of small
// contexts adds that up into thousands of spurious transitions to rare
// symbols. α puts that bias at about a tenth of the weight a context of
// mass α keeps for itself: a context whose mass is large against its
// noise keeps its own law, a small one follows its shorter suffix, whose
// counts are larger. One-symbol contexts are used as they are. The rule
// reads only noisy counts and public parameters: post-processing.
func (t *ngramTree) transition(v *ngramNode, w []float64) float64 {
	if v.trans == nil {
		v.trans = t.computeTransition(v)
	}
	s := 0.0
	for y, x := range v.trans {
		w[y] = x
		s += x
	}
	return s
}

func (t *ngramTree) computeTransition(v *ngramNode) []float64 {
	m := t.m
	out := make([]float64, m+1)
	s := 0.0
	for y := range v.raw {
		out[y] = v.count(y)
		s += out[y]
	}
	if len(v.gram) <= 1 || s <= 0 || t.cn.hooks.exact || v.eps <= 0 {
		return out
	}
	q := make([]float64, m+1)
	qs := 0.0
	for k := 1; k < len(v.gram) && qs <= 0; k++ {
		if u := t.node(v.gram[k:]); u != nil && u.nReleased > 0 {
			qs = t.transition(u, q)
		}
	}
	if qs <= 0 {
		return out
	}
	alpha := 5 * float64(m+1) * t.calib / v.eps
	for y := range out {
		out[y] = (out[y] + alpha*q[y]/qs) / (s + alpha) * s
	}
	return out
}

// systematicSplit divides k among the bins of w (sum s > 0) in proportion,
// each bin getting the floor or the ceiling of its share and the total
// exactly k, with one uniform draw u: bin i gets ⌊k·W_i/s + u⌋ −
// ⌊k·W_{i−1}/s + u⌋ for the cumulative sums W. out is filled.
func systematicSplit(k int64, w []float64, s, u float64, out []int64) {
	last := len(w) - 1
	for last > 0 && w[last] == 0 {
		last--
	}
	cum, prev := 0.0, int64(0)
	for i, x := range w {
		cum += x
		cur := int64(math.Floor(float64(k)*(cum/s) + u))
		if i >= last {
			cur = k
		}
		cur = min(max(cur, prev), k)
		out[i] = cur - prev
		prev = cur
	}
}

// synthesise draws the synthetic database of ReconstructPersons: about N
// sequences of at most lmax symbols, N the noisy number of sequences.
func (t *ngramTree) synthesise(lmax int, src noise.Source) [][]int {
	m := t.m
	rootW := make([]float64, m+1)
	total := t.startWeights(nil, rootW)
	n := int64(math.Round(total))
	if n <= 0 {
		return nil
	}
	sb := newSeqBuilder()
	path := make([]int, 0, lmax)
	// One weight and split buffer per depth: the walk is depth first.
	ws := make([][]float64, lmax+1)
	ks := make([][]int64, lmax+1)
	for d := range ws {
		ws[d] = make([]float64, m+1)
		ks[d] = make([]int64, m+1)
	}
	copy(ws[0], rootW)
	var walk func(k int64, s float64)
	walk = func(k int64, s float64) {
		d := len(path)
		w, split := ws[d], ks[d]
		systematicSplit(k, w, s, uniform01(src), split)
		if d > 0 && split[m] > 0 {
			sb.emit(path, split[m])
		}
		for y := range m {
			c := split[y]
			if c == 0 {
				continue
			}
			path = append(path, y)
			dd := d + 1
			switch {
			case dd >= lmax:
				sb.emit(path, c)
			default:
				s2 := 0.0
				if dd <= t.nmax-2 {
					s2 = t.startWeights(path, ws[dd])
				}
				if s2 == 0 {
					s2 = t.markovWeights(path, ws[dd])
				}
				if s2 > 0 {
					walk(c, s2)
				} else {
					sb.emit(path, c) // nothing known beyond: the sequences end
				}
			}
			path = path[:d]
		}
	}
	walk(n, total)
	return sb.seqs
}

// uniform01 returns a uniform draw from [0, 1) with 53 random bits.
func uniform01(src noise.Source) float64 {
	return float64(src.Uint64()>>11) * 0x1p-53
}

// seqBuilder collects sequences in shared slabs: a release of a million
// sequences takes two allocations per slab instead of one per sequence.
// Slabs grow geometrically up to maxSlab, so a small release (an audit's
// or a falsifier's thousands of tiny databases) does not clear a 512 KiB
// slab each time. Each sequence is its own capacity-limited slice, so
// appending to one never touches another.
type seqBuilder struct {
	slab []int
	seqs [][]int
}

// The first slab's and the largest slab's length, in symbols.
const minSlab, maxSlab = 64, 1 << 16

func newSeqBuilder() *seqBuilder { return &seqBuilder{} }

// emit appends k copies of s.
func (b *seqBuilder) emit(s []int, k int64) {
	for range k {
		if len(b.slab)+len(s) > cap(b.slab) {
			b.slab = make([]int, 0, max(min(2*cap(b.slab), maxSlab), minSlab, len(s)))
		}
		i := len(b.slab)
		b.slab = append(b.slab, s...)
		b.seqs = append(b.seqs, b.slab[i:i+len(s):i+len(s)])
	}
}
