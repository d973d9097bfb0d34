package trajdb

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// msnbcData returns the full MSNBC click sequences (989,818 persons) from
// ../shared/data/msnbc, decompressed, or skips: the data is not shipped.
func msnbcData(b testing.TB) []byte {
	b.Helper()
	f, err := os.Open(filepath.Join("..", "..", "shared", "data", "msnbc", "msnbc.dat.gz"))
	if err != nil {
		b.Skip("MSNBC data not found in ../shared/data/msnbc")
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

var msnbcOpt = SeqOptions{Size: 17, Base: 1}

// BenchmarkMSNBCRelease is `tracepriv release --mechanism ngram` on MSNBC
// without the file writes: n_max 5, l_max 20, one sequence a person, ε = 1,
// streamed from the file's bytes (docs/trajdb.md compares it with the
// authors' code).
func BenchmarkMSNBCRelease(b *testing.B) {
	raw := msnbcData(b)
	for _, rec := range Reconstructions() {
		b.Run(string(rec), func(b *testing.B) {
			m := &NGram{Contribution: Bounds{MaxLen: 20, MaxSeqs: 1}, Reconstruction: rec}
			for b.Loop() {
				rel, _, err := SynthesizeSequences(m, bytes.NewReader(raw), msnbcOpt, 1, noise.Seeded(1))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(len(rel.Seqs)), "sequences")
			}
		})
	}
}

// BenchmarkMSNBCEvaluate is `tracepriv evaluate` of an n-gram release of
// MSNBC without the reads: the real side, then the release, one uniform
// draw and the non-private data measured.
func BenchmarkMSNBCEvaluate(b *testing.B) {
	raw := msnbcData(b)
	db, err := ReadSequences(bytes.NewReader(raw), msnbcOpt)
	if err != nil {
		b.Fatal(err)
	}
	bd := Bounds{MaxLen: 20, MaxSeqs: 1}
	rel, _, err := SynthesizeSequences(&NGram{Contribution: bd}, bytes.NewReader(raw), msnbcOpt, 1, noise.Seeded(1))
	if err != nil {
		b.Fatal(err)
	}
	np, err := NonPrivateBaseline(db, bd)
	if err != nil {
		b.Fatal(err)
	}
	real := db.Sequences()
	for b.Loop() {
		ev, err := NewEvaluator(real, MetricOptions{Size: 17, Persons: len(db.Users)})
		if err != nil {
			b.Fatal(err)
		}
		uni, err := UniformSequences(len(rel.Seqs), 17, bd.MaxLen, noise.Seeded(2))
		if err != nil {
			b.Fatal(err)
		}
		for _, seqs := range [][][]int{rel.Seqs, uni, np} {
			if _, err := ev.Measure(seqs); err != nil {
				b.Fatal(err)
			}
		}
	}
}
