package trajdb

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// TestMSNBCReconstructions is a measurement, not a check (it runs only
// with TRACEPRIV_MSNBC_RECON=1, on the full MSNBC data): every
// reconstruction of one noisy tree, its number of sequences and its
// paper_are against the bounded data split by query length, which shows
// where each loses (docs/trajdb.md). TRACEPRIV_MSNBC_EPS (one ε, default
// 1, 0.5 and 0.1) and TRACEPRIV_MSNBC_SEED (the tree's noise, default 7)
// choose the tree.
func TestMSNBCReconstructions(t *testing.T) {
	if os.Getenv("TRACEPRIV_MSNBC_RECON") == "" {
		t.Skip("a measurement: set TRACEPRIV_MSNBC_RECON=1")
	}
	raw := msnbcData(t)
	db, err := ReadSequences(bytes.NewReader(raw), msnbcOpt)
	if err != nil {
		t.Fatal(err)
	}
	bd := Bounds{MaxLen: 20, MaxSeqs: 1}
	bounded, err := NonPrivateBaseline(db, bd)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := MetricOptions{Size: 17, QuerySeed: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	qs := newPaperQueries(opt)
	q := make([]query, len(qs))
	for i, p := range qs {
		q[i] = p
	}
	qt := newQueryTrie(17, q)
	realAns := qt.answer(nil, bounded, true)
	s := sanityBound(len(db.Users), defaultSanity)
	eps := []float64{1, 0.5, 0.1}
	if e := os.Getenv("TRACEPRIV_MSNBC_EPS"); e != "" {
		eps = eps[:1]
		if _, err := fmt.Sscan(e, &eps[0]); err != nil {
			t.Fatalf("TRACEPRIV_MSNBC_EPS=%q: %v", e, err)
		}
	}
	seed := uint64(7)
	if v := os.Getenv("TRACEPRIV_MSNBC_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("TRACEPRIV_MSNBC_SEED=%q: %v", v, err)
		}
	}
	for _, e := range eps {
		g := &NGram{Contribution: bd}
		tl := g.newTally(17).(*ngramTally)
		for _, s := range bounded {
			tl.add(s)
		}
		tr, err := g.buildTrie(tl.t, e, noise.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range Reconstructions() {
			seqs := tr.reconstruct(rec, bd.MaxLen, noise.Seeded(seed+1))
			ans := qt.answer(nil, seqs, true)
			var byLen [7]float64
			tot := 0.0
			for i, p := range qs {
				e := math.Abs(float64(realAns[i]-ans[i])) / max(float64(realAns[i]), s)
				byLen[len(p)] += e / float64(len(qs))
				tot += e / float64(len(qs))
			}
			var b strings.Builder
			fmt.Fprintf(&b, "ε %g %-8s %9d sequences, paper_are against bounded %.4f, by query length:", e, rec, len(seqs), tot)
			for l := 1; l <= 6; l++ {
				fmt.Fprintf(&b, " %d: %.4f", l, byLen[l])
			}
			t.Log(b.String())
		}
	}
}
