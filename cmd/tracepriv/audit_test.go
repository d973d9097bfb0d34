package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

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

// TestAuditSupportControlsCLI is the interface the issue fixes: at the
// default budget a negative control prints "violation": true with a
// witness, and a correct tree prints false; release offers no control.
// Every control's audit at the default budget runs once, in trajdb's
// TestAuditFlagsNegativeControls (the same report, marshalled as here);
// the command's wiring is checked on one control and one correct tree.
func TestAuditSupportControlsCLI(t *testing.T) {
	cases := []struct {
		mech      string
		violation bool
	}{
		{"flawed-present-only", true}, {"flawed-present-only-prefix", true}, {"prefix-noiseless", true},
		{"ngram-tenth-noise", true}, {"prefix", false}, {"ngram", false},
	}
	for i, tc := range cases {
		t.Run(tc.mech, func(t *testing.T) {
			if tc.mech != "flawed-present-only" && tc.mech != "prefix" {
				if tc.violation {
					releaseRefuses(t, tc.mech)
				}
				return
			}
			stdout, stderr, err := run(t, "audit", "support", "--mechanism", tc.mech, "--seed", strconv.Itoa(20+i), "--json")
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.mech, err, stderr)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(stdout), &v); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %v", tc.mech, v["verdict"])
			if v["violation"] != tc.violation {
				t.Errorf("%s: violation %v, want %v (%v)", tc.mech, v["violation"], tc.violation, v["verdict"])
			}
			if _, ok := v["witness"]; ok != tc.violation {
				t.Errorf("%s: witness present %v, want %v", tc.mech, ok, tc.violation)
			}
			if v["false_alarm_bound"] == nil || v["tests"] == nil {
				t.Errorf("%s: no false_alarm_bound or tests: %s", tc.mech, stdout)
			}
			if tc.violation {
				releaseRefuses(t, tc.mech)
			}
		})
	}
	if _, _, err := run(t, "audit", "support", "--mechanism", "nonsense"); err == nil || !strings.Contains(err.Error(), "negative control") {
		t.Errorf("unknown mechanism: %v", err)
	}
}

// releaseRefuses checks that release does not offer the negative control mech.
func releaseRefuses(t *testing.T, mech string) {
	t.Helper()
	dir := t.TempDir()
	_, _, err := run(t, "release", "--in", "../../internal/sample", "--out", filepath.Join(dir, "out"), "--mechanism", mech,
		"--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox)
	if err == nil {
		t.Errorf("release offers the control %s", mech)
	}
}
