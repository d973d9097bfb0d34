package cip

import (
	"fmt"
	"github.com/tracepriv/tracepriv/param"
	"strings"
)

// Method names a noise designer. Each method has one canonical string,
// used the same way in sanitize's certificates ("design"), in the reports
// of "tracepriv cip design" ("method") and on the command line; ParseMethod
// also reads the older spellings.
type Method string

// The designers DesignNoise runs.
const (
	// MethodE3 is the least total noise for one prior covariance: the
	// program (E3) of cip-math.md, solved in closed form where it has one
	// ((E2) for a single basic secret; SigmaG = c Sigma when every point is
	// a basic secret with a common target) and by the barrier method of
	// OptimalTarget and OptimalBudget otherwise. Its loss factors are exact
	// (E1) values for that prior.
	MethodE3 Method = "e3"
	// MethodProportional is noise proportional to a single-lengthscale
	// prior, SigmaG = alpha Gram(k) (a kernel design: it needs an
	// Envelope of a single-lengthscale family). It is the least noise when
	// every point is a basic secret; exact for basic secrets, a proven
	// upper bound for compound ones.
	MethodProportional Method = "proportional"
	// MethodEnvelope is noise following a spectral envelope of a prior
	// family, SigmaG = alpha Gram(k_D) with k_D dominating every member
	// (NewEnvelope, DesignFamily): one design for every lengthscale of the
	// family, with proven upper bounds on the loss factors.
	MethodEnvelope Method = "envelope"
	// MethodPaperSDPA is Meehan and Chaudhuri's SDP_A for one secret
	// (PaperSDPA), for reproductions.
	MethodPaperSDPA Method = "paper-sdp-a"
	// MethodPaperMultipleSecrets is their Algorithm 1, Multiple Secrets
	// (PaperMultipleSecrets), for reproductions.
	MethodPaperMultipleSecrets Method = "paper-multiple-secrets"
)

// Selectors: request values that DesignNoise resolves to one of the
// methods above. A design's Method is never a selector.
const (
	// MethodAuto (or "") picks MethodE3 for a prior covariance, and for a
	// prior family's envelope MethodProportional when the envelope is the
	// family's single member and MethodEnvelope otherwise.
	MethodAuto Method = "auto"
	// MethodPaper picks MethodPaperSDPA for one secret and
	// MethodPaperMultipleSecrets for several.
	MethodPaper Method = "paper"
)

// Methods returns the designers, in the order a user would try them. The
// selectors MethodAuto and MethodPaper are not listed.
func Methods() []Method {
	return []Method{MethodE3, MethodProportional, MethodEnvelope, MethodPaperSDPA, MethodPaperMultipleSecrets}
}

// Kernel reports whether m is a kernel design (the noise is a multiple of
// a stationary kernel, designed for a prior family from its envelope).
func (m Method) Kernel() bool { return m == MethodProportional || m == MethodEnvelope }

// Paper reports whether m is one of Meehan and Chaudhuri's mechanisms.
func (m Method) Paper() bool {
	return m == MethodPaper || m == MethodPaperSDPA || m == MethodPaperMultipleSecrets
}

// Describe returns one line on what m does.
func (m Method) Describe() string {
	switch m {
	case MethodE3:
		return "least total noise for one prior: (E2) for one basic secret, (E3) otherwise; exact (E1) losses"
	case MethodProportional:
		return "noise proportional to a single-lengthscale prior; the least noise when every point is a basic secret"
	case MethodEnvelope:
		return "noise following a spectral envelope of a prior family; proven upper bounds over the family"
	case MethodPaperSDPA:
		return "Meehan and Chaudhuri's SDP_A, one secret (reproductions)"
	case MethodPaperMultipleSecrets:
		return "Meehan and Chaudhuri's Algorithm 1, Multiple Secrets (reproductions)"
	case MethodAuto, "":
		return "e3 for a prior covariance; proportional or envelope for a prior family"
	case MethodPaper:
		return "paper-sdp-a for one secret, paper-multiple-secrets for several"
	}
	return "unknown"
}

// oldMethods maps the spellings earlier versions wrote to the methods.
// "optimal" was the command line's name of MethodE3; the rest are what
// "cip design" printed as its method.
var oldMethods = map[string]Method{
	"optimal":                MethodE3,
	"e3-barrier":             MethodE3,
	"optimal (e3-barrier)":   MethodE3,
	"optimal (proportional)": MethodE3,
}

// ParseMethod returns the method or selector named s (case and surrounding
// blanks ignored; "" is MethodAuto). It accepts the canonical strings of
// Methods, the selectors "auto" and "paper", and the older spellings
// "optimal", "e3-barrier", "optimal (e3-barrier)" and
// "optimal (proportional)", all of which name MethodE3.
func ParseMethod(s string) (Method, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	switch m := Method(k); m {
	case "", MethodAuto:
		return MethodAuto, nil
	case MethodPaper, MethodE3, MethodProportional, MethodEnvelope, MethodPaperSDPA, MethodPaperMultipleSecrets:
		return m, nil
	}
	if m, ok := oldMethods[k]; ok {
		return m, nil
	}
	names := []string{string(MethodAuto)}
	for _, m := range Methods() {
		names = append(names, string(m))
	}
	names = append(names, string(MethodPaper))
	return "", param.Invalid("method", fmt.Sprintf("%q", s), fmt.Sprintf("must be one of %s (or optimal, the older name of e3)", strings.Join(names, ", ")))
}
