package trajdb

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/tracepriv/tracepriv/noise"
)

// Reference releases for reports. Neither is a mechanism: the uniform
// baseline is the floor every mechanism must beat (it knows nothing of the
// data but its size), the non-private one the ceiling (the data itself).
// Neither spends or guarantees any privacy budget: the uniform baseline
// uses the true number of sequences, and the non-private one is the data.
//
// BaselineUniform and BaselineNonPrivate name them in reports.
const (
	BaselineUniform    MechanismName = "uniform"
	BaselineNonPrivate MechanismName = "non-private"
)

// UniformSequences returns the uniform baseline: n sequences (the size of
// the release it is compared with) of a length uniform in [1, maxLen]
// (maxLen the public truncation length, Bounds.MaxLen) and symbols uniform
// over size symbols, independently. The baseline protects nothing
// and needs no secure randomness: src (nil means crypto/rand) gives the
// seed of a ChaCha8 stream that draws the millions of symbols of a large
// baseline in a fraction of a second. The sequences share slabs of
// memory, each its own capacity-limited slice.
func UniformSequences(n, size, maxLen int, src noise.Source) ([][]int, error) {
	if maxLen < 1 {
		return nil, fmt.Errorf("trajdb: uniform baseline: maximum length %d, want at least 1", maxLen)
	}
	if size < 1 {
		return nil, fmt.Errorf("trajdb: uniform baseline: alphabet of %d symbols", size)
	}
	var seed [32]byte
	for i := 0; i < 32; i += 8 {
		binary.LittleEndian.PutUint64(seed[i:], noise.Bits(src, 64))
	}
	r := rand.New(rand.NewChaCha8(seed))
	out := make([][]int, n)
	var slab []int
	for i := range out {
		l := 1 + r.IntN(maxLen)
		if len(slab)+l > cap(slab) {
			slab = make([]int, 0, max(1<<16, l))
		}
		j := len(slab)
		for range l {
			slab = append(slab, r.IntN(size))
		}
		out[i] = slab[j : j+l : j+l]
	}
	return out, nil
}

// NonPrivateBaseline returns the "release" of db with no privacy at all:
// its sequences after the contribution bounding b that the mechanisms
// apply, so that it differs from them only by their noise. The sequences
// share db's storage (each a prefix of a person's sequence, capacity
// limited): a million of them cost no copy. Do not modify them.
func NonPrivateBaseline(db *DB, b Bounds) ([][]int, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	var out [][]int
	for _, u := range db.Users {
		for _, s := range u.Seqs[:min(len(u.Seqs), b.MaxSeqs)] {
			l := min(len(s), b.MaxLen)
			out = append(out, s[:l:l])
		}
	}
	return out, nil
}
