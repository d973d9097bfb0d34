// Package noise holds tracepriv's randomness and its noise samplers.
//
// Every sampler draws from a Source. Secure (crypto/rand) is the default
// everywhere; Seeded gives reproducible streams for tests and experiments and
// is reported as such by Describe.
package noise
