package prior

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// window builds a hand-made compared window of person uid won by best at
// the given east and north lengthscales (every kernel of singleKernels
// fitted at them; only the winner matters to coverage).
func window(uid, best string, east, north float64, censored bool) WindowFit {
	f := WindowFit{UID: uid, Best: best, DurationS: 3600, Points: 100}
	for _, k := range singleKernels {
		kf := KernelFit{Kernel: k, LengthscaleS: [2]float64{east, north}, VarianceM2: [2]float64{500, 500}, BoundS: 360000,
			Censored: [2]bool{censored, censored}}
		if k == best {
			kf.HeldOut = 1
		}
		f.Kernels = append(f.Kernels, kf)
	}
	return f
}

// TestLeaveOnePersonOut checks the held-out coverage on windows made by
// hand, so that the expected share is derived independently: the family
// of each fold is the kernels that won at least 10 % of the other persons'
// windows, from 20 s (the fixes' spacing) to the 95th percentile of their
// fits raised to the longest window (3600 s). Negative controls: a window
// won by a kernel no other person's windows make a family member, or at a
// lengthscale above the others' range, is not covered and lowers the
// share; a fit below the spacing counts at it (covered), a censored one at
// the longest bound (covered only by a family reaching it); a non-member
// dominated by the members' spectral hull is covered.
func TestLeaveOnePersonOut(t *testing.T) {
	opt := config{Kernels: singleKernels}
	var fits []WindowFit
	for _, u := range []string{"a", "b", "c"} {
		for i := range 4 {
			fits = append(fits, window(u, gp.KernelMatern32, 300+50*float64(i), 400, false))
		}
	}
	// Person d: one window each won by Matérn 3/2 below the spacing
	// (covered), by the RBF (no other person's family has it), by Matérn
	// 3/2 at 9000 s (above 3600 s, the others' top), and by Matérn 3/2
	// censored (counted at 100 x 2 h, above the others' top).
	fits = append(fits,
		window("d", gp.KernelMatern32, 3, 500, false),
		window("d", gp.KernelRBF, 300, 300, false),
		window("d", gp.KernelMatern32, 9000, 400, false),
		window("d", gp.KernelMatern32, 1e6, 1e6, true))
	c, err := LeaveOnePersonOut(fits, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Folds a-c: their windows (300-450 s by 400 s) lie in the family of
	// the others' fits (20 s up). Fold d: the others' 24 fits lie in
	// 300-450 s, so the family is Matérn 3/2 from 20 s to the longest
	// window, 3600 s; only d's first window (3 s, counted at 20 s, and
	// 500 s) is in it.
	if c.Persons != 4 || c.Windows != 16 || c.Covered != 13 || math.Abs(c.Share-13.0/16) > 1e-12 {
		t.Errorf("coverage %+v, want 13 of 16 windows over 4 persons", c)
	}
	for _, u := range c.Uncovered {
		if u.UID != "d" {
			t.Errorf("uncovered window of person %s: %+v", u.UID, u)
		}
	}
	// The family of person d's fold, directly.
	fs := FamilySet{Kernels: []Family{{Kernel: gp.KernelMatern32, LengthscaleMin: 20, LengthscaleMax: 3600}}}
	for i, want := range []bool{true, false, false, false} {
		if got := Covers(fs, fits[12+i], opt); got != want {
			t.Errorf("window %d of d: covered %v, want %v", i, got, want)
		}
	}
	// A family reaching 100 x 2 h covers the censored window.
	fs.Kernels[0].LengthscaleMax = 720000
	if !Covers(fs, fits[15], opt) {
		t.Error("a family reaching the longest bound does not cover a censored window")
	}
	// Not a member, but dominated by the members' spectral hull: the same
	// Matérn 3/2 above the top is covered once long Matérn 1/2 members
	// hold the low frequencies and Matérn 5/2 members the middle ones (as on GeoLife, 7223 s against 7200 s).
	hull := FamilySet{Kernels: []Family{{Kernel: gp.KernelMatern12, LengthscaleMin: 20, LengthscaleMax: 720000},
		{Kernel: gp.KernelMatern32, LengthscaleMin: 20, LengthscaleMax: 7200}, {Kernel: gp.KernelMatern52, LengthscaleMin: 20, LengthscaleMax: 7200}}}
	if !Covers(hull, window("d", gp.KernelMatern32, 7223.2, 400, false), opt) {
		t.Error("a Matérn 3/2 at 7223 s, dominated by the hull of the Matérn members, is not covered")
	}
	if Covers(hull, fits[13], opt) {
		t.Error("an RBF window is covered by Matérn members")
	}
	// Negative control: a family without the winning kernel covers none
	// of the others' windows.
	if Covers(FamilySet{Kernels: []Family{{Kernel: gp.KernelMatern52, LengthscaleMin: 20, LengthscaleMax: 1e6}}}, fits[0], opt) {
		t.Error("a family without the window's winning kernel covers it")
	}
	if _, err := LeaveOnePersonOut(fits[:4], opt); err == nil {
		t.Error("one person: held-out coverage measured")
	}
}
