// Package sample bundles the data the demo, the examples and the tests run
// on without any data set: the prior family the demo sanitises with and a
// small synthetic corpus of made-up people. Go programs get both through
// the public package github.com/tracepriv/tracepriv/sample.
//
// The corpus is synthetic, so the project may redistribute it: routes of
// three made-up people (synth-1, synth-2, synth-3) in Beijing with stays
// at home, at a café and on a walk, plus a draw of the prior's nominal member
// and a little white GPS noise, logged every 1 to 5 seconds. It is written
// by a seeded generator (package synth, seed synth.Seed): run
// "go generate ./internal/sample" to rewrite it. No file comes from
// GeoLife, whose licence forbids redistributing its data; see
// docs/datasets.md for every data set's provenance and licence.
package sample

//go:generate go run ./gen -out .

import "embed"

// Name is the demo trace's file name: synth-1's morning commute (a stay at
// home, a walk, a bus), 268 fixes at 5 s over 23 minutes.
const Name = "commute.plt"

// UID is the demo trace's person.
const UID = "synth-1"

// Path is the demo trace's path below this directory (slash-separated).
const Path = UID + "/" + Name

// PLT is the demo trace in PLT format.
//
//go:embed synth-1/commute.plt
var PLT []byte

// Corpus holds every trace of the synthetic corpus as
// "PERSON/NAME.plt" (the directory names the person when the sample
// directory is read as a corpus, trace.PersonRule), the demo trace
// included.
//
//go:embed synth-*/*.plt
var Corpus embed.FS

// Prior is the prior family the demo sanitises with (version 4): the
// kernels that win held-out likelihood in at least 10 % of the corpus's
// windows of up to two hours (Matérn 1/2, 3/2 and 5/2), each over the 5th
// to 95th percentile of its fitted lengthscales, made by "tracepriv fit" on
// the GeoLife users 001-007 (so it describes real movement but holds
// nothing of any one trace; its private corpus index is not shipped:
// go run ./gen -index GEOLIFE builds it);
// see docs/fit.md. Its origin is the published centre of Beijing, not a
// statistic of the data.
//
//go:embed prior.json
var Prior []byte
