package prior

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// TestHullRatio: a member inside the range is dominated by the hull (about
// 1 at the range's ends, within the bound's grid step); a Matérn 3/2 just above the top of a set
// that also holds long Matérn 1/2 members is dominated by the hull; a
// kernel with a heavier tail than every member's is not (+Inf); an RBF is
// never dominated by Matérn members (its peak over l at each frequency is
// higher), the negative control.
func TestHullRatio(t *testing.T) {
	fs := FamilySet{Kernels: []Family{
		{Kernel: gp.KernelMatern12, LengthscaleMin: 20, LengthscaleMax: 720000},
		{Kernel: gp.KernelMatern32, LengthscaleMin: 20, LengthscaleMax: 7200},
		{Kernel: gp.KernelMatern52, LengthscaleMin: 20, LengthscaleMax: 7200},
	}}
	for _, c := range []struct {
		kernel  string
		l       float64
		lo, hi  float64
		covered bool
	}{
		{gp.KernelMatern32, 600, 0, 1.01, true},
		{gp.KernelMatern32, 7223.2, 0, 1, true},
		{gp.KernelMatern52, 10, 1.2, math.Inf(1), false},
		{gp.KernelRBF, 300, 1.05, math.Inf(1), false},
	} {
		r, err := fs.HullRatio(c.kernel, c.l)
		if err != nil {
			t.Fatal(err)
		}
		if (r <= 1) != c.covered || r < c.lo || r > c.hi {
			t.Errorf("%s at %g s: hull ratio %v, want in [%v, %v] (covered %v)", c.kernel, c.l, r, c.lo, c.hi, c.covered)
		}
	}
	// A member at the end of its range: about 1 (the bound is conservative
	// by the grid's step, so a caller checks membership first).
	if r, _ := fs.HullRatio(gp.KernelMatern52, 20); r < 0.98 || r > 1.01 {
		t.Errorf("Matérn 5/2 at 20 s, a member: hull ratio %v, want about 1", r)
	}
	m32 := FamilySet{Kernels: []Family{{Kernel: gp.KernelMatern32, LengthscaleMin: 20, LengthscaleMax: 7200}}}
	if r, _ := m32.HullRatio(gp.KernelMatern12, 100); !math.IsInf(r, 1) {
		t.Errorf("Matérn 1/2 against Matérn 3/2 members: %v, want +Inf", r)
	}
	// Without the long Matérn 1/2 members, a Matérn 3/2 above the top is
	// not dominated (at w = 0 its density exceeds the longest member's).
	if r, _ := m32.HullRatio(gp.KernelMatern32, 7300); r <= 1 {
		t.Errorf("Matérn 3/2 at 7300 s against members up to 7200 s: %v, want > 1", r)
	}
}
