package risk

import (
	"math/bits"
	"slices"

	"github.com/tracepriv/tracepriv/noise"
)

// uniformInt draws from {0, …, n−1} without modulo bias (Lemire's method).
func uniformInt(src noise.Source, n int) int {
	un := uint64(n)
	thresh := -un % un
	for {
		v := src.Uint64()
		hi, lo := bits.Mul64(v, un)
		if lo >= thresh {
			return int(hi)
		}
	}
}

// argmaxRandom returns an index of the largest count, breaking ties
// uniformly at random as Algorithm 1 does.
func argmaxRandom(c []int, src noise.Source) int {
	best := slices.Max(c)
	var idx []int
	for i, v := range c {
		if v == best {
			idx = append(idx, i)
		}
	}
	if len(idx) == 1 {
		return idx[0]
	}
	return idx[uniformInt(src, len(idx))]
}

// ChannelSampler returns a DiscreteSampler that draws θ from row x of a
// finite likelihood matrix, for auditing a mechanism specification (or
// testing an auditor) when no implementation is at hand. Rows are checked to
// be distributions.
func ChannelSampler(lik [][]float64) (DiscreteSampler, error) {
	if _, err := Exact(lik, Setting{}); err != nil {
		return nil, err
	}
	cum := make([][]float64, len(lik))
	for x, row := range lik {
		cum[x] = make([]float64, len(row))
		s := 0.0
		for t, p := range row {
			s += p
			cum[x][t] = s
		}
	}
	return func(x int, src noise.Source) int {
		u := (float64(src.Uint64()>>11) + 0.5) / (1 << 53)
		c := cum[x]
		t, _ := slices.BinarySearch(c, u*c[len(c)-1])
		return min(t, len(c)-1)
	}, nil
}
