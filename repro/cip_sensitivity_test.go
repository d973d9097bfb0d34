package repro

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
)

// study is smallStudy's result, computed once: both sensitivity tests
// read the same deterministic study, which is most of their time.
var study struct {
	once sync.Once
	r    *CIPSensitivityResult
	err  error
}

// smallStudy returns a copy of the sensitivity study of panel 2d at l_eff
// 2.49 (the second lengthscale of the sweep) for the 1.5 l adversary only,
// with nuggets 0 and the default, and the closed form against one
// interior-point solve at tolerance 1e-6.
func smallStudy(t *testing.T) *CIPSensitivityResult {
	t.Helper()
	study.once.Do(func() {
		f, err := LookupCIPFigure("2d")
		if err != nil {
			study.err = err
			return
		}
		study.r, study.err = CIPSensitivity(f, CIPSensitivityOptions{Points: []int{1}, Scales: []float64{1.5},
			Nuggets: []float64{0, DefaultAdversaryNugget}, Tolerances: []float64{1e-6}})
	})
	if study.err != nil {
		t.Fatal(study.err)
	}
	return cloneStudy(study.r)
}

// cloneStudy copies what RunHighPrecision writes (the points' values,
// adversaries, summaries and authors' ridges), so that one test's
// high-precision run leaves the study another test reads as it was.
func cloneStudy(r *CIPSensitivityResult) *CIPSensitivityResult {
	c := *r
	c.Points = slices.Clone(r.Points)
	for i := range c.Points {
		p := &c.Points[i]
		p.Designs, p.Adversaries = slices.Clone(p.Designs), slices.Clone(p.Adversaries)
		p.Values, p.Summary = slices.Clone(p.Values), slices.Clone(p.Summary)
		p.Authors = maps.Clone(p.Authors)
	}
	return &c
}

// byNugget returns the float64 values and the summary of the study's
// only point at nugget nu.
func byNugget(t *testing.T, r *CIPSensitivityResult, nu float64) ([]CIPSensitivityValue, CIPSensitivitySummary) {
	t.Helper()
	var vs []CIPSensitivityValue
	for _, v := range r.Points[0].Values {
		if v.Nugget == nu {
			vs = append(vs, v)
		}
	}
	for _, s := range r.Points[0].Summary {
		if s.Nugget == nu {
			return vs, s
		}
	}
	t.Fatalf("no summary at nugget %g", nu)
	return nil, CIPSensitivitySummary{}
}

// In float64 alone: two designs that agree to better than 1e-6
// (Frobenius) give the bare-kernel adversary at 1.5 l posteriors more than
// 0.01 apart, and the same two designs agree to 1e-4 once the adversary's
// prior has the default nugget (which needs no jitter).
func TestSensitivityFloat64(t *testing.T) {
	t.Parallel()
	r := smallStudy(t)
	p := r.Points[0]
	if len(p.Designs) != 2 || !(p.Designs[1].Distance > 0 && p.Designs[1].Distance < 1e-6) {
		t.Fatalf("designs %+v", p.Designs)
	}
	_, bare := byNugget(t, r, 0)
	if !(bare.Float64Max-bare.Float64Min > 0.01) || bare.Determined {
		t.Errorf("nugget 0: float64 values %v..%v over designs %.2g apart; expected them not determined", bare.Float64Min, bare.Float64Max, p.Designs[1].Distance)
	}
	vs, def := byNugget(t, r, DefaultAdversaryNugget)
	if !(def.Float64Max-def.Float64Min < 1e-4) {
		t.Errorf("nugget %g: float64 values %v..%v", DefaultAdversaryNugget, def.Float64Min, def.Float64Max)
	}
	for _, v := range vs {
		if v.Jitter != 0 {
			t.Errorf("nugget %g, %s: jitter %g", v.Nugget, v.Design, v.Jitter)
		}
	}
	if _, err := CIPSensitivity(CIPFigures()[0], CIPSensitivityOptions{}); err == nil {
		t.Error("sensitivity of panel 2a accepted")
	}
}

// The 80-digit cross-check (skipped without a Python that has mpmath).
// With the default nugget, float64 and 80 digits on the same matrices
// agree to 1e-8 for both designs, and the closed form's float64 value is
// the exact problem's to 1e-8. Without a nugget the prior's exact
// condition number exceeds 1/eps, float64 misses the exact value by more
// than 0.01 and the study says it is not determined.
func TestSensitivityHighPrecision(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the mpmath cross-check")
	}
	if _, err := FindPython(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	r := smallStudy(t)
	if err := r.RunHighPrecision(""); err != nil {
		t.Fatal(err)
	}
	if r.HighPrecision.Digits != HighPrecisionDigits {
		t.Errorf("high precision ran at %d digits", r.HighPrecision.Digits)
	}
	vs, def := byNugget(t, r, DefaultAdversaryNugget)
	for _, v := range vs {
		if v.HighPrecision == nil || !(math.Abs(v.Float64-*v.HighPrecision) < 1e-8) {
			t.Errorf("nugget %g, %s: float64 %v, 80 digits %v", v.Nugget, v.Design, v.Float64, v.HighPrecision)
		}
		if v.Design == DesignClosedForm && (def.Exact == nil || !(math.Abs(v.Float64-*def.Exact) < 1e-8)) {
			t.Errorf("nugget %g: float64 %v, exact problem %v", v.Nugget, v.Float64, def.Exact)
		}
	}
	if !def.Determined {
		t.Errorf("nugget %g not determined: %+v", DefaultAdversaryNugget, def)
	}
	vs, bare := byNugget(t, r, 0)
	if bare.Condition == nil || !(float64(*bare.Condition) > 1/epsilon) {
		t.Errorf("nugget 0: exact condition number %v, want > 1/eps", bare.Condition)
	}
	if bare.Determined || bare.Exact == nil || !(math.Abs(vs[0].Float64-*bare.Exact) > 0.01) {
		t.Errorf("nugget 0: float64 %v, exact %v, determined %v", vs[0].Float64, bare.Exact, bare.Determined)
	}
	// The JSON form (what --replot reads back) keeps the summaries.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back CIPSensitivityResult
	if err := json.Unmarshal(b, &back); err != nil || len(back.Points[0].Summary) != 2 || back.Points[0].Summary[0].Exact == nil {
		t.Errorf("round trip: %v", err)
	}
}

// A Python without mpmath is reported as such.
func TestFindPythonMissing(t *testing.T) {
	if _, err := FindPython("/nonexistent/python3"); !errors.Is(err, ErrNoHighPrecision) {
		t.Errorf("got %v", err)
	}
}

// epsilon is the float64 machine epsilon, 2^-52.
var epsilon = math.Nextafter(1, 2) - 1
