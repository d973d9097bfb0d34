// Package trajdb releases whole trajectory databases under user-level
// differential privacy, measures what a release keeps of the real data,
// and audits mechanisms that claim to be private.
//
// Bound each person's contribution with public bounds, then release with a
// mechanism chosen by its typed name:
//
//	b := trajdb.DefaultBounds() // 5 trajectories of 10 cells per person
//	m, err := trajdb.NewMechanism(trajdb.MechanismNGram, b, 0)
//	...
//	bounded, err := trajdb.Bound(db, b)
//	rel, err := m.Synthesize(bounded, epsilon, nil) // nil: crypto/rand
//	cert := trajdb.NewCertificate(m, rel, epsilon, grid, grid.Size(), trajdb.MapOptions{}, nil)
//	paths, err := trajdb.WriteSynthesis(dir, cert, 0)
//
// The package holds four things:
//
//   - mechanisms: Prefix and NGram (MechanismPrefix, MechanismNGram), their
//     Synthetic output and release Certificate, and SynthesizeSequences, which
//     counts a large sequence file as it reads it;
//   - metrics: Evaluate and Evaluator measure a release against the real
//     database (Metrics), beside the references UniformSequences and
//     NonPrivateBaseline; Compare measures all three at once (a
//     Comparison, what "tracepriv evaluate" prints), and
//     ReadReleasedSequences reads a release back;
//   - audits: AuditSupport searches neighbouring databases for a violation
//     of a mechanism's claim, MeasureQIAttack measures the home/work
//     quasi-identifier attack's advantage against it, AuditNoise tests a
//     tree's noise exactly against the noise it states (AuditSupport runs
//     it too), NewNegativeControl builds the broken mechanisms the audits
//     must flag and NewWeakened the trees with a fraction of their noise;
//   - input and output: a Grid over a public trace.BBox, FromTraces and
//     FromFiles (traces to cell sequences), ToTraces, sequence files
//     (ReadSequences, WriteSequences) and release directories
//     (WriteSynthesis, ReadSynthesis).
//
// # Data model
//
// A trajectory database is a multiset of sequences over a finite location
// universe: the cells of a Universe (a grid over a public bounding box, never
// derived from the data), or any alphabet of symbols (station ids, POI
// categories) for symbolic sequence databases. Each sequence belongs to a
// person (User); time is not kept (the exploration-tree mechanisms discard
// it, as their papers do).
//
// # Privacy unit
//
// Neighbouring databases differ in one person: all of their sequences are
// added or removed (user-level, unbounded DP). Contribution is bounded before
// anything is counted: each person keeps at most MaxSeqs sequences, each
// truncated to MaxLen symbols (Bound), so a person changes a prefix tree's
// level counts by at most MaxSeqs in total and an n-gram level by at most
// MaxSeqs·MaxLen; the mechanisms calibrate their noise to that.
//
// # Why the support matters
//
// Guerra-Balboa's thesis (Propositions 3.5 and 3.6) shows that a mechanism
// whose output can contain only sequences present in its input is not DP for
// any epsilon: removing the person who holds a sequence makes every output
// containing it impossible. The exploration-tree mechanisms avoid this by
// perturbing the count of every child of every expanded node over the whole
// universe, zero counts included, so the set of possible outputs does not
// depend on the data. Mechanism.CanOutput states each mechanism's support,
// and AuditSupport searches neighbouring databases for an output one makes
// possible and the other impossible, and, since a mechanism can claim the
// right support and still leak, for events on the releases' counts whose
// frequencies on fresh releases prove a loss above epsilon (at most a 5 %
// chance of a false alarm on a DP mechanism). NewNegativeControl builds
// the broken mechanisms it must flag; NewMechanism never offers them.
package trajdb
