package trajdb_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

// Release a database of three people's trips under user-level DP: bound
// what each person contributes, then release with the prefix tree.
func Example() {
	// Sequences over a 4-symbol alphabet (grid cells, stations, ...).
	db := &trajdb.DB{Size: 4, Users: []trajdb.User{
		{ID: "ann", Seqs: [][]int{{0, 1, 2}, {2, 1}}},
		{ID: "bob", Seqs: [][]int{{0, 1}}},
		{ID: "cy", Seqs: [][]int{{3, 2, 1, 0}}},
	}}
	b := trajdb.Bounds{MaxLen: 3, MaxSeqs: 1} // public, never chosen from the data
	m, err := trajdb.NewMechanism(trajdb.MechanismPrefix, b, 0)
	if err != nil {
		panic(err)
	}
	bounded, err := trajdb.Bound(db, b)
	if err != nil {
		panic(err)
	}
	// A seeded run, for a reproducible example: nil means crypto/rand.
	rel, err := m.Synthesize(bounded, 1, noise.Seeded(1))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: epsilon %g spent over %d levels, randomness %s\n", rel.Mechanism, rel.EpsilonSpent, len(rel.Levels), rel.Source)
	// Output:
	// prefix: epsilon 1 spent over 3 levels, randomness seeded:1
}

// The flawed present-only control is flagged: removing the one person who
// holds a sequence makes every release containing it impossible.
func ExampleAuditSupport() {
	db := &trajdb.DB{Size: 3, Users: []trajdb.User{
		{ID: "ann", Seqs: [][]int{{0, 1}}},
		{ID: "bob", Seqs: [][]int{{0, 1}}},
		{ID: "eve", Seqs: [][]int{{2, 0}}},
	}}
	m := trajdb.FlawedPresentOnly{Contribution: trajdb.Bounds{MaxLen: 2, MaxSeqs: 1}}
	rep, err := trajdb.AuditSupport(m, db, trajdb.AuditOptions{Epsilon: 1, MaxAdditions: -1, Src: noise.Seeded(1)})
	if err != nil {
		panic(err)
	}
	w := rep.Witness
	fmt.Println("violation:", rep.Violation)
	fmt.Printf("witness: %s, %s %s, sequence %v released under %s, impossible under %s\n",
		w.Kind, w.Change, w.Person, w.Sequence, w.Under, w.Other)
	// Output:
	// violation: true
	// witness: support, remove eve, sequence [2 0] released under D, impossible under D'
}

func ExampleReadSequences() {
	// Click-streams in MSNBC's style: categories numbered from 1.
	in := "% page categories\n1 1 2\n3\n2 4 4 1\n"
	db, err := trajdb.ReadSequences(strings.NewReader(in), trajdb.SeqOptions{Size: 17, Base: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(db.Size, db.Len(), db.Sequences())
	// Output:
	// 17 3 [[0 0 1] [2] [1 3 3 0]]
}

func ExampleEvaluate() {
	real := [][]int{{0, 1, 2}, {0, 1}, {2, 1, 0}, {1, 2}}
	released := [][]int{{0, 1, 2}, {0, 1}, {1, 0}}
	m, err := trajdb.Evaluate(real, released, trajdb.MetricOptions{Size: 3, Queries: 100})
	if err != nil {
		panic(err)
	}
	fmt.Printf("query_are %.3f trip_jsd %.3f length_jsd %.3f pattern_f1 %.3f kendall_tau %.3f\n",
		m.QueryARE, m.TripJSD, m.LengthJSD, m.PatternF1, m.KendallTau)
	// Output:
	// query_are 0.095 trip_jsd 0.425 length_jsd 0.021 pattern_f1 0.800 kendall_tau 0.500
}

func ExampleNGram() {
	db := &trajdb.DB{Size: 3, Users: []trajdb.User{
		{ID: "ann", Seqs: [][]int{{0, 1, 2}}},
		{ID: "bob", Seqs: [][]int{{0, 1}}},
	}}
	g := &trajdb.NGram{Contribution: trajdb.Bounds{MaxLen: 3, MaxSeqs: 1}, NMax: 2}
	rel, err := g.Synthesize(db, 1, noise.Seeded(1)) // a seeded run: for examples only
	if err != nil {
		panic(err)
	}
	l := rel.Levels[0]
	fmt.Printf("root: epsilon %.2f, noise scale %.0f, threshold %.2f; %d noisy unigram counts; source %s\n",
		l.Epsilon, l.Scale, l.Threshold, l.Nodes, rel.Source)
	// Output:
	// root: epsilon 0.50, noise scale 6, threshold 4.16; 3 noisy unigram counts; source seeded:1
}

func ExamplePrefix() {
	db := &trajdb.DB{Size: 4, Users: []trajdb.User{
		{ID: "ann", Seqs: [][]int{{0, 1, 2}}},
		{ID: "bob", Seqs: [][]int{{0, 1}}},
	}}
	p := &trajdb.Prefix{Contribution: trajdb.Bounds{MaxLen: 3, MaxSeqs: 1}}
	rel, err := p.Synthesize(db, 1, noise.Seeded(1)) // a seeded run: for examples only
	if err != nil {
		panic(err)
	}
	fmt.Printf("spent %.2f over %d levels of %.3f each (noise scale %.0f, threshold %.2f); source %s\n",
		rel.EpsilonSpent, len(rel.Levels), rel.Levels[0].Epsilon, rel.Levels[0].Scale, rel.Levels[0].Threshold, rel.Source)
	// Output:
	// spent 1.00 over 3 levels of 0.333 each (noise scale 3, threshold 8.49); source seeded:1
}

func ExampleReadSynthesis() {
	db := &trajdb.DB{Size: 3, Users: []trajdb.User{
		{ID: "ann", Seqs: [][]int{{0, 1}}}, {ID: "bob", Seqs: [][]int{{0, 1}}}, {ID: "cy", Seqs: [][]int{{1, 2}}},
	}}
	m := &trajdb.Prefix{Contribution: trajdb.Bounds{MaxLen: 2, MaxSeqs: 1}}
	rel, err := m.Synthesize(db, 4, noise.Seeded(1))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "release")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if _, err := trajdb.WriteSynthesis(dir, trajdb.NewCertificate(m, rel, 4, nil, 3, trajdb.MapOptions{}, noise.Seeded(1)), 0); err != nil {
		panic(err)
	}
	c, err := trajdb.ReadSynthesis(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Mechanism, c.Epsilon, c.Randomness, len(c.Seqs) == c.Trajectories)
	// Output:
	// prefix 4 seeded:1 true
}

func ExampleNewGrid() {
	box, err := trace.ParseBBox("39.75,116.15,40.10,116.60") // public: Beijing
	if err != nil {
		panic(err)
	}
	g, err := trajdb.NewGrid(box, 300)
	if err != nil {
		panic(err)
	}
	fmt.Println(g)
	c, ok := g.Cell(geo.Point{Lat: 39.9087, Lon: 116.3975}) // Tiananmen
	row, col := g.RowCol(c)
	fmt.Println(c, ok, row, col)
	_, ok = g.Cell(geo.Point{Lat: 39.13, Lon: 117.20}) // Tianjin
	fmt.Println(ok)
	// Output:
	// 300 m grid of 129×130 = 16770 cells over 39.75,116.15,40.1,116.6
	// 7552 true 58 70
	// false
}

// ExampleAuditNoise tests the prefix tree's noise, exactly, against the
// discrete Laplace noise it states, and does the same for a build with 0.7
// times its noise (NOT PRIVATE: noise for 0.7 times the sensitivity).
func ExampleAuditNoise() {
	db := &trajdb.DB{Size: 4}
	for i := range 40 {
		db.Users = append(db.Users, trajdb.User{ID: fmt.Sprint(i), Seqs: [][]int{{i % 4, (i / 4) % 4, 1}}})
	}
	b := trajdb.Bounds{MaxLen: 3, MaxSeqs: 1}
	for _, f := range []float64{1, 0.7} {
		m, _ := trajdb.NewWeakened(trajdb.MechanismPrefix, b, f)
		rep, err := trajdb.AuditNoise(m, db, trajdb.NoiseAuditOptions{Epsilon: 1, Src: noise.Seeded(1)})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: violation %v, epsilon_lower > 1: %v\n", m.Name(), rep.Violation, rep.EpsilonLower > 1)
	}
	// Output:
	// prefix: violation false, epsilon_lower > 1: false
	// prefix-noise-factor-0.7-NOT-PRIVATE: violation true, epsilon_lower > 1: true
}

// Meaning says what a release's user-level epsilon lets anyone who sees
// it conclude about one person.
func ExampleMeaning() {
	fmt.Println(trajdb.Meaning(1))
	// Output:
	// epsilon 1 per person: the best guess, from the release, of whether a person's trajectories are in it (or which of two sets of trajectories is theirs; equally likely beforehand) is right at most 73.1 % of the time (50 % is a coin toss; e^ε/(1+e^ε))
}
