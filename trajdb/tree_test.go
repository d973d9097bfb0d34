package trajdb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
	"gonum.org/v1/gonum/stat/distuv"
)

// exploreWalkDB returns nUsers persons with one random walk each on a
// w×h grid graph (4-neighbour moves), of uniform length in [minLen,
// maxLen]: the synthetic trajectories of the benchmarks.
func exploreWalkDB(seed uint64, w, h, nUsers, minLen, maxLen int) *DB {
	rng := rand.New(rand.NewPCG(seed, 7))
	db := &DB{Size: w * h}
	for u := range nUsers {
		l := minLen + rng.IntN(maxLen-minLen+1)
		x, y := rng.IntN(w), rng.IntN(h)
		s := make([]int, l)
		for i := range s {
			s[i] = y*w + x
			for {
				nx, ny := x, y
				switch rng.IntN(4) {
				case 0:
					nx++
				case 1:
					nx--
				case 2:
					ny++
				default:
					ny--
				}
				if nx >= 0 && nx < w && ny >= 0 && ny < h {
					x, y = nx, ny
					break
				}
			}
		}
		db.Users = append(db.Users, User{ID: "u" + strconv.Itoa(u), Seqs: [][]int{s}})
	}
	return db
}

// exploreRandomDB returns a small database over size symbols with up to
// maxSeqs sequences of length 1..maxLen per person, with many repeats
// and shared prefixes.
func exploreRandomDB(seed uint64, size, users, maxSeqs, maxLen int) *DB {
	rng := rand.New(rand.NewPCG(seed, 11))
	db := &DB{Size: size}
	for u := range users {
		var seqs [][]int
		for range 1 + rng.IntN(maxSeqs) {
			s := make([]int, 1+rng.IntN(maxLen))
			for i := range s {
				s[i] = rng.IntN(size)
			}
			seqs = append(seqs, s)
		}
		db.Users = append(db.Users, User{ID: "p" + strconv.Itoa(u), Seqs: seqs})
	}
	return db
}

// chi2Homogeneity is Pearson's two-sample test that the histograms a and b
// come from one law; bins with fewer than 10 samples in total are pooled.
func chi2Homogeneity(a, b []int) (stat float64, df int, p float64) {
	na, nb := 0, 0
	for i := range a {
		na += a[i]
		nb += b[i]
	}
	var ca, cb []int
	pa, pb := 0, 0
	for i := range a {
		if a[i]+b[i] < 10 {
			pa += a[i]
			pb += b[i]
			continue
		}
		ca = append(ca, a[i])
		cb = append(cb, b[i])
	}
	if pa+pb > 0 {
		ca = append(ca, pa)
		cb = append(cb, pb)
	}
	n := float64(na + nb)
	for i := range ca {
		col := float64(ca[i] + cb[i])
		ea, eb := col*float64(na)/n, col*float64(nb)/n
		stat += (float64(ca[i])-ea)*(float64(ca[i])-ea)/ea + (float64(cb[i])-eb)*(float64(cb[i])-eb)/eb
	}
	df = len(ca) - 1
	return stat, df, distuv.ChiSquared{K: float64(df)}.Survival(stat)
}

// TestExceedZerosMatchesNaive checks the zero-count shortcut against the
// one-by-one sampler and both against the exact law: the number of
// zero-count children above the threshold is Binomial(n, p), p =
// q^t/(1+q); which ones is uniform; their excess over t is geometric.
// Fixed seeds; each p-value must exceed 1e-4.
func TestExceedZerosMatchesNaive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n            int
		lambda, thet float64
		runs         int
	}{
		{n: 40, lambda: 0.3, thet: 5.5, runs: 20000},     // t = 6, p ≈ 0.095
		{n: 1001, lambda: 0.05, thet: 124.3, runs: 2500}, // the n-gram θ for |X| = 1000
		{n: 7, lambda: 1.2, thet: 0, runs: 20000},        // t = 1
	}
	for ci, tc := range cases {
		t.Run(fmt.Sprintf("case %d n=%d", ci, tc.n), func(t *testing.T) {
			t.Parallel()
			q := math.Exp(-tc.lambda)
			tt := exceedFloor(tc.thet)
			p := zeroExceedProb(tc.lambda, tt)
			// Positions are grouped into at most 40 bins of near-equal width.
			nb := min(tc.n, 40)
			bin := func(j int) int { return j * nb / tc.n }
			type hist struct{ k, pos, exc []int }
			run := func(naive bool, seed uint64) hist {
				h := hist{k: make([]int, tc.n+1), pos: make([]int, nb), exc: make([]int, 30)}
				cn := &countNoise{src: noise.Seeded(seed), hooks: exploreHooks{naive: naive}}
				for range tc.runs {
					k := 0
					last := -1
					cn.exceedZeros(tc.n, tc.lambda, tc.thet, func(j int, v int64) {
						if j <= last || j >= tc.n || float64(v) <= tc.thet {
							t.Fatalf("case %d: bad kept child j=%d (last %d) v=%d", ci, j, last, v)
						}
						last = j
						k++
						h.pos[bin(j)]++
						h.exc[min(int(v-tt), 29)]++
					})
					h.k[k]++
				}
				if want := int64(tc.runs * tc.n); cn.drawn != want {
					t.Errorf("case %d naive=%v: drawn %d, want %d", ci, naive, cn.drawn, want)
				}
				return h
			}
			fast := run(false, uint64(100+ci))
			naive := run(true, uint64(200+ci))

			binom := make([]float64, tc.n+1)
			for k := range binom {
				binom[k] = distuv.Binomial{N: float64(tc.n), P: p}.Prob(float64(k))
			}
			geo := make([]float64, 30)
			for j := range geo {
				geo[j] = (1 - q) * math.Pow(q, float64(j))
			}
			geo[29] = math.Pow(q, 29)
			uni := make([]float64, nb)
			for j := range tc.n {
				uni[bin(j)] += 1 / float64(tc.n)
			}
			for _, s := range []struct {
				name string
				h    hist
			}{{"fast", fast}, {"naive", naive}} {
				for _, g := range []struct {
					what   string
					counts []int
					probs  []float64
				}{{"count", s.h.k, binom}, {"excess", s.h.exc, geo}, {"position", s.h.pos, uni}} {
					pr := renorm(g.probs)
					c, pp := stattest.PoolSmall(g.counts, pr, 5)
					if len(c) < 2 {
						continue
					}
					_, df, pv, err := stattest.ChiSquare(c, pp)
					if err != nil {
						t.Fatal(err)
					}
					if pv < 1e-4 {
						t.Errorf("case %d %s sampler: %s law rejected (df %d, p = %.2g)", ci, s.name, g.what, df, pv)
					}
				}
			}
			for _, g := range []struct {
				what string
				a, b []int
			}{{"count", fast.k, naive.k}, {"excess", fast.exc, naive.exc}, {"position", fast.pos, naive.pos}} {
				if st, df, pv := chi2Homogeneity(g.a, g.b); df > 0 && pv < 1e-4 {
					t.Errorf("case %d: fast and naive %s histograms differ (χ² %.1f, df %d, p = %.2g)", ci, g.what, st, df, pv)
				}
			}
		})
	}
}

func renorm(p []float64) []float64 {
	s := 0.0
	for _, v := range p {
		s += v
	}
	out := make([]float64, len(p))
	for i, v := range p {
		out[i] = v / s
	}
	return out
}

// TestExceedZerosHasPower makes sure the comparison above can fail: a
// shortcut with the wrong exceedance probability (threshold off by one)
// is rejected.
func TestExceedZerosHasPower(t *testing.T) {
	t.Parallel()
	n, lambda, theta, runs := 40, 0.3, 5.5, 20000
	good := make([]int, n+1)
	bad := make([]int, n+1)
	a := &countNoise{src: noise.Seeded(1)}
	b := &countNoise{src: noise.Seeded(2)}
	for range runs {
		k := 0
		a.exceedZeros(n, lambda, theta, func(int, int64) { k++ })
		good[k]++
		k = 0
		b.exceedZeros(n, lambda, theta-1, func(int, int64) { k++ })
		bad[k]++
	}
	if _, _, p := chi2Homogeneity(good, bad); p > 1e-6 {
		t.Errorf("a threshold off by one went unnoticed (p = %.2g)", p)
	}
}

func TestCheckExploreInput(t *testing.T) {
	t.Parallel()
	b := Bounds{MaxLen: 2, MaxSeqs: 1}
	db := &DB{Size: 3, Users: []User{{ID: "a", Seqs: [][]int{{0, 1}}}}}
	for _, m := range []Mechanism{&Prefix{Contribution: b}, &NGram{Contribution: b}} {
		if _, err := m.Synthesize(db, 1, noise.Seeded(1)); err != nil {
			t.Errorf("%s: %v", m.Name(), err)
		}
		for _, eps := range []float64{0, -1, math.Inf(1), math.NaN()} {
			if _, err := m.Synthesize(db, eps, noise.Seeded(1)); err == nil {
				t.Errorf("%s: epsilon %v accepted", m.Name(), eps)
			}
		}
		long := &DB{Size: 3, Users: []User{{ID: "a", Seqs: [][]int{{0, 1, 2}}}}}
		if _, err := m.Synthesize(long, 1, noise.Seeded(1)); err == nil {
			t.Errorf("%s: a sequence longer than MaxLen accepted", m.Name())
		}
		many := &DB{Size: 3, Users: []User{{ID: "a", Seqs: [][]int{{0}, {1}}}}}
		if _, err := m.Synthesize(many, 1, noise.Seeded(1)); err == nil {
			t.Errorf("%s: more than MaxSeqs sequences accepted", m.Name())
		}
		bad := &DB{Size: 3, Users: []User{{ID: "a", Seqs: [][]int{{0, 5}}}}}
		if _, err := m.Synthesize(bad, 1, noise.Seeded(1)); err == nil {
			t.Errorf("%s: symbol outside the alphabet accepted", m.Name())
		}
		// An empty database is a database: its release is noise.
		if _, err := m.Synthesize(&DB{Size: 3}, 1, noise.Seeded(1)); err != nil {
			t.Errorf("%s: empty database: %v", m.Name(), err)
		}
	}
}

// BenchmarkExploreRelease is the target, side by side: 10,000
// persons with one random walk each (lengths 5-20) on a 40×25 grid graph
// (1,000 cells), MaxLen 20, MaxSeqs 1; both mechanisms at ε = 1 and 10,
// and at ε = 1 with every zero-count child drawn one by one.
func BenchmarkExploreRelease(b *testing.B) {
	db := exploreWalkDB(42, 40, 25, 10000, 5, 20)
	bounds := Bounds{MaxLen: 20, MaxSeqs: 1}
	for _, c := range []struct {
		name  string
		mech  func(exploreHooks) Mechanism
		hooks exploreHooks
		eps   float64
	}{
		{"prefix/eps=1", func(h exploreHooks) Mechanism { return &Prefix{Contribution: bounds, hooks: h} }, exploreHooks{}, 1},
		{"prefix/eps=1/naive", func(h exploreHooks) Mechanism { return &Prefix{Contribution: bounds, hooks: h} }, exploreHooks{naive: true}, 1},
		{"prefix/eps=10", func(h exploreHooks) Mechanism { return &Prefix{Contribution: bounds, hooks: h} }, exploreHooks{}, 10},
		{"ngram/eps=1", func(h exploreHooks) Mechanism { return &NGram{Contribution: bounds, hooks: h} }, exploreHooks{}, 1},
		{"ngram/eps=1/naive", func(h exploreHooks) Mechanism { return &NGram{Contribution: bounds, hooks: h} }, exploreHooks{naive: true}, 1},
		{"ngram/eps=10", func(h exploreHooks) Mechanism { return &NGram{Contribution: bounds, hooks: h} }, exploreHooks{}, 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := c.mech(c.hooks)
			var rel *Synthetic
			for b.Loop() {
				var err error
				if rel, err = m.Synthesize(db, c.eps, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(rel.Seqs)), "seqs")
			b.ReportMetric(float64(rel.Nodes), "noisy-counts")
		})
	}
}
