// Package pipeline runs tracepriv's corpus jobs on Apache Beam: releasing a
// corpus of location traces with per-person certified conditional
// inferential privacy (Sanitize), fitting a Gaussian-process prior family
// over a corpus (Fit), and releasing a trajectory database under
// user-level differential privacy (Release). The same pipeline runs in this
// process on Beam's Prism runner (the default, and what the tests use), on
// Flink or Spark through a portable job server (--runner universal), or on
// Google Cloud Dataflow (--runner dataflow).
//
// The pipelines reuse the core packages' building blocks, so that their
// results are the single-machine commands' results: sanitize.ScanFile,
// GroupUnits, ReleaseUnit and Manifest for a corpus release; prior.Windows,
// FitWindow and Combine for a fit; trajdb.FromTraces, Bound and the Prefix
// and NGram mechanisms for a trajectory database, whose node counts Beam
// sums over persons bounded one by one. A seeded corpus release derives
// each person's noise from the seed and their uid (noise.Derive), and a
// seeded trajectory database draws its noise on one worker from sums that
// do not depend on the sharding, so both are the same bytes however the
// work is sharded; unseeded runs draw from crypto/rand on the workers.
//
// It is a module of its own (github.com/tracepriv/tracepriv/pipeline) so
// that the library and the tracepriv command do not depend on Beam's large
// dependency tree.
//
// Beam's Go SDK registers DoFns, coders and runner flags globally at init
// time; the pipelines' element types are registered with gob coders (see
// the init functions) and their DoFns with the register package. Inputs and
// outputs are POSIX paths: on a cluster they must be on a file system
// every worker mounts, as outputs are written with an atomic rename.
package pipeline
