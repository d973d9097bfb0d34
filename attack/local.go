package attack

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/gp"
)

// localFitBlocks is the most blocks of the release the local path fits
// the prior on.
const localFitBlocks = 6

// compositeLik is the restricted likelihood summed over blocks of the
// release, each with its own mean (a composite likelihood: the blocks are
// taken as independent).
type compositeLik struct{ blocks []*denseLik }

func (c *compositeLik) at(l float64) (func(s2 float64) (float64, error), error) {
	var fs []func(float64) (float64, error)
	for _, b := range c.blocks {
		f, err := b.at(l)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return func(s2 float64) (float64, error) {
		sum := 0.0
		for _, f := range fs {
			ll, err := f(s2)
			if err != nil {
				return 0, err
			}
			sum += ll
		}
		return sum, nil
	}, nil
}

// local is the dense path for a release longer than the dense window w
// (PathLocal), in two steps that each factorise only matrices of w/2
// points:
//
//   - the prior (lengthscale and variance) is chosen by the restricted
//     likelihood summed over at most localFitBlocks blocks of w/2
//     consecutive points spread evenly over the release, each block with
//     its own mean;
//   - every point is kriged from a window of w/2 points around it: the
//     release is cut into cores of w/4 points, each reconstructed from
//     its window (the core and w/8 points either side, or the first or
//     last w/2 points at the ends), with a mean estimated in the window.
//
// An adversary that uses the whole release at once, or the neighbours
// beyond the window, can only do better: the outcome is a measurement of
// one slightly weaker adversary. It returns the chosen prior, the joined
// posterior and the window.
func (s *search) local(g *noiseLaw) (candidate, *posterior, int, error) {
	n := len(s.ts)
	w := s.adv.DenseWindow / 2
	blocks := min((n+w-1)/w, localFitBlocks)
	comp := &compositeLik{}
	for b := range blocks {
		lo := 0
		if blocks > 1 {
			lo = b * (n - w) / (blocks - 1)
		}
		bd, err := newDesign(s.ts[lo:lo+w], s.adv.Mean)
		if err != nil {
			return candidate{}, nil, 0, err
		}
		comp.blocks = append(comp.blocks, &denseLik{ts: s.ts[lo : lo+w], z: s.z[lo : lo+w], d: bd, g: g.block(seq(lo, lo+w)), fam: s.adv.Family})
	}
	s.lik = comp
	best, err := s.run()
	if err != nil {
		return candidate{}, nil, 0, err
	}
	k, err := s.adv.Family.Member(best.s2, best.l)
	if err != nil {
		return candidate{}, nil, 0, fmt.Errorf("attack: %w", err)
	}
	out := &posterior{mean: make([]float64, n), variance: make([]float64, n)}
	core, margin := w/2, w/4
	for cs := 0; cs < n; cs += core {
		ce := min(cs+core, n)
		lo, hi := max(cs-margin, 0), min(ce+margin, n)
		if lo == 0 {
			hi = min(w, n)
		}
		if hi == n {
			lo = max(n-w, 0)
		}
		wd, err := newDesign(s.ts[lo:hi], s.adv.Mean)
		if err != nil {
			return candidate{}, nil, 0, err
		}
		p, err := krige(gp.Gram(k, s.ts[lo:hi]), g.block(seq(lo, hi)), s.z[lo:hi], wd)
		if err != nil {
			return candidate{}, nil, 0, fmt.Errorf("local window of points %d-%d: %w", lo+1, hi, err)
		}
		copy(out.mean[cs:ce], p.mean[cs-lo:ce-lo])
		copy(out.variance[cs:ce], p.variance[cs-lo:ce-lo])
		out.jitter = math.Max(out.jitter, p.jitter)
	}
	return best, out, w, nil
}
