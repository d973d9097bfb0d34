package prior

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/param"
)

// Coverage is how well a fitted family covers windows it was not fitted
// on, measured leaving one person out: for each person of the corpus, the
// family is chosen (as Fit chooses it) from the other persons' windows,
// and each of the person's windows is covered when the family holds that
// window's own preferred kernel (Covers). Share is what a prior records as
// FamilySet.HeldOutCoverage (docs/fit.md, "Held-out coverage").
type Coverage struct {
	// Share is Covered over Windows.
	Share float64 `json:"share"`
	// Windows is the number of held-out windows scored (every fitted
	// window of every fold), Covered how many of them the fold's family
	// covers, Persons the number of folds.
	Windows int `json:"windows"`
	Covered int `json:"covered"`
	Persons int `json:"persons"`
	// Uncovered lists each window the fold's family does not cover.
	Uncovered []UncoveredWindow `json:"uncovered,omitempty"`
}

// UncoveredWindow is a held-out window whose preferred kernel lies outside
// the family fitted without its person.
type UncoveredWindow struct {
	UID   string `json:"uid"`
	Trace int    `json:"trace"`
	First int    `json:"first"`
	// Kernel and LengthscaleS are the window's preferred kernel and its
	// east and north lengthscales (censored ones at the fit's bound).
	Kernel       string     `json:"kernel"`
	LengthscaleS [2]float64 `json:"lengthscale_s"`
}

// Preferred returns the window's preferred kernel: the compared kernel
// with the highest held-out likelihood (f.Best), and its east and north
// lengthscales as the family counts them (a censored one at the longest
// bound a window can have, one below the fixes' spacing at the spacing:
// twice Options.MinSpacing). ok is false for a window fitted without a
// comparison, and when the winner is a sum (a sum is not a single kernel
// and lengthscale; Covers then asks for both of its parts). opt must be
// the options (the Mode) of the fit.
func Preferred(f WindowFit, m Mode) (kernel string, ls [2]float64, ok bool) {
	opt := m.config()
	opt, err := opt.withDefaults()
	if err != nil {
		return "", ls, false
	}
	return opt.preferred(f)
}

func (opt config) preferred(f WindowFit) (kernel string, ls [2]float64, ok bool) {
	for _, kf := range f.Kernels {
		if kf.Kernel != f.Best || len(kf.Parts) > 0 {
			continue
		}
		for d := range 2 {
			ls[d] = opt.resolved(kf.LengthscaleS[d], kf.Censored[d])
		}
		return kf.Kernel, ls, true
	}
	return "", ls, false
}

// Covers reports whether the family fs covers the window f: for both
// coordinates, the window's preferred kernel at its lengthscale
// (Preferred) is a member of fs, or its spectral density is dominated by
// the members' hull (FamilySet.HullRatio at most 1), so that every noise
// dominating the members, as the certificate's does, dominates it too and
// the points' certificate holds against it as against a member (the
// places' is stated for members only). For a sum that won, both parts must
// be covered. opt must be the options (the Mode) of the fit.
func Covers(fs FamilySet, f WindowFit, m Mode) bool {
	opt := m.config()
	opt, err := opt.withDefaults()
	if err != nil {
		return false
	}
	return opt.covers(fs, f)
}

func (opt config) covers(fs FamilySet, f WindowFit) bool {
	in := func(kernel string, l float64) bool {
		for _, k := range fs.Kernels {
			// A relative tolerance for lengthscales read back from JSON.
			if k.Kernel == kernel && l >= k.LengthscaleMin*(1-1e-9) && l <= k.LengthscaleMax*(1+1e-9) {
				return true
			}
		}
		// Not a member, but dominated by the members' spectral hull: every
		// noise that dominates the members dominates it.
		r, err := fs.HullRatio(kernel, l)
		return err == nil && r <= 1
	}
	if kernel, ls, ok := opt.preferred(f); ok {
		return in(kernel, ls[0]) && in(kernel, ls[1])
	}
	for _, kf := range f.Kernels {
		if kf.Kernel != f.Best || len(kf.Parts) == 0 {
			continue
		}
		for _, p := range kf.Parts {
			for d := range 2 {
				if !in(p.Kernel, opt.resolved(p.LengthscaleS[d], p.Censored[d])) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// LeaveOnePersonOut measures the held-out coverage of the family Fit
// would choose with opt (which must compare kernels) from the fitted
// windows fits (Report.Fits, with their UIDs): one fold per person. It
// needs at least two persons.
func LeaveOnePersonOut(fits []WindowFit, m Mode) (*Coverage, error) {
	opt := m.config()
	s, err := newFitSetup(opt)
	if err != nil {
		return nil, err
	}
	if !s.opt.compare() {
		return nil, param.Invalid("kernel", opt.Kernel, "held-out coverage needs the kernel comparison (no --kernel)")
	}
	return s.leaveOnePersonOut(fits)
}

func (s *fitSetup) leaveOnePersonOut(fits []WindowFit) (*Coverage, error) {
	var uids []string
	for _, f := range fits {
		if !slices.Contains(uids, f.UID) {
			uids = append(uids, f.UID)
		}
	}
	if len(uids) < 2 {
		return nil, param.Invalid("fits", fmt.Sprintf("%d persons", len(uids)), "held-out coverage needs windows of at least two persons")
	}
	c := &Coverage{Persons: len(uids)}
	for _, uid := range uids {
		var train, test []WindowFit
		for _, f := range fits {
			if f.UID == uid {
				test = append(test, f)
			} else {
				train = append(train, f)
			}
		}
		rep := &Report{Fits: slices.Clone(train)}
		fams, _, _, err := s.combineCompare(rep)
		if err != nil {
			// No kernel wins enough of the others' windows: the fold
			// covers none of this person's.
			fams = nil
		}
		fs := FamilySet{Kernels: fams}
		for _, f := range test {
			c.Windows++
			if s.opt.covers(fs, f) {
				c.Covered++
				continue
			}
			u := UncoveredWindow{UID: uid, Trace: f.Trace, First: f.First, Kernel: f.Best}
			if _, ls, ok := s.opt.preferred(f); ok {
				u.LengthscaleS = ls
			}
			c.Uncovered = append(c.Uncovered, u)
		}
	}
	c.Share = float64(c.Covered) / float64(c.Windows)
	if math.IsNaN(c.Share) {
		c.Share = 0
	}
	return c, nil
}
