package trajdb

import (
	"fmt"

	"github.com/tracepriv/tracepriv/noise"
)

// Reference releases for reports. Neither is a mechanism: the uniform
// baseline is the floor every mechanism must beat (it knows nothing of the
// data but its size), the non-private one the ceiling (the data itself).
// Neither spends or guarantees any privacy budget: the uniform baseline
// uses the true number of sequences, and the non-private one is the data.
//
// UniformName and NonPrivateName name them in reports.
const (
	UniformName    = "uniform"
	NonPrivateName = "non-private"
)

// UniformBaseline returns a uniform-random release of the same size as db:
// len(db.Sequences()) sequences, each of a length uniform in [1, maxLen]
// (maxLen is the public truncation length, Bounds.MaxLen) and of symbols
// uniform over db's alphabet, independently. src nil means crypto/rand.
func UniformBaseline(db *DB, maxLen int, src noise.Source) ([][]int, error) {
	if maxLen < 1 {
		return nil, fmt.Errorf("trajdb: uniform baseline: maximum length %d, want at least 1", maxLen)
	}
	if db.Size < 1 {
		return nil, fmt.Errorf("trajdb: uniform baseline: alphabet of %d symbols", db.Size)
	}
	out := make([][]int, db.Len())
	for i := range out {
		s := make([]int, 1+noise.Int64N(src, int64(maxLen)))
		for j := range s {
			s[j] = int(noise.Int64N(src, int64(db.Size)))
		}
		out[i] = s
	}
	return out, nil
}

// NonPrivateBaseline returns the "release" of db with no privacy at all:
// its sequences after the contribution bounding b that the mechanisms
// apply, so that it differs from them only by their noise.
func NonPrivateBaseline(db *DB, b Bounds) ([][]int, error) {
	bd, err := Bound(db, b)
	if err != nil {
		return nil, err
	}
	return bd.Sequences(), nil
}
