package trajdb

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// TreeCounts are the true counts an exploration tree reads, keyed by Key
// of a node's symbols: for the prefix tree, Count[Key(p)] is the number of
// sequences that begin with p; for the n-gram tree, Count[Key(g)] is the
// number of occurrences of the gram g and End[Key(g)] of those that end
// their sequence (the bin g·&). They are sums over persons, so a
// distributed engine can count each person's bounded sequences apart and
// add (Add); the mechanisms read their input only through them.
type TreeCounts struct {
	// Size is the alphabet size |X|.
	Size  int
	Count map[string]int64
	End   map[string]int64
}

// NewTreeCounts returns empty counts over an alphabet of size symbols.
func NewTreeCounts(size int) *TreeCounts {
	return &TreeCounts{Size: size, Count: map[string]int64{}, End: map[string]int64{}}
}

// Add adds o's counts to c.
func (c *TreeCounts) Add(o *TreeCounts) error {
	if o.Size != c.Size {
		return fmt.Errorf("trajdb: adding counts over %d symbols to counts over %d", o.Size, c.Size)
	}
	for k, n := range o.Count {
		c.Count[k] += n
	}
	for k, n := range o.End {
		c.End[k] += n
	}
	return nil
}

// check validates counts for a tree of height h: keys are sequences of
// 1..h symbols of the alphabet (End: 1..h-1), counts are positive.
func (c *TreeCounts) check(name MechanismName, h int) error {
	if c == nil || c.Size < 1 || c.Size >= math.MaxInt32 {
		return fmt.Errorf("trajdb: %s: counts need an alphabet of 1 to 2^31-2 symbols", name)
	}
	for _, part := range []struct {
		m    map[string]int64
		maxL int
	}{{c.Count, h}, {c.End, h - 1}} {
		for k, n := range part.m {
			s := FromKey(k)
			if len(k)%4 != 0 || len(s) < 1 || len(s) > part.maxL {
				return fmt.Errorf("trajdb: %s: a count of %d symbols, want 1 to %d", name, len(s), part.maxL)
			}
			for _, x := range s {
				if x < 0 || x >= c.Size {
					return fmt.Errorf("trajdb: %s: symbol %d outside the alphabet of %d", name, x, c.Size)
				}
			}
			if n < 0 {
				return fmt.Errorf("trajdb: %s: negative count %d for %v", name, n, s)
			}
		}
	}
	return nil
}

// CountingMechanism is a Mechanism that also releases from TreeCounts, so
// that the counting can run elsewhere (e.g. on Apache Beam) and only the
// noise on one machine. Counts must be those of sequences already bounded
// by Bounds (Bound): the sensitivity the noise is calibrated to assumes it.
type CountingMechanism interface {
	Mechanism
	// Counts returns the counts seqs (a person's bounded sequences, or a
	// whole bounded database's) add to the tree over size symbols.
	Counts(size int, seqs [][]int) *TreeCounts
	// SynthesizeCounts is Release from the counts of a bounded database.
	SynthesizeCounts(c *TreeCounts, epsilon float64, src noise.Source) (*Synthetic, error)
}

var (
	_ CountingMechanism = (*Prefix)(nil)
	_ CountingMechanism = (*NGram)(nil)
)

// Counts returns the prefix counts of seqs (every prefix of up to MaxLen
// symbols).
func (p *Prefix) Counts(size int, seqs [][]int) *TreeCounts {
	c := NewTreeCounts(size)
	for _, s := range seqs {
		for d := 1; d <= min(len(s), p.Contribution.MaxLen); d++ {
			c.Count[Key(s[:d])]++
		}
	}
	return c
}

// Counts returns the gram counts of seqs: every gram of up to the tree's
// height n_max symbols, and those of fewer than n_max symbols that end
// their sequence.
func (g *NGram) Counts(size int, seqs [][]int) *TreeCounts {
	n := g.height()
	c := NewTreeCounts(size)
	for _, s := range seqs {
		s = s[:min(len(s), g.Contribution.MaxLen)]
		for j := range s {
			for l := 1; l <= n && j+l <= len(s); l++ {
				k := Key(s[j : j+l])
				c.Count[k]++
				if j+l == len(s) && l < n {
					c.End[k]++
				}
			}
		}
	}
	return c
}

// height is the n-gram tree's height n_max.
func (g *NGram) height() int {
	n := g.NMax
	if n == 0 {
		n = DefaultNMax
	}
	return min(n, g.Contribution.MaxLen)
}

// tally accumulates a tree's true counts from bounded sequences one at a
// time and releases from them, so that a release need not hold the
// database (SynthesizeSequences).
type tally interface {
	// add counts one sequence, already bounded (its person's first
	// MaxSeqs, truncated to MaxLen: add truncates again).
	add(s []int)
	release(epsilon float64, src noise.Source) (*Synthetic, error)
}

// tallier is a mechanism that counts through a tally.
type tallier interface {
	newTally(size int) tally
}

var (
	_ tallier = (*Prefix)(nil)
	_ tallier = (*NGram)(nil)
)

type prefixTally struct {
	p *Prefix
	c *TreeCounts
}

func (p *Prefix) newTally(size int) tally { return &prefixTally{p: p, c: NewTreeCounts(size)} }

func (tl *prefixTally) add(s []int) {
	for d := 1; d <= min(len(s), tl.p.Contribution.MaxLen); d++ {
		tl.c.Count[Key(s[:d])]++
	}
}

func (tl *prefixTally) release(epsilon float64, src noise.Source) (*Synthetic, error) {
	return tl.p.SynthesizeCounts(tl.c, epsilon, src)
}
