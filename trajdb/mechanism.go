package trajdb

import (
	"fmt"
	"strings"

	"github.com/tracepriv/tracepriv/noise"
)

// MechanismName names what produced a released database, as certificates,
// reports and the command line spell it: a release mechanism
// (MechanismPrefix, MechanismNGram: the only names NewMechanism accepts),
// a reference release (BaselineUniform, BaselineNonPrivate) or a negative
// control of the audits (NegativeControls).
type MechanismName string

// The release mechanisms.
const (
	// MechanismPrefix is the prefix tree (Prefix).
	MechanismPrefix MechanismName = "prefix"
	// MechanismNGram is the n-gram tree (NGram).
	MechanismNGram MechanismName = "ngram"
)

// joinNames joins names with sep, for messages.
func joinNames(names []MechanismName, sep string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, sep)
}

// Mechanism releases a synthetic trajectory database.
type Mechanism interface {
	// Name identifies the mechanism (MechanismPrefix, MechanismNGram,
	// a negative control).
	Name() MechanismName
	// Synthesize returns a synthetic database drawn from db (already bounded
	// by the caller with Bound and the mechanism's Bounds), spending at
	// most epsilon under user-level DP. src nil means crypto/rand.
	Synthesize(db *DB, epsilon float64, src noise.Source) (*Synthetic, error)
	// CanOutput reports whether a release from db can contain the
	// sequence seq (with positive probability): the mechanism's support,
	// stated so that AuditSupport can check it. A DP mechanism's answer
	// does not depend on db.
	CanOutput(db *DB, seq []int) bool
	// Bounds is the contribution bounding the mechanism's noise is
	// calibrated to.
	Bounds() Bounds
}

// Synthetic is a synthetic database with what its release spent.
type Synthetic struct {
	Mechanism MechanismName `json:"mechanism"`
	// Seqs are the released sequences (released data has no persons).
	Seqs [][]int `json:"-"`
	// Levels records, per tree level (or step), the epsilon spent and the
	// nodes whose counts were perturbed.
	Levels []Level `json:"levels"`
	// EpsilonSpent is the guarantee: every person's privacy loss is at
	// most this epsilon, the one to compose with other releases.
	EpsilonSpent float64 `json:"epsilon_spent"`
	// WorstPathEpsilon is the sum of Levels' Epsilon: the prefix tree's
	// levels, or the budget spent along the n-gram tree's most expensive
	// root-to-leaf path. It is at most EpsilonSpent (the float sum
	// included), and below it only when no n-gram path reached a leaf: an
	// after-the-fact figure of this output, not a guarantee.
	WorstPathEpsilon float64 `json:"worst_path_epsilon"`
	// Reconstruction names how an n-gram release turned grams into
	// sequences (see NGram); empty for the prefix tree.
	Reconstruction Reconstruction `json:"reconstruction,omitempty"`
	// Nodes is the number of noisy counts drawn.
	Nodes int `json:"nodes"`
	// Source names the randomness: "crypto" (crypto/rand), or "seeded:N"
	// for a seeded run, which carries no privacy guarantee against anyone
	// who knows the seed. Empty if the mechanism does not say.
	Source string `json:"source,omitempty"`
}

// Level is one level of an exploration tree.
type Level struct {
	Depth   int     `json:"depth"`
	Epsilon float64 `json:"epsilon"`
	// Scale is the noise scale (sensitivity/epsilon) of the level's
	// counts, Nodes how many counts it perturbed and Threshold the count
	// below which a node is not expanded.
	Scale     float64 `json:"scale"`
	Nodes     int     `json:"nodes"`
	Threshold float64 `json:"threshold"`
	// EpsilonMax is set when the budget varies from node to node at this
	// depth (the n-gram tree's adaptive allocation): the largest budget of
	// a node here. Epsilon, Scale and Threshold are then those of this
	// depth's node on the root-to-leaf path that spends the most, so the
	// Epsilons sum to WorstPathEpsilon.
	EpsilonMax float64 `json:"epsilon_max,omitempty"`
	// ScaleMin, with EpsilonMax, is the smallest noise scale of a count at
	// this depth (sensitivity/EpsilonMax).
	ScaleMin float64 `json:"scale_min,omitempty"`
}

// String describes the level as the release ran it: for an adaptive
// depth the path's budget and the range of the nodes', and for a depth
// the most expensive path does not reach (Epsilon 0, though its counts
// were drawn) the nodes' largest budget and smallest noise scale.
func (l Level) String() string {
	switch {
	case l.Nodes == 0:
		return fmt.Sprintf("level %d: no counts (the tree stopped above this level)", l.Depth)
	case l.Epsilon == 0 && l.EpsilonMax > 0:
		return fmt.Sprintf("level %d: epsilon up to %.4g a node, noise scale from %.4g, %d counts (the budget adapts node by node; the most expensive path ends above this level)",
			l.Depth, l.EpsilonMax, l.ScaleMin, l.Nodes)
	}
	if l.EpsilonMax > l.Epsilon {
		return fmt.Sprintf("level %d: %d counts; on the most expensive path epsilon %.4g, noise scale %.4g, threshold %.4g; at a node epsilon up to %.4g (noise scale from %.4g)",
			l.Depth, l.Nodes, l.Epsilon, l.Scale, l.Threshold, l.EpsilonMax, l.ScaleMin)
	}
	return fmt.Sprintf("level %d: epsilon %.4g, noise scale %.4g, %d counts, threshold %.4g", l.Depth, l.Epsilon, l.Scale, l.Nodes, l.Threshold)
}
