package trajdb

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracepriv/tracepriv/noise"
)

// NGram is the variable-length n-gram mechanism of Chen, Ács and
// Castelluccia, "Differentially Private Sequential Data Publication via
// Variable-Length N-Grams" (ACM CCS 2012, hal-00747830), reference [83] of
// Guerra-Balboa's thesis (Sec. 3.4.1.1). The paper's text was readable
// through this project's search tool only in part, so the details below
// follow the authors' public implementation, n-gram_sanitizer (Ács,
// 2012-11-09), whose README gives the same inputs (n_max, epsilon, l_max as
// the sensitivity, & as symbol |X|+1) and outputs, as read in copies of its
// Sanitizer.ngram, NGramTree and Reconstruction found in public
// repositories. Two details those copies leave open are our choices, and
// are marked below: how a histogram with negative noisy counts is
// normalised, and the denominator of the unigram joins.
//
// # The exploration tree
//
// Every sequence is truncated to l_max = Contribution.MaxLen symbols and
// ended with the termination symbol & (bin index |X|). The tree's nodes are
// contexts g; the node of g holds the histogram of the n-grams g·x, x ∈ X ∪
// {&}, so the root (g empty, level 1) holds the unigrams and a node at level
// L the L-grams. The height is n_max = min(NMax, MaxLen) (NMax 0 means 5).
//
//   - Noise: each histogram is perturbed over all |X|+1 bins with discrete
//     Laplace noise of parameter λ_v = ε_v/Δ, zero counts included; the
//     root has |X| bins (the count of the empty sequence is 0 for every
//     database, so it needs no noise).
//   - Threshold: a bin is released when its noisy count exceeds θ_v =
//     Δ·ln((|X|+1)/2)/ε_v, which keeps the expected number of released
//     zero-count bins of a node near one (|X|+1 bins, each above θ with
//     probability about ½e^{-θ ε_v/Δ} = 1/(|X|+1)). A released bin g·x,
//     x ≠ &, becomes the node of context g·x. The root's bins are all
//     released (expanded only above θ); a node with one level left
//     releases all of its bins without a threshold and expands nothing.
//   - Adaptive budget (Markov): along every root-to-leaf path the budget
//     spent is at most ε. The root gets ε/n_max. A child created from bin
//     g·x of node v (noisy count ĉ) estimates how many levels it will need,
//     h = min(n_max − level(v), ⌈log_{p_max}(θ_v/ĉ)⌉), where p_max is the
//     largest transition probability of v's Markov neighbour (below): if
//     counts shrink by at most p_max per level they fall below the
//     threshold after that many levels. It gets ε_child = (ε − ε spent by
//     its ancestors)/h; a child whose h is 1 is a leaf and takes all that
//     remains.
//   - Markov neighbour: the node of the longest proper suffix of the
//     context that exists and has released bins (the root if none).
//   - Consistency (Markov): at a non-root node with released bins, the
//     unreleased bins are estimated with the Markov assumption, from the
//     neighbour's histogram scaled to the released mass (a neighbour at
//     level > 1), or, when the neighbour is the root (a poor predictor),
//     by sharing the parent count's unreleased remainder uniformly; the
//     histogram is then rescaled to sum to its count in the parent
//     histogram (negative noisy counts are clipped to 0 first: our
//     choice). This is post-processing of noisy counts.
//
// Only these Markov techniques are used. A variant circulating with copies
// of the public code picks, per bin, whichever of the noisy and the
// Markov-predicted count is closer to the TRUE count; that choice reads the
// data without noise and is not differentially private for any epsilon. It
// is not implemented.
//
// # Synthetic database
//
// Reconstruction selects how the noisy grams become sequences; all three
// are post-processing of the noisy counts and cost no budget.
//
// ReconstructPersons (the default; ours, not the paper's) keeps the
// number of people. The & bins already hold a DP estimate of it: after
// consistency, Σ_x c(x·&) = Σ_x c(x) − Σ_{x,y} c(x·y) = N, each sequence
// having one more unigram than bigrams. They also hold its start: the
// number of sequences that begin with h is c(h) − Σ_z c(z·h) (every
// occurrence of h not preceded by a symbol), for h of up to n_max − 1
// symbols, and of those that are exactly h, c(h·&) − Σ_z c(z·h·&), for h
// of up to n_max − 2. So the release is drawn as a prefix tree: N
// sequences at the root, split among first symbols by those start counts,
// at each depth below n_max − 1 among the next symbols and the end, then
// along the (n_max − 1)-order Markov chain of the tree's histograms (the
// node of the last n_max − 1 symbols, or of the longest suffix that has
// released bins), ending at l_max. A node's sequences are split among its
// children by systematic sampling: with shares w_i and a uniform u, child
// i gets ⌊k·W_i + u⌋ − ⌊k·W_{i−1} + u⌋ of the k, W the cumulative shares,
// so each child gets ⌊k·w_i⌋ or ⌈k·w_i⌉ (k·w_i in expectation) and the
// total is exactly k. Lengths up to n_max − 2 follow the noisy end counts,
// longer ones the chain.
//
// ReconstructAuthors is the authors' Reconstruction. The released
// n-grams (all bins of nodes with released bins, after consistency) are
// truncated to integers and those below 1 dropped. The longest ones are
// extended, level by level up to l_max, with the Markov estimate c(g·y) =
// ⌊c(g)·c(g[1:]·y)/c(g[1:])⌋ while it is at least 1 (an (n−1)-order Markov
// chain; for unigrams c(∅) is the total unigram count, our choice). Grams
// ending with & are then dropped, and the grams are turned into sequences
// greedily, longest first: a gram of count k is released k times when its
// proper sub-grams can pay for it, and their counts are reduced by k times
// their occurrences in it. So the release can contain sequences longer
// than n_max, up to l_max. Dropping the & grams loses where sequences
// end, and the sub-gram counts left over become sequences of their own:
// on MSNBC at ε = 1 it releases about 1.66 million sequences for 989,818
// people, most of them one symbol long (docs/trajdb.md).
//
// ReconstructJoined keeps both: the authors' pieces, which hold the noisy
// grams' occurrences, joined into N sequences, N the noisy number of
// people as for ReconstructPersons. P pieces for N people lack P − N
// bigrams (a sequence has one bigram fewer than unigrams), one per join;
// the joins x→y are planned in proportion to the bigrams x·y the pieces
// lack, and each joins, of a few chains ending with x and a few starting
// with y, the pair whose junction adds the most grams of 3 to n_max
// symbols that the noisy counts hold and the pieces lack; joins the plan
// cannot place (no chain left, or l_max exceeded) are made between any
// chains, chosen the same way. Unigram occurrences are those of the
// authors' release exactly; on MSNBC its paper_are against the bounded
// data is below the authors' at ε = 0.1, 0.5 and 1 with the persons'
// number of sequences (docs/trajdb.md).
//
// # Sensitivity and budget
//
// A person holds at most MaxSeqs sequences of at most MaxLen symbols.
// Following one start position j of a sequence through the levels, the
// grams s[j..j], s[j..j+1], …, and finally s[j..]·&, adds exactly one count
// to one bin per level, all on one root-to-leaf path of the tree. A
// sequence has at most MaxLen start positions, so the person changes each
// level by at most Δ = MaxSeqs·MaxLen in L1: the paper's sensitivity l_max,
// times MaxSeqs. The privacy loss is at most Σ_starts Σ_{v on its path}
// ε_v/Δ <= (number of starts)·(max path budget)/Δ <= max path budget <= ε,
// pointwise for every output, the budgets being functions of earlier noisy
// counts only. Budgets are computed so that their float sum along every
// path, rounded up at each step, stays at most ε (a budget is lowered by
// an ulp where rounding would carry it over), so the levels never add up
// to more than ε, not even by 5.6e-17. Synthetic.EpsilonSpent is ε, the
// guarantee; Synthetic.Levels reports the budget of each level along the
// path that spends the most, whose sum is Synthetic.WorstPathEpsilon (below
// ε when no path reaches a leaf: an ex-post figure, not a guarantee, and
// not what to compose with), and, in EpsilonMax, the largest node budget
// at each level.
//
// # Cost
//
// A node needs its |X|+1 bins: drawn one by one at leaves (all released),
// through the exact zero-count shortcut elsewhere (countNoise.exceedZeros).
// The dense histograms make a release O(nodes·|X|) in time and memory, the
// limit the thesis notes for exploration trees.
// The true counts are held in a trie (one array step per gram occurrence),
// so a release of MSNBC's 989,818 sequences counts in well under a second.
type NGram struct {
	// Contribution bounds what one person contributes; MaxLen is l_max.
	Contribution Bounds
	// NMax is the tree height, the longest gram counted; 0 means 5.
	// Values above MaxLen count as MaxLen.
	NMax int
	// Reconstruction turns the noisy grams into sequences; "" means
	// ReconstructPersons.
	Reconstruction Reconstruction

	hooks exploreHooks
}

// Reconstruction names how an n-gram release turns its noisy grams into
// sequences (post-processing; see NGram).
type Reconstruction string

const (
	// ReconstructPersons draws as many sequences as the noisy counts say
	// there are people, with their starts, lengths and transitions: the
	// default.
	ReconstructPersons Reconstruction = "persons"
	// ReconstructAuthors is the authors' Markov extension and greedy
	// decomposition of the released grams.
	ReconstructAuthors Reconstruction = "authors"
	// ReconstructJoined is the authors' decomposition, its pieces joined
	// into as many sequences as the noisy counts say there are people,
	// the joins adding the grams the pieces lack.
	ReconstructJoined Reconstruction = "joined"
)

// Reconstructions lists the reconstruction modes, the default first.
func Reconstructions() []Reconstruction {
	return []Reconstruction{ReconstructPersons, ReconstructJoined, ReconstructAuthors}
}

// ParseReconstruction returns the Reconstruction called s ("" for the
// default).
func ParseReconstruction(s string) (Reconstruction, error) {
	if s == "" {
		return ReconstructPersons, nil
	}
	if r := Reconstruction(s); slices.Contains(Reconstructions(), r) {
		return r, nil
	}
	names := make([]string, 0, 3)
	for _, r := range Reconstructions() {
		names = append(names, string(r))
	}
	return "", fmt.Errorf("trajdb: unknown reconstruction %q (want one of %s)", s, strings.Join(names, ", "))
}

// Name returns MechanismNGram.
func (g *NGram) Name() MechanismName { return MechanismNGram }

// Bounds returns g.Contribution.
func (g *NGram) Bounds() Bounds { return g.Contribution }

// Height returns the tree's height n_max: NMax (5 if 0) capped at
// Contribution.MaxLen.
func (g *NGram) Height() int { return g.height() }

// CanOutput reports whether seq is a non-empty sequence over db's alphabet
// of at most MaxLen symbols. Whatever db holds, every such sequence has
// positive probability under every reconstruction: every bin of every
// node can be released with a positive noisy count, and a positive count
// reaches every child of a drawn prefix tree (systematic sampling) or is
// extended by the Markov chain up to l_max = MaxLen (the joined pieces
// are the authors', and the joins never pass l_max). Longer sequences are
// never released.
func (g *NGram) CanOutput(db *DB, seq []int) bool {
	return exploreCanOutput(db, seq, g.Contribution.MaxLen)
}

// ngramNode is a node of the exploration tree: the histogram of the grams
// gram·x, x in the alphabet and & (bin |X|).
type ngramNode struct {
	gram      []int
	level     int   // len(gram)+1
	trie      int32 // the gram's node in the count trie, -1 if it never occurs
	parent    *ngramNode
	parentBin int
	leftLevel int
	eps       float64 // this node's budget
	spent     float64 // budget spent on the path root..this node (rounded up)
	theta     float64
	hist      []float64
	raw       []float64 // noisy counts before consistency
	released  []bool
	nReleased int
	kids      []*ngramNode // children by symbol, nil if none
	// trans caches ReconstructPersons' transition weights.
	trans []float64
	// def holds, for ReconstructJoined, how many occurrences of each gram
	// gram·y the noisy counts hold and the joined pieces do not.
	def []float64
	// hooksExact marks a node of a tree drawn without noise (tests).
	hooksExact bool
}

// ngramTree is a built exploration tree.
type ngramTree struct {
	nmax    int
	m       int // alphabet size; bin m is &
	epsilon float64
	delta   float64 // sensitivity (reported)
	calib   float64 // sensitivity the noise is calibrated to
	logc    float64 // ln((m+1)/2)
	counts  *countTrie
	root    *ngramNode
	nodes   []*ngramNode // creation (level) order
	drawn   []int        // noisy counts per level
	cn      *countNoise
}

// Synthesize builds the exploration tree of db (bounded by g.Contribution)
// spending at most epsilon, and returns the synthetic database
// reconstructed from its n-grams. src nil means crypto/rand.
func (g *NGram) Synthesize(db *DB, epsilon float64, src noise.Source) (*Synthetic, error) {
	if err := checkExploreInput(g.Name(), db, g.Contribution, epsilon); err != nil {
		return nil, err
	}
	tl := g.newTally(db.Size)
	for _, u := range db.Users {
		for _, s := range u.Seqs {
			tl.add(s)
		}
	}
	return tl.release(epsilon, src)
}

// ngramTally counts the grams of bounded sequences one at a time.
type ngramTally struct {
	g *NGram
	t *countTrie
	n int
}

func (g *NGram) newTally(size int) tally {
	return &ngramTally{g: g, t: newCountTrie(size), n: g.height()}
}

func (tl *ngramTally) add(s []int) {
	tl.t.addGrams(s[:min(len(s), tl.g.Contribution.MaxLen)], tl.n)
}

func (tl *ngramTally) release(epsilon float64, src noise.Source) (*Synthetic, error) {
	t, err := tl.g.buildTrie(tl.t, epsilon, src)
	if err != nil {
		return nil, err
	}
	return tl.g.finish(t, src)
}

// finish reconstructs the synthetic database from t's n-grams.
func (g *NGram) finish(t *ngramTree, src noise.Source) (*Synthetic, error) {
	rec, err := ParseReconstruction(string(g.Reconstruction))
	if err != nil {
		return nil, err
	}
	out := &Synthetic{
		Mechanism:      g.Name(),
		Nodes:          int(t.cn.drawn),
		Source:         describeSource(src),
		EpsilonSpent:   t.epsilon,
		Reconstruction: rec,
	}
	out.Levels = t.levels()
	for _, l := range out.Levels {
		out.WorstPathEpsilon += l.Epsilon
	}
	if src == nil {
		src = noise.Secure()
	}
	out.Seqs = t.reconstruct(rec, g.Contribution.MaxLen, src)
	return out, nil
}

// reconstruct turns t's noisy grams into sequences of at most lmax
// symbols as rec says. It reads the tree's noisy counts, never t.counts
// (the true ones): post-processing.
func (t *ngramTree) reconstruct(rec Reconstruction, lmax int, src noise.Source) [][]int {
	switch rec {
	case ReconstructAuthors:
		return ngramReconstruct(t.grams(), t.m, lmax)
	case ReconstructJoined:
		return t.joined(lmax, src)
	default:
		return t.synthesise(lmax, src)
	}
}

// SynthesizeCounts is Release from the gram counts of a bounded database
// (Counts, summed over persons).
func (g *NGram) SynthesizeCounts(c *TreeCounts, epsilon float64, src noise.Source) (*Synthetic, error) {
	if err := c.check(g.Name(), g.height()); err != nil {
		return nil, err
	}
	top, err := trieOfCounts(g.Name(), c)
	if err != nil {
		return nil, err
	}
	t, err := g.buildTrie(top, epsilon, src)
	if err != nil {
		return nil, err
	}
	return g.finish(t, src)
}

// build draws the tree of db and makes it consistent.
func (g *NGram) build(db *DB, epsilon float64, src noise.Source) (*ngramTree, error) {
	if err := checkExploreInput(g.Name(), db, g.Contribution, epsilon); err != nil {
		return nil, err
	}
	tl := g.newTally(db.Size).(*ngramTally)
	for _, s := range db.Sequences() {
		tl.add(s)
	}
	return g.buildTrie(tl.t, epsilon, src)
}

// buildTrie draws the tree from the true gram counts in top and makes it
// consistent.
func (g *NGram) buildTrie(top *countTrie, epsilon float64, src noise.Source) (*ngramTree, error) {
	if err := g.Contribution.CheckEpsilon(epsilon); err != nil {
		return nil, fmt.Errorf("trajdb: %s: %w", g.Name(), err)
	}
	if g.NMax < 0 {
		return nil, fmt.Errorf("trajdb: %s: NMax must be >= 0, got %d", g.Name(), g.NMax)
	}
	if _, err := ParseReconstruction(string(g.Reconstruction)); err != nil {
		return nil, fmt.Errorf("trajdb: %s: %w", g.Name(), err)
	}
	if top.size < 1 || top.size >= math.MaxInt32 {
		return nil, fmt.Errorf("trajdb: %s: counts need an alphabet of 1 to 2^31-2 symbols", g.Name())
	}
	n := g.height()
	if src == nil {
		src = noise.Secure()
	}
	m := top.size
	t := &ngramTree{
		nmax:    n,
		m:       m,
		epsilon: epsilon,
		delta:   float64(g.Contribution.MaxSeqs) * float64(g.Contribution.MaxLen),
		logc:    math.Log(float64(m+1) / 2),
		counts:  top,
		drawn:   make([]int, n),
		cn:      &countNoise{src: src, hooks: g.hooks},
	}
	t.calib = t.delta
	if f := g.hooks.sensFactor; f > 0 {
		t.calib *= f
	}

	t.root = &ngramNode{level: 1, trie: 0, leftLevel: n}
	t.root.eps, t.root.spent = pathBudget(0, epsilon, n)
	t.draw(t.root)
	t.nodes = append(t.nodes, t.root)

	for qi := 0; qi < len(t.nodes); qi++ {
		v := t.nodes[qi]
		mk := t.markovNeighbour(v)
		if v.leftLevel > 1 {
			pmax := maxShare(mk.hist)
			for x := range m { // & is never expanded
				if !v.released[x] || !(v.hist[x] > v.theta) {
					continue
				}
				left := n - v.level
				if pmax > 0 && pmax < 1 && v.theta > 0 {
					if est := math.Ceil(math.Log(v.theta/v.hist[x]) / math.Log(pmax)); est < float64(left) {
						left = max(int(est), 1)
					}
				}
				c := &ngramNode{
					gram:      append(slices.Clone(v.gram), x),
					level:     v.level + 1,
					parent:    v,
					parentBin: x,
					leftLevel: left,
					trie:      -1,
				}
				if v.trie >= 0 {
					c.trie = top.child(v.trie, x)
				}
				c.eps, c.spent = pathBudget(v.spent, epsilon, left)
				t.draw(c)
				if v.kids == nil {
					v.kids = make([]*ngramNode, m)
				}
				v.kids[x] = c
				t.nodes = append(t.nodes, c)
			}
		}
		if v != t.root && v.nReleased > 0 {
			t.approximate(v, mk)
		}
	}
	return t, nil
}

// pathBudget returns the budget of a node whose ancestors spent spent (an
// upper bound on their exact sum) with left levels to go, (ε − spent)/left,
// and the new path sum rounded up. The budget is lowered by an ulp at a
// time until that sum is at most ε, so that float rounding can never take
// a path over ε.
func pathBudget(spent, epsilon float64, left int) (eps, total float64) {
	eps = (epsilon - spent) / float64(left)
	for eps > 0 {
		if total = addUp(spent, eps); total <= epsilon {
			return eps, total
		}
		eps = math.Nextafter(eps, 0)
	}
	return 0, spent
}

// addUp returns the smallest float64 at least a + b (exact sum), from the
// rounding error of the float sum (Knuth's TwoSum).
func addUp(a, b float64) float64 {
	s := a + b
	bb := s - a
	if err := (a - (s - bb)) + (b - bb); err > 0 {
		return math.Nextafter(s, math.Inf(1))
	}
	return s
}

// uniformBudget returns the largest per-level budget e <= epsilon/h whose
// h-fold sum, rounded up at every step, is at most epsilon.
func uniformBudget(epsilon float64, h int) float64 {
	e := epsilon / float64(h)
	for e > 0 {
		s := 0.0
		for range h {
			s = addUp(s, e)
		}
		if s <= epsilon {
			return e
		}
		e = math.Nextafter(e, 0)
	}
	return 0
}

// node returns the tree node of context gram, or nil.
func (t *ngramTree) node(gram []int) *ngramNode {
	v := t.root
	for _, x := range gram {
		if v.kids == nil || v.kids[x] == nil {
			return nil
		}
		v = v.kids[x]
	}
	return v
}

// draw perturbs v's histogram and decides which bins are released.
func (t *ngramTree) draw(v *ngramNode) {
	m := t.m
	v.theta = t.calib * t.logc / v.eps
	if t.cn.hooks.exact {
		v.theta = 0
	}
	lambda := v.eps / t.calib
	t.cn.budget = v.eps
	v.hist = make([]float64, m+1)
	v.released = make([]bool, m+1)
	before := t.cn.drawn
	tc := t.counts
	count := func(x int) int64 {
		if v.trie < 0 {
			return 0
		}
		if x == m {
			return tc.end[v.trie]
		}
		if w := tc.child(v.trie, x); w >= 0 {
			return tc.count[w]
		}
		return 0
	}
	release := func(x int, y int64) {
		v.hist[x] = float64(y)
		v.released[x] = true
		v.nReleased++
	}
	switch {
	case v == t.root || v.leftLevel <= 1:
		// Every bin is released, so every value is drawn.
		bins := m + 1
		if v == t.root {
			bins = m
		}
		for x := range bins {
			c := count(x)
			if c == 0 && t.cn.hooks.presentOnly {
				release(x, 0)
				continue
			}
			release(x, t.cn.noisy(c, lambda))
		}
		if v == t.root {
			release(m, 0) // the empty sequence: 0 for every database
		}
	default:
		var present []int
		if v.trie >= 0 {
			for _, w := range tc.children(v.trie) {
				present = append(present, int(tc.sym[w]))
			}
			if tc.end[v.trie] > 0 {
				present = append(present, m)
			}
		}
		for _, x := range present {
			if y := t.cn.noisy(count(x), lambda); float64(y) > v.theta {
				release(x, y)
			}
		}
		k := 0
		t.cn.exceedZeros(m+1-len(present), lambda, v.theta, func(j int, y int64) {
			x := j + k
			for k < len(present) && present[k] <= x {
				k++
				x = j + k
			}
			release(x, y)
		})
	}
	t.drawn[v.level-1] += int(t.cn.drawn - before)
	v.hooksExact = t.cn.hooks.exact
	// The noisy counts before consistency, for ReconstructPersons (and
	// the tests): |X|+1 numbers a node.
	v.raw = slices.Clone(v.hist)
}

// markovNeighbour returns the released Markov neighbour of v: the node of
// the longest proper suffix of v's context that exists and has released
// bins, else the root (the root is its own neighbour).
func (t *ngramTree) markovNeighbour(v *ngramNode) *ngramNode {
	for k := 1; k < len(v.gram); k++ {
		if w := t.node(v.gram[k:]); w != nil && w.nReleased > 0 {
			return w
		}
	}
	return t.root
}

// approximate fills v's unreleased bins from its Markov neighbour mk and
// rescales the histogram to v's count in its parent.
func (t *ngramTree) approximate(v, mk *ngramNode) {
	pc := v.parent.hist[v.parentBin]
	relSum, relMarkov := 0.0, 0.0
	for x, r := range v.released {
		if r {
			relSum += v.hist[x]
			relMarkov += mk.hist[x]
		}
	}
	unrel := len(v.hist) - v.nReleased
	for x, r := range v.released {
		if r {
			continue
		}
		switch {
		case mk != t.root:
			if relMarkov == 0 {
				v.hist[x] = 0
			} else {
				v.hist[x] = relSum * mk.hist[x] / relMarkov
			}
		case relSum <= pc:
			v.hist[x] = (pc - relSum) / float64(unrel)
		default:
			v.hist[x] = 0
		}
	}
	s := 0.0
	for x, h := range v.hist {
		h = math.Max(h, 0)
		v.hist[x] = h
		s += h
	}
	for x := range v.hist {
		if s > 0 && pc > 0 {
			v.hist[x] = v.hist[x] / s * pc
		} else {
			v.hist[x] = 0
		}
	}
}

// maxShare returns the largest share of the histogram's positive mass
// (the largest transition probability), or 0 if it has none.
func maxShare(h []float64) float64 {
	s, top := 0.0, 0.0
	for _, v := range h {
		if v > 0 {
			s += v
			top = math.Max(top, v)
		}
	}
	if s == 0 {
		return 0
	}
	return top / s
}

// grams returns the released n-grams with their counts truncated to
// integers, those below 1 left out (the authors' reconstruction drops
// them).
func (t *ngramTree) grams() map[string]int64 {
	out := make(map[string]int64)
	g := make([]int, 0, t.nmax)
	for _, v := range t.nodes {
		if v.nReleased == 0 {
			continue
		}
		g = append(g[:0], v.gram...)
		g = append(g, 0)
		for x, h := range v.hist {
			if c := math.Trunc(h); c >= 1 {
				g[len(g)-1] = x
				out[Key(g)] = int64(math.Min(c, math.MaxInt64/4))
			}
		}
	}
	return out
}

// levels reports the budget along the path that spends the most.
func (t *ngramTree) levels() []Level {
	worst := t.root
	maxEps := make([]float64, t.nmax)
	for _, v := range t.nodes {
		if v.spent > worst.spent {
			worst = v
		}
		maxEps[v.level-1] = math.Max(maxEps[v.level-1], v.eps)
	}
	path := make([]*ngramNode, t.nmax)
	for v := worst; v != nil; v = v.parent {
		path[v.level-1] = v
	}
	out := make([]Level, t.nmax)
	for l := range out {
		out[l] = Level{Depth: l + 1, Nodes: t.drawn[l], EpsilonMax: maxEps[l]}
		if maxEps[l] > 0 {
			out[l].ScaleMin = t.delta / maxEps[l]
		}
		if v := path[l]; v != nil {
			out[l].Epsilon = v.eps
			out[l].Scale = t.delta / v.eps
			out[l].Threshold = v.theta
		}
	}
	return out
}
