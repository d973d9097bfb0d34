package trajdb

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// clickDB is shaped like MSNBC's short sessions: a third of the people
// visit one page, the others paths of two or three.
func clickDB(n int) *DB {
	db := &DB{Size: 4}
	for i := range n {
		var s []int
		switch i % 3 {
		case 0:
			s = []int{0}
		case 1:
			s = []int{0, 1, 1}
		default:
			s = []int{3, 3}
		}
		db.Users = append(db.Users, User{ID: "p" + itoa(i), Seqs: [][]int{s}})
	}
	return db
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestPersonsExact: given the exact gram counts (no noise), the persons
// reconstruction returns the database itself when no sequence is longer
// than n_max − 2 (every start, length and transition is then read off the
// counts), and always its number of sequences and their first n_max − 1
// symbols.
func TestPersonsExact(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		m := 2 + int(seed%3)
		db := exploreRandomDB(seed, m, 60, 2, 3) // lengths 1..3 = n_max − 2
		g := &NGram{Contribution: Bounds{MaxLen: 8, MaxSeqs: 2}, NMax: 5, hooks: exploreHooks{exact: true}}
		tr, err := g.build(db, 1, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		exactHists(tr)
		got := tr.synthesise(8, noise.Seeded(seed))
		if g, w := sortedSequences(got), sortedSequences(db.Sequences()); !slices.EqualFunc(g, w, slices.Equal) {
			t.Errorf("seed %d: reconstruction differs:\n got %v\nwant %v", seed, g, w)
		}
		// Longer sequences: the count and the starts are still exact.
		db = exploreRandomDB(seed+100, m, 80, 1, 8)
		tr, err = g.build(db, 1, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		exactHists(tr)
		got = tr.synthesise(8, noise.Seeded(seed))
		if len(got) != db.Len() {
			t.Errorf("seed %d: %d sequences, want %d", seed, len(got), db.Len())
		}
		starts := func(seqs [][]int) map[string]int {
			c := map[string]int{}
			for _, s := range seqs {
				c[Key(s[:min(len(s), 4)])]++
			}
			return c
		}
		if a, b := starts(got), starts(db.Sequences()); !mapsEqual(a, b) {
			t.Errorf("seed %d: first 4 symbols differ: %v vs %v", seed, a, b)
		}
	}
}

// exactHists puts the true counts back into every node (consistency's
// Markov fill of empty bins is for noisy trees).
func exactHists(tr *ngramTree) {
	for _, v := range tr.nodes {
		copy(v.hist, v.raw)
		v.trans = nil
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestPersonsKeepsPeople: with noise, the default reconstruction releases
// about as many sequences as there are people, with their length
// distribution; the authors' reconstruction (the negative control) does
// not: its leftover short grams become sequences of their own.
func TestPersonsKeepsPeople(t *testing.T) {
	t.Parallel()
	db := clickDB(6000)
	b := Bounds{MaxLen: 10, MaxSeqs: 1}
	real := db.Sequences()
	for _, c := range []struct {
		rec    Reconstruction
		people bool
	}{{ReconstructPersons, true}, {"", true}, {ReconstructAuthors, false}} {
		t.Run(fmt.Sprintf("%q", c.rec), func(t *testing.T) {
			t.Parallel()
			g := &NGram{Contribution: b, Reconstruction: c.rec}
			rel, err := g.Synthesize(db, 1, noise.Seeded(3))
			if err != nil {
				t.Fatal(err)
			}
			n := float64(len(rel.Seqs))
			jsd := lengthJSD(real, rel.Seqs)
			keeps := math.Abs(n-6000) <= 600 && jsd < 0.05
			t.Logf("%q: %v sequences for 6000 people, length jsd %.4f", c.rec, n, jsd)
			if keeps != c.people {
				t.Errorf("%q: %v sequences for 6000 people, length jsd %.4f: keeps the people %v, want %v", c.rec, n, jsd, keeps, c.people)
			}
			if want := c.rec; rel.Reconstruction != want && !(want == "" && rel.Reconstruction == ReconstructPersons) {
				t.Errorf("%q: Released.Reconstruction %q", c.rec, rel.Reconstruction)
			}
		})
	}
	if _, err := (&NGram{Contribution: b, Reconstruction: "greedy"}).Synthesize(db, 1, noise.Seeded(1)); err == nil {
		t.Error("an unknown reconstruction was accepted")
	}
}

// TestSystematicSplit: every bin gets the floor or the ceiling of its
// share, the total is exact, and over uniform draws each bin gets its
// share on average (the split is unbiased); a split that rounds every
// share down (the control) loses sequences.
func TestSystematicSplit(t *testing.T) {
	t.Parallel()
	w := []float64{0.5, 0, 2.25, 1e-9, 7, 0.25}
	s := 0.0
	for _, x := range w {
		s += x
	}
	src := noise.Seeded(4)
	const k, draws = 37, 20000
	mean := make([]float64, len(w))
	out := make([]int64, len(w))
	for range draws {
		systematicSplit(k, w, s, uniform01(src), out)
		tot := int64(0)
		for i, c := range out {
			share := float64(k) * w[i] / s
			if float64(c) < math.Floor(share) || float64(c) > math.Ceil(share) {
				t.Fatalf("bin %d: %d of %d, share %v", i, c, k, share)
			}
			tot += c
			mean[i] += float64(c) / draws
		}
		if tot != k {
			t.Fatalf("split %v sums to %d, want %d", out, tot, k)
		}
	}
	for i := range w {
		share := float64(k) * w[i] / s
		if math.Abs(mean[i]-share) > 0.02 {
			t.Errorf("bin %d: mean %v, share %v", i, mean[i], share)
		}
	}
	floorTotal := 0.0
	for i := range w {
		floorTotal += math.Floor(float64(k) * w[i] / s)
	}
	if floorTotal == k {
		t.Error("control: rounding down keeps the total here; pick weights that do not")
	}
}

// TestBudgetFloatSum: the per-level budgets of both trees add up, in
// float64, to at most ε, for the ε and heights where ε/h summed h times
// does not (0.1+0.1+0.1 = 0.30000000000000004 > 0.3: the control), and
// stay within 1e-14 of ε.
func TestBudgetFloatSum(t *testing.T) {
	t.Parallel()
	naiveOver := 0
	for _, eps := range []float64{0.3, 0.1, 0.7, 1, 1.1, 2.3, 3.7, 1e-3, 0.6, 0.9} {
		for h := 1; h <= 25; h++ {
			e := uniformBudget(eps, h)
			s, naive := 0.0, 0.0
			for range h {
				s += e
				naive += eps / float64(h)
			}
			if s > eps || s < eps*(1-1e-14) {
				t.Errorf("eps %v h %d: levels sum to %v", eps, h, s)
			}
			if naive > eps {
				naiveOver++
			}
			// A path of the n-gram tree with a random number of levels
			// left at each step.
			spent, sum := 0.0, 0.0
			for left := h; left >= 1; left-- {
				var b float64
				b, spent = pathBudget(spent, eps, left)
				sum += b
			}
			if sum > eps || spent > eps || sum < eps*(1-1e-14) {
				t.Errorf("eps %v h %d: path sums to %v (bound %v)", eps, h, sum, spent)
			}
		}
	}
	if naiveOver == 0 {
		t.Error("control: eps/h never sums above eps here, so the test shows nothing")
	}
	// Whole releases: the 0.30000000000000004.
	db := exploreWalkDB(2, 4, 4, 400, 1, 3)
	for _, m := range []Mechanism{&Prefix{Contribution: Bounds{MaxLen: 3, MaxSeqs: 1}}, &NGram{Contribution: Bounds{MaxLen: 3, MaxSeqs: 1}}} {
		rel, err := m.Synthesize(db, 0.3, noise.Seeded(1))
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, l := range rel.Levels {
			s += l.Epsilon
		}
		if s > 0.3 || rel.EpsilonSpent != 0.3 || rel.WorstPathEpsilon != s {
			t.Errorf("%s at 0.3: levels sum %v, worst path %v, epsilon spent %v", m.Name(), s, rel.WorstPathEpsilon, rel.EpsilonSpent)
		}
	}
}

// TestReleaseSequencesStreams: a streamed release of a sequence file is
// the release of the bounded database read from it (same seed, same
// output), with ids and without, and counts what it read.
func TestReleaseSequencesStreams(t *testing.T) {
	t.Parallel()
	var plain, ids strings.Builder
	db := exploreRandomDB(5, 5, 200, 3, 9)
	for _, u := range db.Users {
		for _, s := range u.Seqs {
			var f []string
			for _, x := range s {
				f = append(f, itoa(x))
			}
			plain.WriteString(strings.Join(f, " ") + "\n")
			ids.WriteString(u.ID + ": " + strings.Join(f, " ") + "\n")
		}
	}
	b := Bounds{MaxLen: 6, MaxSeqs: 2}
	for _, file := range []string{plain.String(), ids.String()} {
		want, err := ReadSequences(strings.NewReader(file), SeqOptions{Size: 5})
		if err != nil {
			t.Fatal(err)
		}
		bd, err := Bound(want, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []Mechanism{&Prefix{Contribution: b}, &NGram{Contribution: b}, &NGram{Contribution: b, NMax: 3, Reconstruction: ReconstructAuthors}} {
			a, err := m.Synthesize(bd, 2, noise.Seeded(8))
			if err != nil {
				t.Fatal(err)
			}
			c, st, err := SynthesizeSequences(m, strings.NewReader(file), SeqOptions{Size: 5}, 2, noise.Seeded(8))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(a.Seqs, c.Seqs, slices.Equal) || a.Nodes != c.Nodes {
				t.Errorf("%s: streamed release differs from the release", m.Name())
			}
			if st.Persons != len(want.Users) || st.Sequences != want.Len() || st.Kept != bd.Len() {
				t.Errorf("%s: stats %+v, want %d persons, %d sequences, %d kept", m.Name(), st, len(want.Users), want.Len(), bd.Len())
			}
		}
	}
	if _, _, err := SynthesizeSequences(&Prefix{Contribution: b}, strings.NewReader("0 1\n"), SeqOptions{}, 1, nil); err == nil {
		t.Error("a streamed release without the public alphabet was accepted")
	}
}

// TestCertificateHeight: n_max is the tree's height, NMax capped at
// MaxLen, not the configured NMax.
func TestCertificateHeight(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ nmax, maxLen, want int }{{0, 3, 3}, {0, 20, 5}, {7, 4, 4}, {2, 9, 2}} {
		t.Run(fmt.Sprintf("NMax=%d MaxLen=%d", c.nmax, c.maxLen), func(t *testing.T) {
			g := &NGram{Contribution: Bounds{MaxLen: c.maxLen, MaxSeqs: 1}, NMax: c.nmax}
			cert := NewCertificate(g, &Synthetic{}, 1, nil, 3, MapOptions{}, noise.Seeded(1))
			if cert.NMax != c.want || g.Height() != c.want {
				t.Errorf("NMax %d, MaxLen %d: n_max %d (Height %d), want %d", c.nmax, c.maxLen, cert.NMax, g.Height(), c.want)
			}
		})
	}
}

// TestSeqBuilder: the builder returns each emitted sequence, in order,
// with its own capacity (appending to one leaves the others intact),
// across slab boundaries (growing slabs, and a sequence longer than the
// largest slab).
func TestSeqBuilder(t *testing.T) {
	b := newSeqBuilder()
	var want [][]int
	for i := range 3000 {
		s := make([]int, 1+i%97)
		if i == 1500 {
			s = make([]int, maxSlab+3)
		}
		for j := range s {
			s[j] = i + j
		}
		k := int64(1 + i%3)
		b.emit(s, k)
		for range k {
			want = append(want, slices.Clone(s))
		}
	}
	if len(b.seqs) != len(want) {
		t.Fatalf("%d sequences, want %d", len(b.seqs), len(want))
	}
	for i := range b.seqs {
		if len(b.seqs[i]) != cap(b.seqs[i]) {
			t.Fatalf("sequence %d: capacity %d beyond its length %d", i, cap(b.seqs[i]), len(b.seqs[i]))
		}
		b.seqs[i] = append(b.seqs[i], -1) // must not overwrite the next
	}
	for i := range want {
		if !slices.Equal(b.seqs[i][:len(want[i])], want[i]) {
			t.Fatalf("sequence %d: %v, want %v", i, b.seqs[i][:min(5, len(b.seqs[i]))], want[i][:min(5, len(want[i]))])
		}
	}
}

// BenchmarkSynthesizeSmall releases a ten-person database with the
// n-gram tree, as the falsifiers and audits do thousands of times: its
// cost was clearing a 512 KiB slab per release before the slabs grew
// (BENCHMARKS.md, issue 32, session 42).
func BenchmarkSynthesizeSmall(b *testing.B) {
	db := &DB{Size: 2, Users: []User{{ID: "victim", Seqs: [][]int{{0, 1}}}}}
	for i := range 9 {
		db.Users = append(db.Users, User{ID: "p" + itoa(i), Seqs: [][]int{{i % 2}}})
	}
	m := &NGram{Contribution: Bounds{MaxLen: 2, MaxSeqs: 1}, NMax: 2}
	src := noise.Seeded(1)
	for b.Loop() {
		if _, err := m.Synthesize(db, 3, src); err != nil {
			b.Fatal(err)
		}
	}
}
