package risk

import (
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
)

// Every entry of the table evaluates to its closed form, and its
// calibrator inverts it: the RAD at the calibrated parameter is the risk.
func TestMechanismTable(t *testing.T) {
	const m = 11
	want := map[string]float64{
		// thesis_part2 §5.3 m = 11 table at ε = 2 (five decimals).
		"grr": 0.33402, "oue": 0.20880, "ss": 0.33402, "laplace": 0.08651,
	}
	names := map[string]bool{}
	for _, mc := range Mechanisms() {
		names[mc.Name] = true
		if got, ok := LookupMechanism(mc.Name); !ok || got.Name != mc.Name {
			t.Errorf("LookupMechanism(%q) = %v, %v", mc.Name, got.Name, ok)
		}
		if mc.Doc == "" || mc.RAD == nil || mc.Calibrate == nil || mc.CalibrateBound == "" {
			t.Errorf("%s: incomplete entry %+v", mc.Name, mc)
		}
		p := Params{M: m, Steps: 100}
		switch mc.Param {
		case ParamEpsilon:
			p.Epsilon = 2
		case ParamSigma:
			p.Sigma = 3
		default:
			t.Errorf("%s: Param %q", mc.Name, mc.Param)
		}
		res, err := mc.RAD(p)
		if err != nil || res.Bound == "" || !(res.RAD > 0 && res.RAD <= res.TVBound) {
			t.Errorf("%s: RAD %+v, %v", mc.Name, res, err)
		}
		if w, ok := want[mc.Name]; ok {
			near(t, mc.Name, res.RAD, w, 5.01e-6)
		}
		// Round trip: calibrate to the RAD just computed.
		v, err := mc.Calibrate(res.RAD, p)
		if err != nil {
			t.Errorf("%s: calibrate %v: %v", mc.Name, res.RAD, err)
			continue
		}
		q := p
		if mc.Param == ParamEpsilon {
			near(t, mc.Name+" calibrated epsilon", v, 2, 1e-6)
			q.Epsilon = v
		} else {
			near(t, mc.Name+" calibrated sigma", v, 3, 1e-6)
			q.Sigma = v
		}
		back, err := mc.RAD(q)
		if err != nil {
			t.Fatal(err)
		}
		near(t, mc.Name+" round trip", back.RAD, res.RAD, 1e-9)
	}
	for _, n := range []string{"laplace", "gaussian", "grr", "oue", "ss", "dpsgd"} {
		if !names[n] {
			t.Errorf("%s is missing from the table", n)
		}
	}
	if _, ok := LookupMechanism("rappor"); ok {
		t.Error("an unknown mechanism was found")
	}
	// The Gaussian entry derives σ from (ε, δ): issue 7's known value.
	g, _ := LookupMechanism("gaussian")
	if s, err := g.SigmaFor(0.1, 0.008751768145810); err != nil || s < 10-1e-7 || s > 10+1e-7 {
		t.Errorf("gaussian SigmaFor = %v, %v, want 10", s, err)
	}
	// Bad parameters are *param.Error.
	l, _ := LookupMechanism("laplace")
	if _, err := l.RAD(Params{M: 1, Epsilon: 1}); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("m = 1: %v", err)
	}
}

// The auditable entries build the mechanisms tracepriv implements; the
// Bayes attack's interval covers the exact RAD, and the learned attack
// does not beat it by more than the interval allows.
func TestMechanismAudit(t *testing.T) {
	t.Parallel()
	n := 0
	for _, mc := range Mechanisms() {
		if mc.Audit == nil {
			continue
		}
		n++
		src := noise.Seeded(5)
		target, err := mc.Audit(Params{M: 4, Epsilon: 1, Delta: 1e-5}, src)
		if err != nil {
			t.Fatalf("%s: %v", mc.Name, err)
		}
		if (target.Sample == nil) == (target.Discrete == nil) || target.Bayes == nil || !(target.ExactRAD > 0) {
			t.Fatalf("%s: target %+v", mc.Name, target)
		}
		if (mc.Name == "gaussian") != (target.Sigma > 0) {
			t.Errorf("%s: sigma %v", mc.Name, target.Sigma)
		}
		a := Auditor{M: 4, Trials: 30000, Src: src}
		for _, attack := range []string{"bayes", "learned"} {
			res, err := a.Audit(target, attack)
			if err != nil {
				t.Fatalf("%s %s: %v", mc.Name, attack, err)
			}
			if attack == "bayes" && (res.Attack != "bayes" || res.RADLower > target.ExactRAD || res.RADUpper < target.ExactRAD) {
				t.Errorf("%s bayes: [%v, %v] does not cover the exact RAD %v", mc.Name, res.RADLower, res.RADUpper, target.ExactRAD)
			}
			if attack == "learned" && res.RADLower > target.ExactRAD {
				t.Errorf("%s learned: lower end %v above the exact RAD %v", mc.Name, res.RADLower, target.ExactRAD)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d auditable mechanisms, want laplace, gaussian and grr", n)
	}
	if _, err := (Auditor{M: 4, Trials: 10}).Audit(AuditTarget{}, "guess"); err == nil {
		t.Error("unknown attack accepted")
	}
}
