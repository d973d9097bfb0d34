// Package pipeline releases location traces with per-person certified
// conditional inferential privacy on Apache Beam, as transforms a Beam
// program composes and as the ready-made jobs of the tracepriv-pipeline
// command. Each person (uid) is released jointly over all their traces,
// by sanitize.Release on a worker, and gets a certificate: against every
// prior of a public Gaussian-process family, an adversary's belief about
// any of their points, places or route moves by at most the target
// epsilon. The noise is drawn on the workers from crypto/rand.
// SanitizeTraces groups a person's traces through the runner's shuffle,
// so the runner sees the locations, as the machine reading them does; the
// Sanitize job reads each group of people's files on the worker that
// releases them, so that only uids and counts travel.
//
//	p, s := beam.NewPipelineWithRoot()
//	traces := pipeline.ReadTraces(s, beam.CreateList(s, paths), pipeline.Reading{})
//	released, failed := pipeline.SanitizeTraces(s, traces, pipeline.SanitizeParams{
//		Prior: priorJSON, Epsilon: 1, Lambda: 2, Radius: 100, // a family tracepriv fit wrote
//	})
//	// released is a PCollection<PersonRelease>: a person's sanitised
//	// traces and their certificate; failed a PCollection<KV<string,
//	// string>>: the uid of a person who could not be released, and why.
//	if _, err := pipeline.Run(ctx, p); err != nil { ... }
//
// # Transforms and jobs
//
// The transforms take a beam.Scope and PCollections, in the style of
// privacy-on-beam's pbeam: ReadTraces turns file paths into traces,
// SanitizeTraces releases them per person, FitPrior fits a prior family
// over a corpus of other people's traces (prior.Fit, every window). They
// panic on invalid parameters at construction, as Beam's transforms do;
// SanitizeParams.Check and FitParams.Mode().Check say so first.
//
// The jobs run a whole pipeline and wait for it. Sanitize releases a
// corpus of files as the single-machine sanitize.Corpus does (mirrored
// files, a certificate per group of people sharing a file, manifest.json);
// Fit runs FitPrior's steps over files, keyed by file so that the prior
// is prior.Fit's over them byte for byte; Release releases a trajectory
// database under user-level differential privacy with trajdb's mechanisms,
// whose node counts Beam sums over persons bounded one by one. Persons
// are the person rule's (trace.PersonRule) in every job and in
// ReadTraces: a corpus's persons found to hold the same uid, in two
// folders, are joined into one by a global step over every file's uids
// (trace.JoinPersons) before any step groups by person. A seeded
// run derives each person's noise from the seed and their uid
// (noise.Derive), and a seeded trajectory database draws its noise on one
// worker from sums that do not depend on the sharding, so both are the
// same bytes however the work is sharded.
//
// The same pipeline runs in this process on Beam's Prism runner (the
// default, and what the tests use), on Flink or Spark through a portable
// job server (--runner universal), or on Google Cloud Dataflow (--runner
// dataflow). Inputs and outputs of the jobs are POSIX paths: on a cluster
// they must be on a file system every worker mounts, as outputs are
// written with an atomic rename.
//
// # Process-wide state
//
// The package changes no logging and keeps no global settings. The jobs
// tell what the launcher does to the *slog.Logger in their options (nil:
// nothing), which never leaves the launching process; the workers log
// through Beam's log package, to the runner. Beam itself is process-wide:
// beam.Init (which Run calls if the program has not) points log/slog's
// default logger at stderr, and Beam and Prism log there; a program
// configures that in its main (Beam's log.SetupLogging, or by setting
// slog's default), as the tracepriv-pipeline command does for --verbose.
// Beam also registers DoFns, coders and runner flags for the process at
// init time: this package registers gob coders for its element types and
// for trace.Trace (see the init functions), and its DoFns with the
// register package.
//
// It is a module of its own (github.com/tracepriv/tracepriv/pipeline) so
// that the library and the tracepriv command do not depend on Beam's large
// dependency tree.
package pipeline
