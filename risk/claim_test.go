package risk

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// TestAuditClaim audits laplace at its claim: the interval must hold the
// exact RAD, the implied epsilons must be Eq. (5.60) at the measurement,
// and the family estimate must give back the measured RAD through the
// family's own exact RAD.
func TestAuditClaim(t *testing.T) {
	m, ok := LookupMechanism("laplace")
	if !ok {
		t.Fatal("no laplace")
	}
	a := Auditor{M: 4, Trials: 20000, Src: noise.Seeded(7)}
	rep, err := a.AuditClaim(m, Params{M: 4, Epsilon: 2}, "bayes")
	if err != nil {
		t.Fatal(err)
	}
	if !(rep.RADLower <= rep.ExactRAD && rep.ExactRAD <= rep.RADUpper) {
		t.Errorf("exact RAD %v outside the interval [%v, %v]", rep.ExactRAD, rep.RADLower, rep.RADUpper)
	}
	want, err := EpsilonFromRAD(rep.RAD, 4)
	if err != nil || rep.EpsilonLower == nil || math.Abs(*rep.EpsilonLower-want) > 1e-12 {
		t.Errorf("epsilon_lower %v, want %v (%v)", rep.EpsilonLower, want, err)
	}
	if rep.FamilyEstimate == nil {
		t.Fatal("no family estimate")
	}
	back, err := m.RAD(Params{M: 4, Epsilon: *rep.FamilyEstimate})
	if err != nil || math.Abs(back.RAD-rep.RAD) > 1e-6 {
		t.Errorf("RAD at the family estimate %v = %v, want the measured %v", *rep.FamilyEstimate, back.RAD, rep.RAD)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil || !strings.Contains(b.String(), "bayes attack on laplace (ε = 2, m = 4), 20000 trials") {
		t.Errorf("WriteText = %q, %v", b.String(), err)
	}
	if _, err := a.AuditClaim(Mechanism{Name: "none"}, Params{M: 4, Epsilon: 1}, "bayes"); err == nil {
		t.Error("a mechanism without Audit was audited")
	}
}
