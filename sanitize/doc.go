// Package sanitize releases location traces with conditional inferential
// privacy (Meehan and Chaudhuri) against a public family of Gaussian-process
// priors, and writes what it promises as a certificate.
//
// A release adds correlated Gaussian noise to every point of a person's
// traces, jointly over all of them, and returns the noisy traces with a
// Certificate. For every secret of the person — every point moved by up to
// Options.Radius metres, every place (any contiguous window of points moved
// rigidly) and the route (all points moved rigidly) — an adversary whose
// prior is any member of the family changes its belief by at most
// Options.Epsilon in Rényi divergence of order Options.Lambda. The
// certificate states what that covers (Certificate.SecretClasses), what it
// does not, and what it means to a person (Certificate.Meaning: the best
// guess between two places Radius apart).
//
//	prior, err := prior.Read(f) // a family fitted by tracepriv fit on other people's traces
//	if err != nil { ... }
//	outs, cert, err := sanitize.Release(traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100})
//	if err != nil { ... }
//	fmt.Println(cert.EpsilonMax, cert.Meaning.Text)
//
// # What is public
//
// The prior family, the timestamps and the person's id are public; the
// noise depends on nothing else. No origin or grid is taken from the data:
// the noise is added to each point's Earth-centred coordinates (x, y, z,
// Dims) and the noisy point is projected back to the surface, so a person
// who travels is released like one who stays in a city. Noise comes from
// crypto/rand (Options.Source nil) and is drawn exactly on a 2^-10 m
// lattice (OutputGrid), so no output depends on the input's low-order bits;
// a seeded source makes the certificate say "private": false.
//
// # Entry points
//
// Release (one certificate for all the traces, per person; README.md's
// entry point) and Trace (one trace) work in memory (ReleaseContext stops when its context
// ends); Prepare certifies a release from the public part of its traces
// alone (PublicOf: uids, names, timestamps) and Prepared.Draw then draws
// once from that design, so that the exact certificate can be charged
// before anything is drawn (device.PlanRelease); Files.Write writes a
// release and its certificate atomically,
// together or not at all; NewStream releases a CSV too large for memory in
// two passes; Corpus releases a directory of traces, people grouped across
// files, with a manifest and a journal to resume from; Design exposes the
// noise design alone. Options.Check validates options before any data is
// read.
//
// Two choices are typed. Options.Design is the designer, a cip.Method
// (DesignAuto, DesignEnvelope, DesignProportional, DesignE3: the names
// "tracepriv cip design" uses). Options.Path is how the noise is computed:
// PathLinear draws it in O(n) time and memory by a Kalman-type recursion
// over the noise's state-space components, PathDense forms the covariance
// for small inputs, and PathAuto (the default) picks the linear path
// whenever the noise has a state-space form. The certificate and the
// command line call it "path" too.
//
// The design and its proofs are in docs/robust-cip.md and docs/cip-math.md;
// each certificate field is documented on Certificate.
package sanitize
