package repro

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trajdb"
)

// checkChapter3 checks what the reproduction must show: the flawed control
// (first) has an infinite loss, a support violation with a witness and an
// attack beyond epsilon; every other mechanism has none of these; every
// broken tree is flagged by the auditor.
func checkChapter3(t *testing.T, res *Chapter3Result) {
	t.Helper()
	for _, s := range res.Summary {
		t.Log(s)
	}
	if len(res.Prop35) < 2 || len(res.Prop36) != len(res.Prop35) || len(res.QIAttack) == 0 {
		t.Fatalf("parts missing: %d, %d, %d", len(res.Prop35), len(res.Prop36), len(res.QIAttack))
	}
	fl := res.Prop35[0]
	if fl.Mechanism != "flawed-present-only" || !fl.LossInfinite || fl.With == 0 || fl.Without != 0 || fl.CanOutputWithout || fl.ClosedFormWith == nil {
		t.Fatalf("Prop 3.5 on the flawed control: %+v", fl)
	}
	// The flawed control's frequency matches its closed form.
	p, n := *fl.ClosedFormWith, float64(fl.Draws)
	if z := (fl.ProbWith - p) / math.Sqrt(p*(1-p)/n); math.Abs(z) > 4.5 {
		t.Fatalf("flawed control releases the victim in %.4f of draws, closed form %.4f (z = %.1f)", fl.ProbWith, p, z)
	}
	if a := res.Prop36[0]; !a.Violation || a.Witness == nil || a.Witness.Kind != "support" {
		t.Fatalf("Prop 3.6 on the flawed control: %+v", a)
	}
	for _, at := range res.QIAttack {
		if flawed := at.Mechanism == "flawed-present-only"; at.ExceedsDP != flawed {
			t.Errorf("attack on %s at epsilon %g: exceeds the DP bound %v", at.Mechanism, at.Epsilon, at.ExceedsDP)
		}
	}
	for i := 1; i < len(res.Prop35); i++ {
		s, a := res.Prop35[i], res.Prop36[i]
		if s.LossInfinite || !s.CanOutputWithout || s.EpsilonLower > res.Epsilon {
			t.Errorf("Prop 3.5 on %s: %+v", s.Mechanism, s)
		}
		if a.Violation || !a.SupportModelSound {
			t.Errorf("Prop 3.6 on %s: %s %+v", a.Mechanism, a.Verdict, a.Witness)
		}
	}
	if len(res.Controls) != len(trajdb.NegativeControls())-1 {
		t.Fatalf("%d control audits", len(res.Controls))
	}
	for _, c := range res.Controls {
		if !c.Violation || c.Witness == nil || c.Witness.Kind != "statistical" {
			t.Errorf("control %s not flagged from its counts: %s", c.Mechanism, c.Verdict)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"prop3_5", "prop3_6", "audit_controls", "qi_attack", "database", "summary"} {
		if v[k] == nil {
			t.Fatalf("JSON lacks %q", k)
		}
	}
}

func TestReproduceChapter3(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("audits seven mechanisms")
	}
	res, err := ReproduceChapter3(Chapter3Options{
		Epsilon: 1, Draws: 400,
		Audit:          Chapter3QuickAudit(),
		Attack:         trajdb.QIAttackOptions{Victims: 25, Draws: 12},
		AttackEpsilons: []float64{1},
		Src:            noise.Seeded(43),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkChapter3(t, res)
	names := []trajdb.MechanismName{}
	for _, s := range res.Prop35 {
		names = append(names, s.Mechanism)
	}
	if want := []trajdb.MechanismName{trajdb.ControlPresentOnly, trajdb.MechanismPrefix, trajdb.MechanismNGram}; !slices.Equal(names, want) {
		t.Fatalf("mechanisms %v, want %v", names, want)
	}
	// A correct tree releases the victim's sequence without the victim too
	// (its zero count is perturbed like any other).
	if s := res.Prop35[1]; s.Without == 0 {
		t.Fatalf("the prefix tree never released the victim's sequence without the victim: %+v", s)
	}
}

// Chapter3SmallAudit at 300 draws is Chapter3QuickAudit with the defaults
// it keeps written out (trajdb.AuditOptions' documented defaults), and
// smaller sizes scale every budget down, none to zero (zero would mean the
// default, the largest budget).
func TestChapter3SmallAudit(t *testing.T) {
	q := Chapter3QuickAudit()
	q.RandomCandidates, q.RefineNeighbours, q.RefineDraws, q.ConfirmNeighbours = 32, 8, 400, 2
	if a, err := Chapter3SmallAudit(300); err != nil || !reflect.DeepEqual(a, q) {
		t.Errorf("300 draws: %+v, %v; want %+v", a, err, q)
	}
	a, err := Chapter3SmallAudit(30)
	if err != nil {
		t.Fatal(err)
	}
	want := trajdb.AuditOptions{Draws: 30, NeighbourDraws: 6, MaxRemovals: 1, MaxAdditions: 2, RandomCandidates: 4,
		RefineNeighbours: 1, RefineDraws: 40, ConfirmNeighbours: 1, ConfirmDraws: 300}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("30 draws: %+v, want %+v", a, want)
	}
	if _, err := Chapter3SmallAudit(0); err == nil {
		t.Error("0 draws: no error")
	}
}
