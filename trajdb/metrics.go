package trajdb

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

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

// The defaults of MetricOptions, stated on its fields.
const (
	defaultQueries       = 1000
	defaultMaxQueryLen   = 6
	defaultRangeFrac     = 0.25
	defaultSanity        = 0.001
	defaultTopK          = 100
	defaultMaxPatternLen = 8
	defaultDiameterBins  = 20
	defaultPaperQueries  = 10000
)

// MetricOptions configures Evaluate and NewEvaluator. A zero field takes
// the default its comment states, so the zero value with Size or Universe
// set measures as the papers do.
type MetricOptions struct {
	// Universe gives the cells' geometry (diameters, range queries); nil
	// for symbolic databases, whose alphabet size is then Size.
	Universe Universe
	// Size is the alphabet size; zero means Universe.Size().
	Size int
	// Queries is the number of count queries of query_are (default 1000).
	Queries int
	// QueryKind defaults to RangeQueries over a *Grid and PatternQueries
	// otherwise.
	QueryKind QueryKind
	// MaxQueryLen bounds the length of pattern queries and of paper_are's
	// queries (default 6).
	MaxQueryLen int
	// RangeFrac bounds range queries' sides as a fraction of the grid's
	// (default 0.25).
	RangeFrac float64
	// QuerySeed seeds the query generator: the same seed gives every
	// release evaluated against the same real data the same queries.
	QuerySeed uint64
	// Sanity is the sanity bound as a fraction of the real database's
	// number of sequences (default 0.001, the papers' 0.1 %); the bound is
	// never below one sequence.
	Sanity float64
	// TopK is the number of frequent patterns compared (default 100).
	TopK int
	// MaxPatternLen bounds the length of frequent patterns (default 8);
	// pattern_f1's are at least 2 symbols long.
	MaxPatternLen int
	// DiameterBins is the number of equal-width bins of the diameter
	// distribution over [0, D] (see Metrics). Zero means one bin per cell
	// width over a *Grid (bins of CellM metres), and 20 over other
	// universes.
	DiameterBins int
	// TripBlock coarsens trips: start and end cells of a *Grid are taken
	// in blocks of TripBlock×TripBlock cells (default 1, the cells).
	TripBlock int
	// PaperQueries is the number of count queries of paper_are (default
	// 10,000).
	PaperQueries int
	// Persons is the number of persons of the real database, whose 0.1 %
	// (Sanity) is paper_are's sanity bound; 0 means one person per real
	// sequence.
	Persons int
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
		def(&o.Queries, defaultQueries, "Queries"),
		def(&o.MaxQueryLen, defaultMaxQueryLen, "MaxQueryLen"),
		def(&o.TopK, defaultTopK, "TopK"),
		def(&o.MaxPatternLen, defaultMaxPatternLen, "MaxPatternLen"),
		def(&o.DiameterBins, 0, "DiameterBins"),
		def(&o.TripBlock, 1, "TripBlock"),
		def(&o.PaperQueries, defaultPaperQueries, "PaperQueries"),
		def(&o.Persons, 0, "Persons"),
	} {
		if e != nil {
			return o, e
		}
	}
	if o.MaxPatternLen < 2 {
		return o, fmt.Errorf("trajdb: metrics: MaxPatternLen %d: patterns have at least 2 symbols", o.MaxPatternLen)
	}
	if o.Sanity == 0 {
		o.Sanity = defaultSanity
	}
	if o.RangeFrac == 0 {
		o.RangeFrac = defaultRangeFrac
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
// literature, so that results can be set beside published tables. With
// n real sequences, the sanity bound s = max(Sanity·n, 1) and Q(D) the
// number of sequences of D that a query matches:
//
//   - query_are: mean over the queries of |Q(real) − Q(released)| /
//     max(Q(real), s) (Chen, Fung and Desai, KDD 2012; Chen, Ács and
//     Castelluccia, CCS 2012). Pattern queries match the sequences holding
//     a random pattern of 1 to MaxQueryLen symbols contiguously; range
//     queries (the default over a *Grid, as AdaTrace, Gursoy et al., CCS
//     2018, asks them) the sequences visiting a random rectangle of cells.
//     The queries depend on QuerySeed and the universe only. Counts are
//     raw, not rescaled to the real database's size.
//   - trip_jsd, length_jsd, diameter_jsd: Jensen–Shannon divergence of
//     the distributions of trips (start and end cell, in TripBlock blocks),
//     lengths (symbols) and diameters (the largest distance between two
//     cells of a sequence, binned into DiameterBins equal bins over [0, D],
//     D a *Grid's diagonal or else the largest diameter seen) (AdaTrace;
//     LDPTrace, Du et al., PVLDB 2023). JSD = ½KL(P‖M) + ½KL(Q‖M), M =
//     ½(P+Q), in bits, so in [0, 1]: 0 for identical distributions, 1 for
//     disjoint supports (or when only one side is empty).
//   - pattern_f1: F1 = 2|A∩B|/(|A|+|B|) of the TopK most frequent patterns
//     A (real) and B (released): contiguous subsequences of 2 to
//     MaxPatternLen symbols ranked by support, the number of sequences
//     holding them (AdaTrace's FP F1; the two papers' frequent sequential
//     patterns); 1 when neither side has a pattern.
//   - kendall_tau: Kendall's tau-b between the locations' popularity
//     (visits per symbol, over the whole alphabet) in the two databases
//     (AdaTrace): 1 for the same ranking, −1 for the reverse, 0 when either
//     is constant.
//   - paper_are: the n-gram paper's count-query error (Chen, Ács and
//     Castelluccia, CCS 2012): PaperQueries random sequences of 1 to
//     MaxQueryLen symbols, each answered by its number of occurrences
//     (every start position, so a sequence holding it twice counts twice),
//     relative error as above with a sanity bound of Sanity·Persons.
//   - top_k_precision: the share of the real TopK grams (1 to
//     MaxPatternLen symbols, ranked by occurrences) that are among the
//     released top k (the n-gram paper's frequent-pattern measure).
//
// Ties in a ranking go to the lexicographically smaller gram, so every
// metric is deterministic given QuerySeed.
//
// query_are and paper_are differ in what a query counts. query_are's
// pattern queries count sequences that contain the pattern (at most one
// per sequence, as the prefix-tree paper's queries do), over 1,000
// queries and a sanity bound of 0.1 % of the sequences; paper_are counts
// occurrences, the quantity the n-gram tree releases, over 10,000 queries
// and 0.1 % of the persons. A release that gets the occurrences of short
// grams right but puts them into the wrong number of sequences (the
// authors' reconstruction) scores well on paper_are and not on query_are;
// pattern_f1 (support, 2 to 8 symbols, F1) and top_k_precision
// (occurrences, 1 to 8 symbols, precision) differ the same way.
//
// The metrics see the real data: they are for evaluation, not release.
//
// Beyond the metrics, the fields record the settings used. Lower is
// better for the errors and the JSDs, higher for pattern_f1,
// top_k_precision and kendall_tau (Metrics.Scores).
type Metrics struct {
	QueryARE  float64 `json:"query_are"`
	TripJSD   float64 `json:"trip_jsd"`
	LengthJSD float64 `json:"length_jsd"`
	// DiameterJSD is nil without a universe (symbols have no geometry).
	DiameterJSD *float64 `json:"diameter_jsd"`
	PatternF1   float64  `json:"pattern_f1"`
	KendallTau  float64  `json:"kendall_tau"`
	// PaperARE and TopKPrecision are the n-gram paper's measures.
	PaperARE      float64 `json:"paper_are"`
	TopKPrecision float64 `json:"top_k_precision"`

	Real        int       `json:"real_sequences"`
	Released    int       `json:"released_sequences"`
	QueryKind   QueryKind `json:"query_kind"`
	Queries     int       `json:"queries"`
	QuerySeed   uint64    `json:"query_seed"`
	SanityBound float64   `json:"sanity_bound"`
	TopK        int       `json:"top_k"`
	PatternLen  [2]int    `json:"pattern_len"`
	// PaperQueries and PaperSanityBound are paper_are's settings.
	PaperQueries     int     `json:"paper_queries"`
	PaperSanityBound float64 `json:"paper_sanity_bound"`
}

// Score is one utility metric of a Metrics under its JSON name.
type Score struct {
	Name  string
	Value float64
	// HigherBetter is true for pattern_f1 and kendall_tau; lower is
	// better for query_are and the JSDs.
	HigherBetter bool
}

// Scores lists the utility metrics of m (query_are, paper_are, the JSDs,
// pattern_f1, top_k_precision, kendall_tau), diameter_jsd only when m has
// it. It is the one list of metrics that
// comparisons, tables and figures go through.
func (m *Metrics) Scores() []Score {
	s := []Score{{"query_are", m.QueryARE, false}, {"paper_are", m.PaperARE, false}, {"trip_jsd", m.TripJSD, false}, {"length_jsd", m.LengthJSD, false}}
	if m.DiameterJSD != nil {
		s = append(s, Score{"diameter_jsd", *m.DiameterJSD, false})
	}
	return append(s, Score{"pattern_f1", m.PatternF1, true}, Score{"top_k_precision", m.TopKPrecision, true}, Score{"kendall_tau", m.KendallTau, true})
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

// Evaluate measures released against real with every metric. To measure
// several releases against the same real data, NewEvaluator does the real
// side once.
func Evaluate(real, released [][]int, opt MetricOptions) (*Metrics, error) {
	ev, err := NewEvaluator(real, opt)
	if err != nil {
		return nil, err
	}
	return ev.Measure(released)
}

// Evaluator measures releases against one real database: what the metrics
// need of the real side (query answers, distributions, top patterns) is
// computed once, in the background from NewEvaluator on. Measure is safe
// for concurrent use. The real sequences must not change while it runs.
type Evaluator struct {
	opt      MetricOptions
	real     *dbProfile
	realDone chan struct{} // closed when real is set
	qs       []query
	paper    []patternQuery
	// trie holds the queries of query_are, then paper_are's.
	trie           *queryTrie
	sanity, paperS float64
}

// NewEvaluator prepares the measurement of releases against real.
func NewEvaluator(real [][]int, opt MetricOptions) (*Evaluator, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := metricCheckSeqs(real, opt.Size); err != nil {
		return nil, fmt.Errorf("trajdb: metrics: real database: %w", err)
	}
	qs, err := newQueries(opt)
	if err != nil {
		return nil, err
	}
	persons := opt.Persons
	if persons == 0 {
		persons = len(real)
	}
	ev := &Evaluator{opt: opt, qs: qs, paper: newPaperQueries(opt),
		sanity: sanityBound(len(real), opt.Sanity), paperS: sanityBound(persons, opt.Sanity)}
	// One trie holds both query sets, so that a database is walked once
	// for both errors.
	all := make([]query, 0, len(qs)+len(ev.paper))
	all = append(all, qs...)
	for _, q := range ev.paper {
		all = append(all, q)
	}
	ev.trie = newQueryTrie(opt.Size, all)
	// The real side is measured in the background: a first Measure
	// measures its release meanwhile and waits only to compare.
	ev.realDone = make(chan struct{})
	go func() {
		defer close(ev.realDone)
		ev.real = ev.profile(real)
	}()
	return ev, nil
}

// Measure measures released against the real database.
func (ev *Evaluator) Measure(released [][]int) (*Metrics, error) {
	opt := ev.opt
	if err := metricCheckSeqs(released, opt.Size); err != nil {
		return nil, fmt.Errorf("trajdb: metrics: released database: %w", err)
	}
	q := ev.profile(released)
	<-ev.realDone
	r := ev.real
	m := &Metrics{
		QueryARE:         relError(r.support, q.support, ev.sanity),
		PaperARE:         relError(r.paperOcc, q.paperOcc, ev.paperS),
		TripJSD:          jsd(r.trips, q.trips),
		LengthJSD:        jsd(r.lengths, q.lengths),
		PatternF1:        setF1(r.topSupport, q.topSupport),
		TopKPrecision:    setPrecision(r.topOcc, q.topOcc, opt.TopK),
		KendallTau:       kendallTauB(r.popularity, q.popularity),
		Real:             r.n,
		Released:         q.n,
		QueryKind:        opt.QueryKind,
		Queries:          len(ev.qs),
		QuerySeed:        opt.QuerySeed,
		SanityBound:      ev.sanity,
		TopK:             opt.TopK,
		PatternLen:       [2]int{2, opt.MaxPatternLen},
		PaperQueries:     len(ev.paper),
		PaperSanityBound: ev.paperS,
	}
	if opt.Universe != nil {
		d := diameterJSD(opt.Universe, r.diameters, q.diameters, opt.DiameterBins)
		m.DiameterJSD = &d
	}
	return m, nil
}

// dbProfile is what the metrics need of one database.
type dbProfile struct {
	n              int
	support        []int64 // query_are's answers
	paperOcc       []int64 // paper_are's answers
	trips, lengths map[[2]int]float64
	diameters      []float64
	topSupport     [][]int
	topOcc         [][]int
	popularity     []float64
}

// profile computes what the metrics need of seqs, its two costly parts
// (the query walk and the top-k search) in parallel.
func (ev *Evaluator) profile(seqs [][]int) *dbProfile {
	opt := ev.opt
	p := &dbProfile{n: len(seqs)}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		support, occ := ev.trie.answerBoth(ev.qs, seqs)
		p.support = support[:len(ev.qs)]
		p.paperOcc = occ[len(ev.qs):]
	}()
	go func() {
		defer wg.Done()
		top := topGramsBy(seqs, opt.Size, opt.TopK, opt.MaxPatternLen, []gramRank{{2, false}, {1, true}})
		p.topSupport, p.topOcc = top[0], top[1]
	}()
	defer wg.Wait()
	cell := tripBlockKey(opt)
	if cell == nil {
		cell = func(c int) int { return c }
	}
	p.trips, p.lengths = tripsAndLengths(seqs, cell, opt.Size)
	if opt.Universe != nil {
		p.diameters = allDiameters(opt.Universe, seqs)
	}
	p.popularity = popularity(seqs, opt.Size)
	return p
}

// tripsAndLengths returns the histograms of trips (start and end mapped
// through cell) and of lengths (as [length, 0]), counted in arrays where
// they are small: a map update per sequence was a tenth of an evaluation
// of MSNBC.
func tripsAndLengths(seqs [][]int, cell func(int) int, size int) (trips, lengths map[[2]int]float64) {
	trips, lengths = map[[2]int]float64{}, map[[2]int]float64{}
	var byLen []float64
	var dense []float64
	if size <= 1024 {
		dense = make([]float64, size*size)
	}
	for _, s := range seqs {
		l := len(s)
		for l >= len(byLen) {
			byLen = append(byLen, 0)
		}
		byLen[l]++
		a, b := cell(s[0]), cell(s[l-1])
		if dense != nil && a < size && b < size {
			dense[a*size+b]++
		} else {
			trips[[2]int{a, b}]++
		}
	}
	for i, c := range dense {
		if c > 0 {
			trips[[2]int{i / size, i % size}] += c
		}
	}
	for l, c := range byLen {
		if c > 0 {
			lengths[[2]int{l, 0}] = c
		}
	}
	return trips, lengths
}

// relError is the mean of |a_i − b_i| / max(a_i, s).
func relError(a, b []int64, s float64) float64 {
	if len(a) == 0 {
		return 0
	}
	sum := 0.0
	for i := range a {
		sum += math.Abs(float64(a[i]-b[i])) / max(float64(a[i]), s)
	}
	return sum / float64(len(a))
}

// queryTrie answers pattern queries (and walks other queries one by one).
type queryTrie struct {
	t    *patternTrie
	node []int32 // the trie node of each query, -1 for non-pattern queries
}

func newQueryTrie(size int, qs []query) *queryTrie {
	qt := &queryTrie{t: newPatternTrie(size), node: make([]int32, len(qs))}
	for i, q := range qs {
		if p, ok := q.(patternQuery); ok && len(p) > 0 {
			qt.node[i] = qt.t.insert(p)
		} else {
			qt.node[i] = -1
		}
	}
	return qt
}

// answer returns each query's count over seqs: the sequences it matches,
// or for pattern queries with occurrences its occurrences. qs (for
// non-pattern queries) may be nil when every query is a pattern.
func (qt *queryTrie) answer(qs []query, seqs [][]int, occurrences bool) []int64 {
	support, occ := qt.t.counts(seqs)
	out := make([]int64, len(qt.node))
	for i, n := range qt.node {
		switch {
		case n < 0:
			out[i] = int64(queryCount(qs[i], seqs))
		case occurrences:
			out[i] = occ[n]
		default:
			out[i] = support[n]
		}
	}
	return out
}

// answerBoth returns every query's support and occurrences over seqs
// (non-pattern queries: the sequences they match, in both).
func (qt *queryTrie) answerBoth(qs []query, seqs [][]int) (support, occurrences []int64) {
	sup, occ := qt.t.counts(seqs)
	support = make([]int64, len(qt.node))
	occurrences = make([]int64, len(qt.node))
	for i, n := range qt.node {
		if n < 0 {
			c := int64(queryCount(qs[i], seqs))
			support[i], occurrences[i] = c, c
			continue
		}
		support[i], occurrences[i] = sup[n], occ[n]
	}
	return support, occurrences
}

// setF1 is the F1 score of the two pattern sets (1 if both are empty).
func setF1(a, b [][]int) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	return 2 * float64(intersect(a, b)) / float64(len(a)+len(b))
}

// setPrecision is |a ∩ b| / k: the share of the real top k (a) found
// among the released top k (b). It is 1 when neither has a pattern.
func setPrecision(a, b [][]int, k int) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	return float64(intersect(a, b)) / float64(max(min(k, len(a)), 1))
}

func intersect(a, b [][]int) int {
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
	return hit
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

// jsd returns the Jensen–Shannon divergence in bits between the
// distributions proportional to the non-negative weights p and q:
// JSD = ½KL(P‖M) + ½KL(Q‖M), M = ½(P+Q), in [0, 1]. By convention it is 0
// when both are empty and 1 when only one is (nothing released is as far
// from the data as can be).
func jsd[K comparable](p, q map[K]float64) float64 {
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

// tripJSD is the JSD of the trip distributions: the share of sequences
// per (start, end) pair, with start and end mapped through cell (nil: the
// symbols themselves).
func tripJSD(real, released [][]int, cell func(int) int) float64 {
	if cell == nil {
		cell = func(c int) int { return c }
	}
	key := func(s []int) [2]int { return [2]int{cell(s[0]), cell(s[len(s)-1])} }
	return jsd(metricHistogram(real, key), metricHistogram(released, key))
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

// lengthJSD is the JSD of the distributions of sequence lengths (number of
// symbols, exact).
func lengthJSD(real, released [][]int) float64 {
	key := func(s []int) int { return len(s) }
	return jsd(metricHistogram(real, key), metricHistogram(released, key))
}

// diameter returns the largest distance in metres between two cells of s
// (0 for a single cell): a *Grid's plane distance between centres, or the
// haversine distance between other universes' centres.
func diameter(u Universe, s []int) float64 {
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

// seqDiameterJSD is the JSD of the diameter distributions, binned into bins
// equal-width bins over [0, D]: D is a *Grid's diagonal (between the
// centres of opposite corner cells: public, the same for every database),
// or for other universes the largest diameter in either database. A
// diameter of exactly D falls in the last bin. bins < 1 means one bin per
// cell width, ⌈D/CellM⌉, over a *Grid (a city's trajectories span a few
// kilometres: twenty bins over a 50 km diagonal would put them all in the
// first two) and defaultDiameterBins otherwise.
func seqDiameterJSD(u Universe, real, released [][]int, bins int) float64 {
	return diameterJSD(u, allDiameters(u, real), allDiameters(u, released), bins)
}

func diameterJSD(u Universe, dr, dq []float64, bins int) float64 {
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
		bins = defaultDiameterBins
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
	return jsd(hist(dr), hist(dq))
}

func allDiameters(u Universe, seqs [][]int) []float64 {
	out := make([]float64, len(seqs))
	for i, s := range seqs {
		out[i] = diameter(u, s)
	}
	return out
}

// sanityBound returns the sanity bound of query_are for a real database of
// n sequences: frac·n (the papers take frac = 0.1 %), and never below one
// sequence (a bound below one count would turn a single spurious
// trajectory into an error above 100 %; it changes nothing on databases of
// 1/frac sequences or more, the papers' regime).
func sanityBound(n int, frac float64) float64 { return max(frac*float64(n), 1) }

// query is a count query: it matches the sequences it counts.
type query interface {
	Match(s []int) bool
}

// patternQuery counts the sequences containing it as a contiguous
// subsequence.
type patternQuery []int

// Match reports whether s contains q contiguously.
func (q patternQuery) Match(s []int) bool {
	for i := 0; i+len(q) <= len(s); i++ {
		if slices.Equal(s[i:i+len(q)], q) {
			return true
		}
	}
	return false
}

// rangeQuery counts the sequences visiting a rectangle of a grid's cells:
// rows Row0..Row1 and columns Col0..Col1, inclusive.
type rangeQuery struct {
	Grid                   *Grid
	Row0, Col0, Row1, Col1 int
}

// Match reports whether s visits the rectangle.
func (q rangeQuery) Match(s []int) bool {
	for _, c := range s {
		r, col := q.Grid.RowCol(c)
		if r >= q.Row0 && r <= q.Row1 && col >= q.Col0 && col <= q.Col1 {
			return true
		}
	}
	return false
}

// newQueries draws the count queries of opt (kind, number, sizes) from a
// seeded stream: they depend on the seed and the universe only, never on
// a database.
func newQueries(opt MetricOptions) ([]query, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	src := noise.Seeded(opt.QuerySeed)
	uni := func(lo, hi int) int { return lo + int(noise.Int64N(src, int64(hi-lo+1))) } // in [lo, hi]
	qs := make([]query, opt.Queries)
	for i := range qs {
		if opt.QueryKind == RangeQueries {
			g := opt.Universe.(*Grid)
			h := uni(1, max(1, int(math.Ceil(opt.RangeFrac*float64(g.Rows)))))
			w := uni(1, max(1, int(math.Ceil(opt.RangeFrac*float64(g.Cols)))))
			r0, c0 := uni(0, g.Rows-h), uni(0, g.Cols-w)
			qs[i] = rangeQuery{Grid: g, Row0: r0, Col0: c0, Row1: r0 + h - 1, Col1: c0 + w - 1}
			continue
		}
		p := make(patternQuery, uni(1, opt.MaxQueryLen))
		for j := range p {
			p[j] = uni(0, opt.Size-1)
		}
		qs[i] = p
	}
	return qs, nil
}

// queryCount returns the number of sequences q matches.
func queryCount(q query, seqs [][]int) int {
	n := 0
	for _, s := range seqs {
		if q.Match(s) {
			n++
		}
	}
	return n
}

// queryARE returns the average relative error of the queries:
//
//	mean over Q of |Q(real) − Q(released)| / max(Q(real), s)
//
// with s the sanity bound (sanityBound). Counts are raw, not rescaled to
// the real database's size (the exploration-tree releases approximate it;
// UniformSequences of the same number matches it).
// Pattern queries are answered with one pass per database through a trie
// of the patterns.
func queryARE(real, released [][]int, qs []query, s float64) float64 {
	qt := newQueryTrie(querySize(qs), qs)
	return relError(qt.answer(qs, real, false), qt.answer(qs, released, false), s)
}

// querySize is one more than the largest symbol of the pattern queries:
// symbols beyond it match no query.
func querySize(qs []query) int {
	size := 1
	for _, q := range qs {
		if p, ok := q.(patternQuery); ok {
			for _, x := range p {
				size = max(size, x+1)
			}
		}
	}
	return size
}

// newPaperQueries draws paper_are's queries: opt.PaperQueries sequences
// of a length uniform in [1, MaxQueryLen] (1 to 6 by default) and symbols
// uniform over the alphabet, from a seeded stream apart from newQueries'
// (the same seed gives the same queries to every release). They depend on
// the seed and the alphabet only, never on a database.
func newPaperQueries(opt MetricOptions) []patternQuery {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil
	}
	src := noise.Seeded(opt.QuerySeed ^ 0x70617065725f6172) // "paper_ar": a stream of its own
	uni := func(lo, hi int) int { return lo + int(noise.Int64N(src, int64(hi-lo+1))) }
	qs := make([]patternQuery, opt.PaperQueries)
	for i := range qs {
		p := make(patternQuery, uni(1, opt.MaxQueryLen))
		for j := range p {
			p[j] = uni(0, opt.Size-1)
		}
		qs[i] = p
	}
	return qs
}

// paperARE returns the n-gram paper's count-query error: the mean over qs
// of |O(real) − O(released)| / max(O(real), s), where O counts the
// occurrences of the query in a database (every start position of every
// sequence) and s is the sanity bound, 0.1 % of the real persons
// (sanityBound(persons, defaultSanity)).
func paperARE(real, released [][]int, qs []patternQuery, s float64) float64 {
	q := make([]query, len(qs))
	for i, p := range qs {
		q[i] = p
	}
	qt := newQueryTrie(querySize(q), q)
	return relError(qt.answer(nil, real, true), qt.answer(nil, released, true), s)
}

// topPatterns returns the k most frequent patterns of seqs: contiguous
// subsequences of 2 to maxLen symbols, ranked by support (the number of
// sequences containing the pattern, each counted once however often it
// repeats) and, at equal support, in lexicographic order of the symbols,
// so the choice is deterministic. Fewer than k come back if seqs have
// fewer distinct patterns.
func topPatterns(seqs [][]int, k, maxLen int) [][]int {
	return topGrams(seqs, seqSize(seqs), k, 2, maxLen, false)
}

// topOccurring returns the k grams of 1 to maxLen symbols with the most
// occurrences in seqs (every start position counted), ties in
// lexicographic order: the frequent patterns of top_k_precision.
func topOccurring(seqs [][]int, k, maxLen int) [][]int {
	return topGrams(seqs, seqSize(seqs), k, 1, maxLen, true)
}

// topKPrecision returns the share of the real top-k grams
// (topOccurring(real, k, maxLen)) that are among the released top k: the
// n-gram paper's precision of frequent sequential patterns. It is 1 when
// neither database has a gram.
func topKPrecision(real, released [][]int, k, maxLen int) float64 {
	return setPrecision(topOccurring(real, k, maxLen), topOccurring(released, k, maxLen), k)
}

// seqSize is one more than the largest symbol of seqs.
func seqSize(seqs [][]int) int {
	size := 1
	for _, s := range seqs {
		for _, x := range s {
			size = max(size, x+1)
		}
	}
	return size
}

// patternF1 returns the F1 score of the released top-k patterns against
// the real ones (topPatterns with k and maxLen): with A and B the two
// sets, precision |A∩B|/|B|, recall |A∩B|/|A|, F1 = 2|A∩B|/(|A|+|B|). It
// is 1 when neither database has a pattern and 0 when only one does.
func patternF1(real, released [][]int, k, maxLen int) float64 {
	return setF1(topPatterns(real, k, maxLen), topPatterns(released, k, maxLen))
}

// popularity returns the visits per symbol: how many times each appears in
// seqs (consecutive repeats are already collapsed by the mapping, so a
// visit is an arrival).
func popularity(seqs [][]int, size int) []float64 {
	v := make([]float64, size)
	for _, s := range seqs {
		for _, x := range s {
			v[x]++
		}
	}
	return v
}

// popularityTau is Kendall's tau-b between the real and released
// popularity (visits per symbol) of every symbol of the alphabet, so that
// 1 means the same ranking and −1 the reverse. Symbols tied in both (such
// as cells neither database visits) count for nothing (tau-b's tie
// correction). It is 0 when either ranking is constant (for example an
// empty release): no rank information.
func popularityTau(real, released [][]int, size int) float64 {
	return kendallTauB(popularity(real, size), popularity(released, size))
}

// kendallTauB returns Kendall's rank correlation tau-b of x and y,
//
//	τ_b = (C − D) / sqrt((n0 − n1)(n0 − n2)),
//
// with C and D the concordant and discordant pairs, n0 = n(n−1)/2 and n1,
// n2 the pairs tied in x and in y, by Knight's O(n log n) algorithm
// (Knight, JASA 1966). It is 0 when x or y is constant. (gonum's
// stat.Kendall is O(n²) and counts ties as concordant.)
func kendallTauB(x, y []float64) float64 {
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
	var are, pare, prec, trip, length, diam, f1, tau, size float64
	hasDiam := true
	for _, m := range ms {
		are += m.QueryARE / n
		pare += m.PaperARE / n
		prec += m.TopKPrecision / n
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
	out.PaperARE, out.TopKPrecision = pare, prec
	out.Released = int(math.Round(size))
	out.DiameterJSD = nil
	if hasDiam {
		out.DiameterJSD = &diam
	}
	return &out
}
