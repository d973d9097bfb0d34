// Package sample bundles a small real trace so that the demo and the
// examples run on a fresh machine without the data set.
//
// The trace is one GeoLife file (user 000, 2008-10-24, 244 fixes at 5 s over
// 37 minutes in Beijing) from Microsoft Research's GeoLife GPS trajectories
// 1.3, released for research use; cite Zheng et al., "GeoLife: A
// collaborative social networking service among user, location and
// trajectory", IEEE Data Eng. Bull. 33(2), 2010.
package sample

import _ "embed"

// Name is the bundled trace's file name.
const Name = "geolife-000-20081024020959.plt"

// PLT is the bundled trace in GeoLife PLT format.
//
//go:embed geolife-000-20081024020959.plt
var PLT []byte

// Prior is the prior family the demo sanitises with (version 3): the
// kernels that win held-out likelihood in at least 10 % of the corpus's
// windows of up to two hours (Matérn 1/2, 3/2 and 5/2), each over the 5th
// to 95th percentile of its fitted lengthscales, with the fitting corpus's
// fingerprints and a public origin (its median position), made by
// "tracepriv fit" on the GeoLife users 001-007 (so not on the sample's own
// user); see docs/fit.md.
//
//go:embed prior.json
var Prior []byte
