package risk

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// ClaimAudit is the audit of a mechanism's privacy claim by a
// reconstruction attack (AuditClaim): the measured RAD with its interval,
// and what it implies. It is the JSON of "tracepriv audit".
type ClaimAudit struct {
	Mechanism string   `json:"mechanism"`
	Epsilon   float64  `json:"epsilon"`
	Sigma     *float64 `json:"sigma,omitempty"`
	AuditResult
	// ExactRAD is the mechanism's exact RAD (Theorem 5.3) at its claimed
	// parameter: an audit whose interval lies above it refutes the claim.
	ExactRAD float64 `json:"exact_rad"`
	// EpsilonLower is Eq. (5.60) at the measured RAD, and
	// EpsilonLowerConservative at the interval's lower end: any ε-DP
	// mechanism with a smaller ε would have a smaller RAD. Null when the
	// RAD is at the bound's supremum.
	EpsilonLower             *float64 `json:"epsilon_lower"`
	EpsilonLowerConservative *float64 `json:"epsilon_lower_conservative"`
	// FamilyEstimate inverts the mechanism family's own exact RAD at the
	// measured RAD (the thesis's audit of a known mechanism): the ε
	// (laplace, grr) or σ (gaussian) a mechanism of that family would need
	// to show this RAD. Null when the RAD is not positive or at the supremum.
	FamilyEstimate *float64 `json:"family_estimate"`
	FamilyParam    string   `json:"family_param"`
	Source         string   `json:"source"`
}

// AuditClaim builds m at its claimed p (p.M, p.Epsilon, p.Delta) with the
// auditor's randomness and runs attack ("bayes" or "learned", as Audit)
// against it. m must have an Audit (the mechanisms tracepriv implements).
func (a Auditor) AuditClaim(m Mechanism, p Params, attack string) (*ClaimAudit, error) {
	if m.Audit == nil {
		return nil, fmt.Errorf("risk: %s cannot be audited: tracepriv does not implement it", m.Name)
	}
	if a.Src == nil {
		a.Src = noise.Secure()
	}
	rep := &ClaimAudit{Mechanism: m.Name, Epsilon: p.Epsilon, Source: noise.Describe(a.Src)}
	target, err := m.Audit(p, a.Src)
	if err != nil {
		return nil, err
	}
	if target.Sigma != 0 {
		rep.Sigma = &target.Sigma
	}
	rep.ExactRAD = target.ExactRAD
	res, err := a.Audit(target, attack)
	if err != nil {
		return nil, err
	}
	rep.AuditResult = res
	if res.RAD > 0 {
		// The family's own exact RAD, inverted at the measurement.
		rep.FamilyParam = m.Param
		if v, err := m.Calibrate(res.RAD, Params{M: p.M}); err == nil {
			rep.FamilyEstimate = &v
		}
	}
	point, cons, err := res.EpsilonLower()
	if err != nil && !errors.Is(err, ErrNotInvertible) {
		return nil, err
	}
	if !math.IsInf(point, 0) {
		rep.EpsilonLower = &point
	}
	if !math.IsInf(cons, 0) {
		rep.EpsilonLowerConservative = &cons
	}
	return rep, nil
}

// WriteText writes the audit for people: the measurement, the exact RAD
// beside it, and the parameters it implies.
func (r *ClaimAudit) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s attack on %s (ε = %g, m = %d), %d trials, source %s\n", r.Attack, r.Mechanism, r.Epsilon, r.M, r.Trials, r.Source)
	fmt.Fprintf(w, "empirical RAD %.5f, %g%% Clopper-Pearson interval [%.5f, %.5f]; exact RAD %.5f\n",
		r.RAD, 100*r.Confidence, r.RADLower, r.RADUpper, r.ExactRAD)
	if r.FamilyEstimate != nil {
		fmt.Fprintf(w, "a %s mechanism with this RAD has %s %.4f\n", r.Mechanism, r.FamilyParam, *r.FamilyEstimate)
	}
	if r.EpsilonLower != nil && r.EpsilonLowerConservative != nil {
		_, err := fmt.Fprintf(w, "any ε-DP mechanism with this RAD has ε ≥ %.4f (point), ≥ %.4f (at the interval's lower end)\n", *r.EpsilonLower, *r.EpsilonLowerConservative)
		return err
	}
	return nil
}
