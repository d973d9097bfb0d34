package trajdb

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// This file holds what the two exploration-tree mechanisms (Prefix and
// NGram) share: parameter checks, the noise of a node's children and the
// exact shortcut for the children whose true count is zero.

// exploreHooks are test-only switches. The zero value is the mechanism as
// documented; nothing outside the package's tests sets them.
type exploreHooks struct {
	// exact is the epsilon -> infinity limit: no noise and a threshold of
	// 0, so the trees hold the true counts (structure checks).
	exact bool
	// naive draws the noise of every zero-count child one by one instead
	// of the exact shortcut (countNoise.exceedZeros).
	naive bool
	// sensFactor > 0 calibrates the noise and the thresholds to
	// sensFactor times the true sensitivity: a negative control (0.1 is
	// noise for a tenth of the sensitivity), never DP at the claimed
	// epsilon.
	sensFactor float64
	// presentOnly perturbs only the children present in the data, the
	// flaw of Propositions 3.5 and 3.6: a negative control.
	presentOnly bool
	// keepRaw is kept for the tests' sake: n-gram nodes always record
	// their noisy counts before consistency now.
	keepRaw bool
	// tap, if set, is told every count drawn one by one (countNoise.noisy:
	// not the zero-count shortcut's draws, which are conditioned on
	// exceeding the threshold), its noisy value and the budget of the
	// node it belongs to: what AuditNoise tests against the stated noise.
	// (A pointer, so that the hooks stay comparable.)
	tap *noiseTap
}

// noiseTap is the observer of exploreHooks.tap.
type noiseTap struct {
	see func(count, noisy int64, budget float64)
}

// countNoise draws the noisy counts of one release and counts them.
type countNoise struct {
	src   noise.Source
	hooks exploreHooks
	// drawn is the number of noisy counts the mechanism perturbs: every
	// child of every expanded node, whether drawn one by one or through
	// the zero-count shortcut.
	drawn int64
	// calls is the number of calls to the underlying samplers.
	calls int64
	// budget is the epsilon of the node being drawn, for hooks.tap.
	budget float64
}

// noisy returns count plus discrete Laplace noise of parameter lambda
// (P(k) ∝ e^{-lambda|k|}).
func (c *countNoise) noisy(count int64, lambda float64) int64 {
	c.drawn++
	y := count
	if !c.hooks.exact {
		c.calls++
		y += noise.TwoSidedGeometric(c.src, lambda)
	}
	if c.hooks.tap != nil {
		c.hooks.tap.see(count, y, c.budget)
	}
	return y
}

// exceedZeros perturbs n children whose true count is 0 with discrete
// Laplace noise of parameter lambda and calls keep(j, v), in increasing j,
// for each child j in [0, n) whose noisy count v exceeds theta (v > theta).
// The other n - (kept) noisy counts are not reported: the mechanisms prune
// those children and never look at their values, so they need not exist.
//
// Unless hooks.naive is set it does not draw the n values one by one. Let
// q = e^{-lambda} and t the smallest integer above theta (theta >= 0, so
// t >= 1). A discrete Laplace Z has P(Z >= t) = q^t/(1+q) =: p, and given
// Z >= t, Z - t is geometric: P(Z - t = j | Z >= t) = (1-q)q^j (the law is
// memoryless above 0). The n draws are independent, so which of them exceed
// theta is a Bernoulli(p) process over j = 0..n-1, whose gaps between
// successes are independent Geometric(p) variables, and the exceeding values
// are t + Geometric(q) independently of where they fall. Drawing the gaps
// and then the values therefore gives the kept children and their noisy
// counts exactly the joint law of the one-by-one sampler, at a cost of about
// 2np draws instead of n. (Exact up to the float64 rounding of p; if p
// underflows to 0, no zero-count child is kept, an event of probability
// below n·1e-308 under the exact law.) TestExceedZerosMatchesNaive checks
// both samplers against that law.
func (c *countNoise) exceedZeros(n int, lambda, theta float64, keep func(j int, v int64)) {
	if n <= 0 || c.hooks.presentOnly {
		return
	}
	c.drawn += int64(n)
	if c.hooks.exact {
		if theta < 0 {
			for j := range n {
				keep(j, 0)
			}
		}
		return
	}
	if c.hooks.naive || !(theta >= 0) {
		for j := range n {
			c.calls++
			if v := noise.TwoSidedGeometric(c.src, lambda); float64(v) > theta {
				keep(j, v)
			}
		}
		return
	}
	t := exceedFloor(theta)
	p := zeroExceedProb(lambda, t)
	if !(p > 0) {
		return
	}
	// noise.Geometric(src, g) succeeds with probability 1 - e^{-g}.
	gap := -math.Log1p(-p)
	pos := -1
	for {
		c.calls++
		g := noise.Geometric(c.src, gap)
		if g < 1 || g >= int64(n-pos) {
			return
		}
		pos += int(g)
		c.calls++
		y := noise.Geometric(c.src, lambda) - 1
		v := t + y
		if v < t { // overflow in the e^{-lambda·2^63} tail
			v = math.MaxInt64
		}
		keep(pos, v)
	}
}

// exceedFloor returns the smallest integer strictly above theta >= 0.
func exceedFloor(theta float64) int64 {
	if theta >= 1<<62 {
		return 1 << 62
	}
	return int64(math.Floor(theta)) + 1
}

// zeroExceedProb returns P(Z >= t) = e^{-lambda t}/(1+e^{-lambda}) for a
// discrete Laplace Z of parameter lambda and t >= 1.
func zeroExceedProb(lambda float64, t int64) float64 {
	return math.Exp(-lambda*float64(t)) / (1 + math.Exp(-lambda))
}

// checkExploreInput validates what both mechanisms need: a valid
// database bounded by b and a positive, finite epsilon.
func checkExploreInput(name MechanismName, db *DB, b Bounds, epsilon float64) error {
	if err := b.CheckEpsilon(epsilon); err != nil {
		return fmt.Errorf("trajdb: %s: %w", name, err)
	}
	if db == nil {
		return fmt.Errorf("trajdb: %s: nil database", name)
	}
	if err := db.Validate(); err != nil {
		return fmt.Errorf("trajdb: %s: %w", name, err)
	}
	if db.Size >= math.MaxInt32 {
		return fmt.Errorf("trajdb: %s: alphabet of %d symbols is too large", name, db.Size)
	}
	for _, u := range db.Users {
		if len(u.Seqs) > b.MaxSeqs {
			return fmt.Errorf("trajdb: %s: user %q has %d sequences, more than MaxSeqs = %d (apply Bound first)", name, u.ID, len(u.Seqs), b.MaxSeqs)
		}
		for j, s := range u.Seqs {
			if len(s) > b.MaxLen {
				return fmt.Errorf("trajdb: %s: user %q: sequence %d has %d symbols, more than MaxLen = %d (apply Bound first)", name, u.ID, j+1, len(s), b.MaxLen)
			}
		}
	}
	return nil
}

// exploreCanOutput is the support both mechanisms have: every non-empty
// sequence over the alphabet of at most maxLen symbols.
func exploreCanOutput(db *DB, seq []int, maxLen int) bool {
	if len(seq) == 0 || len(seq) > maxLen || db == nil {
		return false
	}
	for _, x := range seq {
		if x < 0 || x >= db.Size {
			return false
		}
	}
	return true
}

// describeSource names src for Synthetic.Source (nil is crypto/rand).
func describeSource(src noise.Source) string {
	if src == nil {
		return "crypto"
	}
	return noise.Describe(src)
}
