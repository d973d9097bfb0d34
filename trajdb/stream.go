package trajdb

import (
	"fmt"
	"io"

	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/noise"
)

// SeqStats describes the input of a streamed release: what the operator
// may read, never part of the release (it is not protected).
type SeqStats struct {
	// Persons and Sequences read; Kept sequences after MaxSeqs, and how
	// many of those were cut to MaxLen.
	Persons   int `json:"persons"`
	Sequences int `json:"sequences"`
	Kept      int `json:"kept"`
	Truncated int `json:"truncated"`
}

// SynthesizeSequences releases a symbolic sequence file (ReadSequences'
// format, over opt.Size symbols: the public alphabet is required) with m
// at epsilon, as m.Release(Bound(db, m.Bounds()), ...) would with db read
// by ReadSequences: each person keeps their first MaxSeqs sequences in file
// order, each cut to MaxLen symbols. The exploration trees count each
// sequence as it is read and never hold the database: their memory is the
// counts and the release, so MSNBC's million sequences take a fraction of
// what a DB of them does. Other mechanisms are given the bounded DB. src
// nil means crypto/rand.
func SynthesizeSequences(m Mechanism, r io.Reader, opt SeqOptions, epsilon float64, src noise.Source) (*Synthetic, *SeqStats, error) {
	b := m.Bounds()
	if err := b.Validate(); err != nil {
		return nil, nil, fmt.Errorf("trajdb: %s: %w", m.Name(), err)
	}
	if opt.Size < 1 {
		return nil, nil, fmt.Errorf("trajdb: %s: a streamed release needs the public alphabet size (SeqOptions.Size)", m.Name())
	}
	if err := b.CheckEpsilon(epsilon); err != nil {
		return nil, nil, fmt.Errorf("trajdb: %s: %w", m.Name(), err)
	}
	st := &SeqStats{}
	tr, ok := m.(tallier)
	if !ok {
		db, err := ReadSequences(r, opt)
		if err != nil {
			return nil, nil, err
		}
		bd, err := Bound(db, b)
		if err != nil {
			return nil, nil, err
		}
		st.Persons, st.Sequences, st.Kept = len(db.Users), db.Len(), bd.Len()
		for _, u := range db.Users {
			for _, s := range u.Seqs[:min(len(u.Seqs), b.MaxSeqs)] {
				if len(s) > b.MaxLen {
					st.Truncated++
				}
			}
		}
		rel, err := m.Synthesize(bd, epsilon, src)
		return rel, st, err
	}
	tl := tr.newTally(opt.Size)
	seen := map[string]int{} // sequences kept per person, for files with ids
	if _, err := scanSequences(r, opt, func(id string, hasID bool, _ int, seq []int) error {
		st.Sequences++
		if hasID {
			n, ok := seen[id]
			if !ok {
				st.Persons++
			}
			if n >= b.MaxSeqs {
				return nil
			}
			seen[id] = n + 1
		} else {
			st.Persons++
		}
		st.Kept++
		if len(seq) > b.MaxLen {
			st.Truncated++
			seq = seq[:b.MaxLen]
		}
		tl.add(seq)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	rel, err := tl.release(epsilon, src)
	return rel, st, err
}

// SynthesizeSequencesFile is SynthesizeSequences of the file at path (plain or
// gzip, told by content), naming it in errors.
func SynthesizeSequencesFile(m Mechanism, path string, opt SeqOptions, epsilon float64, src noise.Source) (*Synthetic, *SeqStats, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if opt.Name == "" {
		opt.Name = path
	}
	return SynthesizeSequences(m, f, opt, epsilon, src)
}
