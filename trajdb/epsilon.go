package trajdb

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// MinEpsilon is the smallest epsilon a release accepts. Below it every
// noisy count's scale exceeds a thousand times its sensitivity, so the
// counts are noise: the synthetic database grows like 1/epsilon (189,301
// trajectories for the 3 persons of internal/sample at 0.001 with the
// n-gram tree, over a minute at 0.0001, no end at 1e-300) and carries
// nothing of the data.
const MinEpsilon = 1e-3

// CheckEpsilon returns a *param.Error named "epsilon" unless epsilon is a
// budget a release can spend: finite and at least MinEpsilon.
func CheckEpsilon(epsilon float64) error {
	if !(epsilon > 0) || math.IsInf(epsilon, 1) {
		return param.Invalid("epsilon", epsilon, "must be positive and finite, e.g. 1")
	}
	if epsilon < MinEpsilon {
		return param.Invalid("epsilon", epsilon, fmt.Sprintf("must be at least %g: below it the noise swamps every count and the release grows like 1/epsilon without telling anything of the data (give at least %g)", MinEpsilon, MinEpsilon))
	}
	return nil
}

// MaxNoiseRatio is the largest MaxSeqs·MaxLen/ε a release accepts: that
// of the default bounds at MinEpsilon. Both trees' noise per count grows
// with it (the prefix tree's sensitivity MaxSeqs at ε/MaxLen per level,
// the n-gram tree's MaxSeqs·MaxLen), and the synthetic database with the
// noise: beyond it a release is noise, and bounds such as --max-len 1e11
// at ε = 1 exhausted the memory of the machine.
const MaxNoiseRatio = 5 * 10 / MinEpsilon

// CheckEpsilon is the package's CheckEpsilon for a release under b: the
// bounds are positive and MaxSeqs·MaxLen/epsilon at most MaxNoiseRatio
// (a *param.Error named "bounds" otherwise).
func (b Bounds) CheckEpsilon(epsilon float64) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if err := CheckEpsilon(epsilon); err != nil {
		return err
	}
	if r := float64(b.MaxSeqs) * float64(b.MaxLen) / epsilon; r > MaxNoiseRatio {
		return param.Invalid("bounds", fmt.Sprintf("max_seqs %d, max_len %d at epsilon %g", b.MaxSeqs, b.MaxLen, epsilon),
			fmt.Sprintf("the noise of every count grows with max_seqs·max_len/epsilon = %.3g, over the %g a release carries (the default bounds, 5 and 10, at the smallest epsilon %g); beyond it the synthetic database is noise and grows without bound: give smaller bounds or a larger epsilon", r, MaxNoiseRatio, MinEpsilon))
	}
	return nil
}
