package main

import "testing"

func TestAuditCLI(t *testing.T) {
	for _, mech := range []string{"grr", "laplace", "gaussian"} {
		v := riskRunJSON(t, "audit", "--mechanism", mech, "--epsilon", "1", "--m", "4", "--trials", "40000", "--seed", "9")
		exact := riskNum(t, v, "exact_rad")
		lo, hi := riskNum(t, v, "rad_lower"), riskNum(t, v, "rad_upper")
		if !(lo <= exact && exact <= hi) {
			t.Errorf("%s: exact RAD %v outside [%v, %v]", mech, exact, lo, hi)
		}
		if v["source"] != "seeded:9" || v["attack"] != "bayes" || v["interval"] != "clopper-pearson" {
			t.Errorf("%s: report %v", mech, v)
		}
		if e := riskNum(t, v, "epsilon_lower_conservative"); e > 1 {
			t.Errorf("%s: conservative ε lower bound %v above the true ε = 1", mech, e)
		}
	}
	v := riskRunJSON(t, "audit", "--mechanism", "laplace", "--epsilon", "1", "--m", "3", "--trials", "20000", "--seed", "9", "--attack", "learned")
	if v["attack"] != "histogram-map" {
		t.Errorf("learned attack: %v", v["attack"])
	}
	if err := riskRunErr(t, "audit", "--mechanism", "oue", "--epsilon", "1", "--m", "3"); err == nil {
		t.Error("unsupported mechanism accepted")
	}
}
