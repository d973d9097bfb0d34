// Package corpus is the engine of a corpus release, shared by
// sanitize.Corpus (one machine) and the Apache Beam pipeline of the nested
// module pipeline/ (many machines), so that both write the same files.
//
// A release is three steps: ScanFile learns who is in each file; GroupUnits
// joins the files that share a person into units (a global step, but over
// the small per-file lists of uids); ReleaseUnit releases one unit and
// writes its outputs and certificate together. Run chains the steps on one
// machine, units in parallel, with a journal that lets an interrupted run
// resume, and returns the caller's records of the units released. Every
// step is a pure function of its inputs and the options, and a seeded
// source gives every person a stream derived from the seed and their uid,
// so a seeded release is the same bytes however the units are spread over
// goroutines or machines.
//
// The package does not import sanitize, which imports it: the release of a
// unit's traces is a Sanitizer the caller binds to sanitize.Release and
// sanitize.WriteCertificate, and the records of a release (the manifest,
// its persons and failures, the error of a release of nobody) are package
// sanitize's, which the caller makes from what this package reports
// (UnitRelease, Config.Record, Config.Failed) and writes.
package corpus
