// Package corpus is the engine of a corpus release, shared by
// sanitize.Corpus (one machine) and the Apache Beam pipeline of the nested
// module pipeline/ (many machines), so that both write the same files.
//
// A release is three steps: ScanFile learns who is in each file; GroupUnits
// joins the files that share a person into units (a global step, but over
// the small per-file lists of uids); ReleaseUnit releases one unit and
// writes its outputs and certificate together. A Manifest collects the
// units' records and is written last (WriteManifest). Run chains the steps
// on one machine, units in parallel, with a journal that lets an
// interrupted run resume. Every step is a pure function of its inputs and
// the options, and a seeded source gives every person a stream derived from
// the seed and their uid, so a seeded release is the same bytes however the
// units are spread over goroutines or machines.
//
// The package does not import sanitize, which imports it: the release of a
// unit's traces is a Sanitizer the caller binds to sanitize.Release and
// sanitize.WriteCertificate, and the manifest lists each person as the
// certificate written for them states them (uid, points, epsilon_max).
// sanitize.Manifest is the public type a manifest is read into; Manifest
// here is the one that writes it, and a test in package sanitize keeps the
// two field for field alike.
package corpus
