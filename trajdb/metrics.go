package trajdb

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

// QueryKind selects the count queries of the query_are metric.
type QueryKind string

const (
	// PatternQueries count the sequences that contain a pattern as a
	// contiguous subsequence; patterns have a length uniform in
	// [1, MaxQueryLen] and symbols uniform over the alphabet (the papers'
	// random queries).
	PatternQueries QueryKind = "pattern"
	// RangeQueries count the sequences that visit a rectangle of grid
	// cells, with sides uniform in [1, ⌈RangeFrac·side⌉] cells and a
	// uniform position (AdaTrace's spatial queries). They need a *Grid.
	RangeQueries QueryKind = "range"
)

// Defaults of MetricOptions.
const (
	DefaultQueries       = 1000
	DefaultMaxQueryLen   = 6
	DefaultRangeFrac     = 0.25
	DefaultSanity        = 0.001
	DefaultTopK          = 100
	DefaultMaxPatternLen = 8
	DefaultDiameterBins  = 20
)

// MetricOptions configures Evaluate. The zero value (with Size or
// Universe set) uses the defaults.
type MetricOptions struct {
	// Universe gives the cells' geometry (diameters, range queries); nil
	// for symbolic databases, whose alphabet size is then Size.
	Universe Universe
	// Size is the alphabet size; zero means Universe.Size().
	Size int
	// Queries is the number of count queries (DefaultQueries).
	Queries int
	// QueryKind defaults to RangeQueries over a *Grid and PatternQueries
	// otherwise.
	QueryKind QueryKind
	// MaxQueryLen bounds pattern queries' length (DefaultMaxQueryLen).
	MaxQueryLen int
	// RangeFrac bounds range queries' sides as a fraction of the grid's
	// (DefaultRangeFrac).
	RangeFrac float64
	// QuerySeed seeds the query generator: the same seed gives every
	// release evaluated against the same real data the same queries.
	QuerySeed uint64
	// Sanity is the sanity bound as a fraction of the real database's
	// number of sequences (DefaultSanity, the papers' 0.1 %); the bound is
	// never below one sequence.
	Sanity float64
	// TopK is the number of frequent patterns compared (DefaultTopK).
	TopK int
	// MaxPatternLen bounds the length of frequent patterns
	// (DefaultMaxPatternLen); they are at least 2 symbols long.
	MaxPatternLen int
	// DiameterBins is the number of equal-width bins of the diameter
	// distribution over [0, D] (see DiameterJSD). Zero means one bin per
	// cell width over a *Grid (bins of CellM metres), and
	// DefaultDiameterBins over other universes.
	DiameterBins int
	// TripBlock coarsens trips: start and end cells of a *Grid are taken
	// in blocks of TripBlock×TripBlock cells (default 1, the cells).
	TripBlock int
}

func (o MetricOptions) withDefaults() (MetricOptions, error) {
	if o.Size == 0 && o.Universe != nil {
		o.Size = o.Universe.Size()
	}
	if o.Size < 1 {
		return o, errors.New("trajdb: metrics need an alphabet size or a universe")
	}
	if o.Universe != nil && o.Universe.Size() != o.Size {
		return o, fmt.Errorf("trajdb: metrics: alphabet of %d symbols but a universe of %d cells", o.Size, o.Universe.Size())
	}
	def := func(v *int, d int, name string) error {
		if *v < 0 {
			return fmt.Errorf("trajdb: metrics: %s %d: want a positive number (0 for the default %d)", name, *v, d)
		}
		if *v == 0 {
			*v = d
		}
		return nil
	}
	for _, e := range []error{
		def(&o.Queries, DefaultQueries, "Queries"),
		def(&o.MaxQueryLen, DefaultMaxQueryLen, "MaxQueryLen"),
		def(&o.TopK, DefaultTopK, "TopK"),
		def(&o.MaxPatternLen, DefaultMaxPatternLen, "MaxPatternLen"),
		def(&o.DiameterBins, 0, "DiameterBins"),
		def(&o.TripBlock, 1, "TripBlock"),
	} {
		if e != nil {
			return o, e
		}
	}
	if o.MaxPatternLen < 2 {
		return o, fmt.Errorf("trajdb: metrics: MaxPatternLen %d: patterns have at least 2 symbols", o.MaxPatternLen)
	}
	if o.Sanity == 0 {
		o.Sanity = DefaultSanity
	}
	if o.RangeFrac == 0 {
		o.RangeFrac = DefaultRangeFrac
	}
	if !(o.Sanity > 0) || !(o.RangeFrac > 0 && o.RangeFrac <= 1) {
		return o, fmt.Errorf("trajdb: metrics: want Sanity > 0 and RangeFrac in (0, 1], got %v and %v", o.Sanity, o.RangeFrac)
	}
	_, grid := o.Universe.(*Grid)
	switch o.QueryKind {
	case "":
		o.QueryKind = PatternQueries
		if grid {
			o.QueryKind = RangeQueries
		}
	case PatternQueries:
	case RangeQueries:
		if !grid {
			return o, errors.New("trajdb: metrics: range queries need a grid universe")
		}
	default:
		return o, fmt.Errorf("trajdb: metrics: unknown query kind %q (want %q or %q)", o.QueryKind, PatternQueries, RangeQueries)
	}
	return o, nil
}

// Metrics measure a released (synthetic) database against the real one it
// was released from, by the measures of the trajectory-synthesis
// literature, so that results can be set beside published tables:
//
//   - query_are: average relative error of random count queries with a
//     sanity bound (Chen, Fung and Desai, KDD 2012; Chen, Ács and
//     Castelluccia, CCS 2012; AdaTrace, Gursoy et al., CCS 2018, asks
//     spatial range queries the same way): see QueryARE and NewQueries;
//   - trip_jsd, length_jsd, diameter_jsd: Jensen–Shannon divergence of
//     the distributions of trips (start and end cell), lengths and
//     diameters (AdaTrace; LDPTrace, Du et al., PVLDB 2023): see TripJSD,
//     LengthJSD, DiameterJSD;
//   - pattern_f1: F1 of the top-k frequent patterns, contiguous
//     subsequences of 2 to MaxPatternLen symbols (AdaTrace's FP F1; the
//     two papers' frequent sequential patterns): see TopPatterns;
//   - kendall_tau: Kendall's tau-b between the locations' popularity
//     (visits) in the two databases (AdaTrace): see PopularityTau.
//
// Every divergence is in bits (base-2 logarithms), so a JSD lies in [0, 1]:
// 0 for identical distributions, 1 for disjoint supports.
//
// The metrics see the real data: they are for evaluation, not release.
//
// Beyond the six metrics, the fields record the settings used. Lower is
// better for query_are and the JSDs, higher for pattern_f1 and
// kendall_tau.
type Metrics struct {
	QueryARE  float64 `json:"query_are"`
	TripJSD   float64 `json:"trip_jsd"`
	LengthJSD float64 `json:"length_jsd"`
	// DiameterJSD is nil without a universe (symbols have no geometry).
	DiameterJSD *float64 `json:"diameter_jsd"`
	PatternF1   float64  `json:"pattern_f1"`
	KendallTau  float64  `json:"kendall_tau"`

	Real        int       `json:"real_sequences"`
	Released    int       `json:"released_sequences"`
	QueryKind   QueryKind `json:"query_kind"`
	Queries     int       `json:"queries"`
	QuerySeed   uint64    `json:"query_seed"`
	SanityBound float64   `json:"sanity_bound"`
	TopK        int       `json:"top_k"`
	PatternLen  [2]int    `json:"pattern_len"`
}

// Score is one utility metric of a Metrics under its JSON name.
type Score struct {
	Name  string
	Value float64
	// HigherBetter is true for pattern_f1 and kendall_tau; lower is
	// better for query_are and the JSDs.
	HigherBetter bool
}

// Scores lists the utility metrics of m in the order of its fields,
// diameter_jsd only when m has it. It is the one list of metrics that
// comparisons, tables and figures go through.
func (m *Metrics) Scores() []Score {
	s := []Score{{"query_are", m.QueryARE, false}, {"trip_jsd", m.TripJSD, false}, {"length_jsd", m.LengthJSD, false}}
	if m.DiameterJSD != nil {
		s = append(s, Score{"diameter_jsd", *m.DiameterJSD, false})
	}
	return append(s, Score{"pattern_f1", m.PatternF1, true}, Score{"kendall_tau", m.KendallTau, true})
}

// NotBetter returns the JSON names of the metrics on which m is not
// strictly better than o (of those both have): empty when m beats o on
// every metric.
func (m *Metrics) NotBetter(o *Metrics) []string {
	theirs := map[string]float64{}
	for _, s := range o.Scores() {
		theirs[s.Name] = s.Value
	}
	var out []string
	for _, s := range m.Scores() {
		b, ok := theirs[s.Name]
		if !ok {
			continue
		}
		a := s.Value
		if s.HigherBetter {
			a, b = -a, -b
		}
		if !(a < b) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Evaluate measures released against real with every metric.
func Evaluate(real, released [][]int, opt MetricOptions) (*Metrics, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	for name, db := range map[string][][]int{"real": real, "released": released} {
		if err := metricCheckSeqs(db, opt.Size); err != nil {
			return nil, fmt.Errorf("trajdb: metrics: %s database: %w", name, err)
		}
	}
	qs, err := NewQueries(opt)
	if err != nil {
		return nil, err
	}
	s := SanityBound(len(real), opt.Sanity)
	m := &Metrics{
		QueryARE:    QueryARE(real, released, qs, s),
		TripJSD:     TripJSD(real, released, tripBlockKey(opt)),
		LengthJSD:   LengthJSD(real, released),
		PatternF1:   PatternF1(real, released, opt.TopK, opt.MaxPatternLen),
		KendallTau:  PopularityTau(real, released, opt.Size),
		Real:        len(real),
		Released:    len(released),
		QueryKind:   opt.QueryKind,
		Queries:     len(qs),
		QuerySeed:   opt.QuerySeed,
		SanityBound: s,
		TopK:        opt.TopK,
		PatternLen:  [2]int{2, opt.MaxPatternLen},
	}
	if opt.Universe != nil {
		d := DiameterJSD(opt.Universe, real, released, opt.DiameterBins)
		m.DiameterJSD = &d
	}
	return m, nil
}

func metricCheckSeqs(seqs [][]int, size int) error {
	for i, s := range seqs {
		if len(s) == 0 {
			return fmt.Errorf("sequence %d is empty", i+1)
		}
		for _, x := range s {
			if x < 0 || x >= size {
				return fmt.Errorf("sequence %d: symbol %d outside the alphabet [0, %d)", i+1, x, size)
			}
		}
	}
	return nil
}

// JSD returns the Jensen–Shannon divergence in bits between the
// distributions proportional to the non-negative weights p and q:
// JSD = ½KL(P‖M) + ½KL(Q‖M), M = ½(P+Q), in [0, 1]. By convention it is 0
// when both are empty and 1 when only one is (nothing released is as far
// from the data as can be).
func JSD[K comparable](p, q map[K]float64) float64 {
	// The mass pairs, sorted so that every sum runs in one order whatever
	// the maps' iteration order: seeded evaluations are reproducible to
	// the bit.
	pairs := make([][2]float64, 0, len(p)+len(q))
	for k, v := range p {
		pairs = append(pairs, [2]float64{v, q[k]})
	}
	for k, v := range q {
		if _, ok := p[k]; !ok {
			pairs = append(pairs, [2]float64{0, v})
		}
	}
	slices.SortFunc(pairs, func(a, b [2]float64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	var sp, sq float64
	for _, pr := range pairs {
		sp += pr[0]
		sq += pr[1]
	}
	switch {
	case sp == 0 && sq == 0:
		return 0
	case sp == 0 || sq == 0:
		return 1
	}
	pv, qv := make([]float64, len(pairs)), make([]float64, len(pairs))
	for i, pr := range pairs {
		pv[i], qv[i] = pr[0]/sp, pr[1]/sq
	}
	// gonum's JSD is in nats; clamp the rounding outside [0, 1].
	return min(max(stat.JensenShannon(pv, qv)/math.Ln2, 0), 1)
}

func metricHistogram[K comparable](seqs [][]int, key func(s []int) K) map[K]float64 {
	h := make(map[K]float64)
	for _, s := range seqs {
		h[key(s)]++
	}
	return h
}

// TripJSD is the JSD of the trip distributions: the share of sequences
// per (start, end) pair, with start and end mapped through cell (nil: the
// symbols themselves).
func TripJSD(real, released [][]int, cell func(int) int) float64 {
	if cell == nil {
		cell = func(c int) int { return c }
	}
	key := func(s []int) [2]int { return [2]int{cell(s[0]), cell(s[len(s)-1])} }
	return JSD(metricHistogram(real, key), metricHistogram(released, key))
}

// tripBlockKey maps cells to TripBlock×TripBlock blocks of a grid.
func tripBlockKey(o MetricOptions) func(int) int {
	g, ok := o.Universe.(*Grid)
	if !ok || o.TripBlock <= 1 {
		return nil
	}
	b := o.TripBlock
	bcols := (g.Cols + b - 1) / b
	return func(c int) int {
		r, col := g.RowCol(c)
		return (r/b)*bcols + col/b
	}
}

// LengthJSD is the JSD of the distributions of sequence lengths (number of
// symbols, exact).
func LengthJSD(real, released [][]int) float64 {
	key := func(s []int) int { return len(s) }
	return JSD(metricHistogram(real, key), metricHistogram(released, key))
}

// Diameter returns the largest distance in metres between two cells of s
// (0 for a single cell): a *Grid's plane distance between centres, or the
// haversine distance between other universes' centres.
func Diameter(u Universe, s []int) float64 {
	cells := slices.Clone(s)
	slices.Sort(cells)
	cells = slices.Compact(cells)
	dist := cellDistance(u)
	d := 0.0
	for i, a := range cells {
		for _, b := range cells[i+1:] {
			d = max(d, dist(a, b))
		}
	}
	return d
}

func cellDistance(u Universe) func(a, b int) float64 {
	if d, ok := u.(interface{ Distance(a, b int) float64 }); ok {
		return d.Distance
	}
	return func(a, b int) float64 { return geo.Haversine(u.Centre(a), u.Centre(b)) }
}

// DiameterJSD is the JSD of the diameter distributions, binned into bins
// equal-width bins over [0, D]: D is a *Grid's diagonal (between the
// centres of opposite corner cells: public, the same for every database),
// or for other universes the largest diameter in either database. A
// diameter of exactly D falls in the last bin. bins < 1 means one bin per
// cell width, ⌈D/CellM⌉, over a *Grid (a city's trajectories span a few
// kilometres: twenty bins over a 50 km diagonal would put them all in the
// first two) and DefaultDiameterBins otherwise.
func DiameterJSD(u Universe, real, released [][]int, bins int) float64 {
	dr, dq := allDiameters(u, real), allDiameters(u, released)
	var top float64
	if g, ok := u.(*Grid); ok {
		top = g.CellM * math.Hypot(float64(g.Rows-1), float64(g.Cols-1))
		if bins < 1 {
			bins = max(1, int(math.Ceil(top/g.CellM)))
		}
	} else {
		for _, d := range append(slices.Clone(dr), dq...) {
			top = max(top, d)
		}
	}
	if bins < 1 {
		bins = DefaultDiameterBins
	}
	bin := func(d float64) int {
		if top == 0 {
			return 0
		}
		return min(int(d/top*float64(bins)), bins-1)
	}
	hist := func(ds []float64) map[int]float64 {
		h := map[int]float64{}
		for _, d := range ds {
			h[bin(d)]++
		}
		return h
	}
	return JSD(hist(dr), hist(dq))
}

func allDiameters(u Universe, seqs [][]int) []float64 {
	out := make([]float64, len(seqs))
	for i, s := range seqs {
		out[i] = Diameter(u, s)
	}
	return out
}

// SanityBound returns the sanity bound of query_are for a real database of
// n sequences: frac·n (the papers take frac = 0.1 %), and never below one
// sequence (a bound below one count would turn a single spurious
// trajectory into an error above 100 %; it changes nothing on databases of
// 1/frac sequences or more, the papers' regime).
func SanityBound(n int, frac float64) float64 { return max(frac*float64(n), 1) }

// Query is a count query: it matches the sequences it counts.
type Query interface {
	Match(s []int) bool
}

// PatternQuery counts the sequences containing it as a contiguous
// subsequence.
type PatternQuery []int

// Match reports whether s contains q contiguously.
func (q PatternQuery) Match(s []int) bool {
	for i := 0; i+len(q) <= len(s); i++ {
		if slices.Equal(s[i:i+len(q)], q) {
			return true
		}
	}
	return false
}

// RangeQuery counts the sequences visiting a rectangle of a grid's cells:
// rows Row0..Row1 and columns Col0..Col1, inclusive.
type RangeQuery struct {
	Grid                   *Grid
	Row0, Col0, Row1, Col1 int
}

// Match reports whether s visits the rectangle.
func (q RangeQuery) Match(s []int) bool {
	for _, c := range s {
		r, col := q.Grid.RowCol(c)
		if r >= q.Row0 && r <= q.Row1 && col >= q.Col0 && col <= q.Col1 {
			return true
		}
	}
	return false
}

// NewQueries draws the count queries of opt (kind, number, sizes) from a
// seeded stream: they depend on the seed and the universe only, never on
// a database.
func NewQueries(opt MetricOptions) ([]Query, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	src := noise.Seeded(opt.QuerySeed)
	uni := func(lo, hi int) int { return lo + int(noise.Int64N(src, int64(hi-lo+1))) } // in [lo, hi]
	qs := make([]Query, opt.Queries)
	for i := range qs {
		if opt.QueryKind == RangeQueries {
			g := opt.Universe.(*Grid)
			h := uni(1, max(1, int(math.Ceil(opt.RangeFrac*float64(g.Rows)))))
			w := uni(1, max(1, int(math.Ceil(opt.RangeFrac*float64(g.Cols)))))
			r0, c0 := uni(0, g.Rows-h), uni(0, g.Cols-w)
			qs[i] = RangeQuery{Grid: g, Row0: r0, Col0: c0, Row1: r0 + h - 1, Col1: c0 + w - 1}
			continue
		}
		p := make(PatternQuery, uni(1, opt.MaxQueryLen))
		for j := range p {
			p[j] = uni(0, opt.Size-1)
		}
		qs[i] = p
	}
	return qs, nil
}

// QueryCount returns the number of sequences q matches.
func QueryCount(q Query, seqs [][]int) int {
	n := 0
	for _, s := range seqs {
		if q.Match(s) {
			n++
		}
	}
	return n
}

// QueryARE returns the average relative error of the queries:
//
//	mean over Q of |Q(real) − Q(released)| / max(Q(real), s)
//
// with s the sanity bound (SanityBound). Counts are raw, not rescaled to
// the real database's size (the exploration-tree releases approximate it;
// UniformBaseline matches it).
// Pattern queries are answered with one pass per database through a trie
// of the patterns.
func QueryARE(real, released [][]int, qs []Query, s float64) float64 {
	if len(qs) == 0 {
		return 0
	}
	cr, cq := queryCountAll(qs, real), queryCountAll(qs, released)
	sum := 0.0
	for i := range qs {
		sum += math.Abs(float64(cr[i]-cq[i])) / max(float64(cr[i]), s)
	}
	return sum / float64(len(qs))
}

func queryCountAll(qs []Query, seqs [][]int) []int {
	counts := make([]int, len(qs))
	var pats []PatternQuery
	var idx []int
	for i, q := range qs {
		if p, ok := q.(PatternQuery); ok && len(p) > 0 {
			pats, idx = append(pats, p), append(idx, i)
			continue
		}
		counts[i] = QueryCount(q, seqs)
	}
	if len(pats) == 0 {
		return counts
	}
	t := newPatternTrie()
	ends := map[int32][]int{} // patternTrie node -> queries ending there
	for j, p := range pats {
		n := t.insert(p)
		ends[n] = append(ends[n], idx[j])
	}
	seen := make([]int32, len(t.parent)) // last sequence (1-based) that matched a node
	for si, s := range seqs {
		for i := range s {
			t.walk(s[i:], len(s), func(n int32) {
				if seen[n] == int32(si+1) {
					return
				}
				seen[n] = int32(si + 1)
				for _, q := range ends[n] {
					counts[q]++
				}
			})
		}
	}
	return counts
}

// patternTrie stores sequences of symbols as paths from the root (node 0); it
// counts, per node, the sequences containing its pattern.
type patternTrie struct {
	child  map[uint64]int32 // node<<32 | symbol -> child node
	parent []int32
	sym    []int32
	depth  []int32
	count  []int32
	stamp  []int32
}

func newPatternTrie() *patternTrie {
	return &patternTrie{child: map[uint64]int32{}, parent: []int32{-1}, sym: []int32{-1}, depth: []int32{0}, count: []int32{0}, stamp: []int32{0}}
}

func (t *patternTrie) next(n int32, x int) (int32, bool) {
	c, ok := t.child[uint64(n)<<32|uint64(uint32(x))]
	return c, ok
}

func (t *patternTrie) insert(p []int) int32 {
	n := int32(0)
	for _, x := range p {
		n = t.insert1(n, x)
	}
	return n
}

// walk follows s from the root along existing nodes, at most maxLen deep,
// calling visit on each node reached.
func (t *patternTrie) walk(s []int, maxLen int, visit func(int32)) {
	n := int32(0)
	for _, x := range s[:min(len(s), maxLen)] {
		c, ok := t.next(n, x)
		if !ok {
			return
		}
		visit(c)
		n = c
	}
}

// pattern returns the symbols on the path to node n.
func (t *patternTrie) pattern(n int32) []int {
	p := make([]int, t.depth[n])
	for i := len(p) - 1; i >= 0; i-- {
		p[i] = int(t.sym[n])
		n = t.parent[n]
	}
	return p
}

// TopPatterns returns the k most frequent patterns of seqs: contiguous
// subsequences of 2 to maxLen symbols, ranked by support (the number of
// sequences containing the pattern, each counted once however often it
// repeats) and, at equal support, in lexicographic order of the symbols,
// so the choice is deterministic. Fewer than k come back if seqs have
// fewer distinct patterns.
func TopPatterns(seqs [][]int, k, maxLen int) [][]int {
	t := newPatternTrie()
	for si, s := range seqs {
		stamp := int32(si + 1)
		for i := range s {
			n := int32(0)
			for _, x := range s[i:min(len(s), i+maxLen)] {
				n = t.insert1(n, x)
				if t.stamp[n] != stamp {
					t.stamp[n] = stamp
					t.count[n]++
				}
			}
		}
	}
	var nodes []int32
	for n := range t.parent {
		if t.depth[n] >= 2 {
			nodes = append(nodes, int32(n))
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	// Only patterns at least as frequent as the k-th can be chosen; sort
	// those with their symbols for the tie-break.
	counts := make([]int32, len(nodes))
	for i, n := range nodes {
		counts[i] = t.count[n]
	}
	slices.Sort(counts)
	kth := counts[max(len(counts)-k, 0)]
	var cand []int32
	for _, n := range nodes {
		if t.count[n] >= kth {
			cand = append(cand, n)
		}
	}
	pats := make([][]int, len(cand))
	for i, n := range cand {
		pats[i] = t.pattern(n)
	}
	sort.Sort(patternsByFreq{pats, cand, t})
	return pats[:min(k, len(pats))]
}

type patternsByFreq struct {
	pats  [][]int
	nodes []int32
	t     *patternTrie
}

func (b patternsByFreq) Len() int { return len(b.pats) }
func (b patternsByFreq) Swap(i, j int) {
	b.pats[i], b.pats[j] = b.pats[j], b.pats[i]
	b.nodes[i], b.nodes[j] = b.nodes[j], b.nodes[i]
}
func (b patternsByFreq) Less(i, j int) bool {
	ci, cj := b.t.count[b.nodes[i]], b.t.count[b.nodes[j]]
	if ci != cj {
		return ci > cj
	}
	return slices.Compare(b.pats[i], b.pats[j]) < 0
}

// insert1 returns the child of n for symbol x, creating it if needed.
func (t *patternTrie) insert1(n int32, x int) int32 {
	if c, ok := t.next(n, x); ok {
		return c
	}
	c := int32(len(t.parent))
	t.child[uint64(n)<<32|uint64(uint32(x))] = c
	t.parent = append(t.parent, n)
	t.sym = append(t.sym, int32(x))
	t.depth = append(t.depth, t.depth[n]+1)
	t.count = append(t.count, 0)
	t.stamp = append(t.stamp, 0)
	return c
}

// PatternF1 returns the F1 score of the released top-k patterns against
// the real ones (TopPatterns with k and maxLen): with A and B the two
// sets, precision |A∩B|/|B|, recall |A∩B|/|A|, F1 = 2|A∩B|/(|A|+|B|). It
// is 1 when neither database has a pattern and 0 when only one does.
func PatternF1(real, released [][]int, k, maxLen int) float64 {
	a, b := TopPatterns(real, k, maxLen), TopPatterns(released, k, maxLen)
	if len(a)+len(b) == 0 {
		return 1
	}
	in := make(map[string]bool, len(a))
	for _, p := range a {
		in[Key(p)] = true
	}
	hit := 0
	for _, p := range b {
		if in[Key(p)] {
			hit++
		}
	}
	return 2 * float64(hit) / float64(len(a)+len(b))
}

// Popularity returns the visits per symbol: how many times each appears in
// seqs (consecutive repeats are already collapsed by the mapping, so a
// visit is an arrival).
func Popularity(seqs [][]int, size int) []float64 {
	v := make([]float64, size)
	for _, s := range seqs {
		for _, x := range s {
			v[x]++
		}
	}
	return v
}

// PopularityTau is Kendall's tau-b between the real and released
// popularity (visits per symbol) of every symbol of the alphabet, so that
// 1 means the same ranking and −1 the reverse. Symbols tied in both (such
// as cells neither database visits) count for nothing (tau-b's tie
// correction). It is 0 when either ranking is constant (for example an
// empty release): no rank information.
func PopularityTau(real, released [][]int, size int) float64 {
	return KendallTauB(Popularity(real, size), Popularity(released, size))
}

// KendallTauB returns Kendall's rank correlation tau-b of x and y,
//
//	τ_b = (C − D) / sqrt((n0 − n1)(n0 − n2)),
//
// with C and D the concordant and discordant pairs, n0 = n(n−1)/2 and n1,
// n2 the pairs tied in x and in y, by Knight's O(n log n) algorithm
// (Knight, JASA 1966). It is 0 when x or y is constant. (gonum's
// stat.Kendall is O(n²) and counts ties as concordant.)
func KendallTauB(x, y []float64) float64 {
	n := len(x)
	if n != len(y) {
		panic("trajdb: KendallTauB: length mismatch")
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if x[i] != x[j] {
			return x[i] < x[j]
		}
		return y[i] < y[j]
	})
	pairs := func(t int64) int64 { return t * (t - 1) / 2 }
	var n1, n3 int64 // ties in x; ties in both
	for i := 0; i < n; {
		j := i
		for j < n && x[idx[j]] == x[idx[i]] {
			j++
		}
		n1 += pairs(int64(j - i))
		for a := i; a < j; {
			b := a
			for b < j && y[idx[b]] == y[idx[a]] {
				b++
			}
			n3 += pairs(int64(b - a))
			a = b
		}
		i = j
	}
	ys := make([]float64, n)
	for i, k := range idx {
		ys[i] = y[k]
	}
	swaps := mergeInversions(ys, make([]float64, n))
	// ys is now sorted: count ties in y.
	var n2 int64
	for i := 0; i < n; {
		j := i
		for j < n && ys[j] == ys[i] {
			j++
		}
		n2 += pairs(int64(j - i))
		i = j
	}
	n0 := pairs(int64(n))
	den := math.Sqrt(float64(n0-n1) * float64(n0-n2))
	if den == 0 {
		return 0
	}
	// Concordant minus discordant: the pairs tied in neither, minus twice
	// the discordant ones (the swaps). Clamp the rounding of den.
	return min(max(float64(n0-n1-n2+n3-2*swaps)/den, -1), 1)
}

// mergeInversions sorts a ascending and returns the number of inversions (pairs
// i < j with a[i] > a[j]), using buf as scratch.
func mergeInversions(a, buf []float64) int64 {
	n := len(a)
	if n < 2 {
		return 0
	}
	m := n / 2
	inv := mergeInversions(a[:m], buf[:m]) + mergeInversions(a[m:], buf[m:])
	i, j, k := 0, m, 0
	for i < m && j < n {
		if a[j] < a[i] {
			buf[k] = a[j]
			inv += int64(m - i)
			j++
		} else {
			buf[k] = a[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], a[i:m])
	copy(buf[k:], a[j:n])
	copy(a, buf[:n])
	return inv
}

// MeanMetrics averages the metrics of several releases measured against
// the same real database with the same options (e.g. draws of a random
// baseline): every metric is the mean, the settings are the first's, and
// Released is the mean size rounded. Nil if ms is empty.
func MeanMetrics(ms []*Metrics) *Metrics {
	if len(ms) == 0 {
		return nil
	}
	out := *ms[0]
	n := float64(len(ms))
	var are, trip, length, diam, f1, tau, size float64
	hasDiam := true
	for _, m := range ms {
		are += m.QueryARE / n
		trip += m.TripJSD / n
		length += m.LengthJSD / n
		f1 += m.PatternF1 / n
		tau += m.KendallTau / n
		size += float64(m.Released) / n
		if m.DiameterJSD == nil {
			hasDiam = false
		} else {
			diam += *m.DiameterJSD / n
		}
	}
	out.QueryARE, out.TripJSD, out.LengthJSD, out.PatternF1, out.KendallTau = are, trip, length, f1, tau
	out.Released = int(math.Round(size))
	out.DiameterJSD = nil
	if hasDiam {
		out.DiameterJSD = &diam
	}
	return &out
}
