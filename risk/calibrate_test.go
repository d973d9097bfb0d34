package risk

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestCalibrateKnownValues(t *testing.T) {
	// Example 5.4 (l.2283): γ = 0.1, binary, uniform → ε = ln 1.5.
	near(t, "GRR m=2", must(t)(CalibrateGRR(0.1, 2)), math.Log(1.5), 1e-14)
	// m = 100: the thesis prints ln(12.2087) ≈ 2.503, inconsistent with its
	// own formula; the formula gives e^ε = 11/0.89899 = 12.235955.
	near(t, "GRR m=100", must(t)(CalibrateGRR(0.1, 100)), 2.504379, 5.01e-7)
	near(t, "GRR m=100 e^ε", math.Exp(must(t)(CalibrateGRR(0.1, 100))), 12.235955, 5.01e-7)
	// Laplace, m = 10, worst-case gaps (thesis_part2 §5.3).
	near(t, "Laplace γ=0.1", must(t)(CalibrateLaplace(0.1, 10)), 2.1201, 5.01e-5)
	near(t, "Laplace γ=0.05", must(t)(CalibrateLaplace(0.05, 10)), 1.0289, 5.01e-5)
	near(t, "Laplace error", math.Log(20)/must(t)(CalibrateLaplace(0.1, 10)), 1.413, 5.01e-4)
	// DP-SGD, m = 10, γ = 0.1, T = 100: σ ≈ 22 (l.2799); σ_min = 21.933.
	s := must(t)(CalibrateDPSGD(0.1, 100, 10))
	near(t, "DP-SGD σ", s, 21.933, 5.01e-4)
	near(t, "DP-SGD bound at σ=22", must(t)(DPSGD(22, 100, 10)), 0.09963, 5.01e-6)
}

// Every calibrator inverts its bound: the bound at the returned parameter
// equals the risk, and a slightly weaker parameter exceeds it.
func TestCalibrateInvertsBound(t *testing.T) {
	type cal struct {
		name  string
		cal   func(r float64, m int) (float64, error)
		bound func(p float64, m int) (float64, error)
		sigma bool
		jumps bool // the bound jumps (SS's ω is a floor), so it may stay below the risk
	}
	cals := []cal{
		{"GRR", CalibrateGRR, GRR, false, false},
		{"Laplace", CalibrateLaplace, LaplaceUnitRange, false, false},
		{"OUE", CalibrateOUE, OUE, false, false},
		{"SS", CalibrateSubsetSelection, SubsetSelection, false, true},
		{"Gaussian", CalibrateGaussian, GaussianUnitRange, true, false},
		{"EpsDelta", func(r float64, m int) (float64, error) { return CalibrateEpsDelta(r, 1e-6, m) },
			func(e float64, m int) (float64, error) { return EpsDeltaUniform(e, 1e-6, m) }, false, false},
		{"DPSGD", func(r float64, m int) (float64, error) { return CalibrateDPSGD(r, 50, m) },
			func(s float64, m int) (float64, error) { return DPSGD(s, 50, m) }, true, false},
	}
	for _, c := range cals {
		for _, m := range []int{2, 5, 11, 3052} {
			for _, r := range []float64{0.01, 0.1, 0.3} {
				p, err := c.cal(r, m)
				if c.name == "OUE" && r >= float64(m-1)/(2*float64(m)) {
					if !errors.Is(err, ErrUnconstrained) {
						t.Errorf("OUE m=%d r=%v: err %v, want ErrUnconstrained", m, r, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s m=%d r=%v: %v", c.name, m, r, err)
					continue
				}
				b := must(t)(c.bound(p, m))
				if b > r+1e-12 || (!c.jumps && b < r-1e-9) {
					t.Errorf("%s m=%d r=%v: bound at calibrated %v is %v", c.name, m, r, p, b)
				}
				weaker := p * 1.001
				if c.sigma {
					weaker = p / 1.001
				}
				if b2 := must(t)(c.bound(weaker, m)); b2 <= r {
					t.Errorf("%s m=%d r=%v: calibrated %v is not the extreme parameter", c.name, m, r, p)
				}
			}
		}
	}
}

// Eq. 5.60 applied to GRR's exact RAD returns ε (thesis_part2 §5.3,
// m = 3052, ε = 1, 5, 10, 15).
func TestEpsilonFromRADRoundTrip(t *testing.T) {
	for _, eps := range []float64{1, 5, 10, 15} {
		rad := must(t)(GRR(eps, 3052))
		near(t, "Eq 5.60", must(t)(EpsilonFromRAD(rad, 3052)), eps, 1e-9)
	}
	if v, err := EpsilonFromRAD(-0.01, 10); v != 0 || err != nil {
		t.Errorf("negative RAD: %v, %v", v, err)
	}
	if _, err := EpsilonFromRAD(0.9, 10); !errors.Is(err, ErrNotInvertible) {
		t.Errorf("RAD at supremum: %v", err)
	}
}

func TestCalibrateRejects(t *testing.T) {
	if _, err := CalibrateGRR(0.6, 2); !errors.Is(err, ErrUnconstrained) {
		t.Errorf("risk above (m−1)/m: %v", err)
	}
	if _, err := CalibrateLaplace(0, 5); err == nil {
		t.Error("risk 0 accepted")
	}
	if _, err := CalibrateGaussian(1.2, 5); err == nil {
		t.Error("risk 1.2 accepted")
	}
	// A non-monotone "bound" is refused rather than bisected.
	_, err := Calibrate(func(x float64) (float64, error) { return 0.5 + 0.4*math.Sin(x), nil }, 0.6, 0, 10)
	if err == nil {
		t.Error("non-monotone bound accepted")
	}
}

func TestCalibrateHayesLaplace(t *testing.T) {
	// Closed form of 1 − f_Lap(1/m; ε): for 1/m ≤ ½ and 1/m ≥ e^{−ε}/2,
	// f = e^{−ε}m/4, so the bound is 1 − m e^{−ε}/4 and the calibrated
	// ε = ln(m/(4(1 − γ))) when that is ≥ ln(m/2).
	for _, c := range []struct {
		m    int
		rero float64
		want float64
	}{{10, 0.5, math.Log(10 / (4 * 0.5))}, {10, 0.9, math.Log(10 / (4 * 0.1))}} {
		t.Run(fmt.Sprintf("m=%d,rero=%g", c.m, c.rero), func(t *testing.T) {
			if c.want < math.Log(float64(c.m)/2) {
				t.Fatalf("test case outside the e^{−ε}/(4α) branch")
			}
			near(t, "Hayes ε", must(t)(CalibrateHayesLaplace(c.rero, c.m)), c.want, 1e-9)
		})
	}
	if _, err := CalibrateHayesLaplace(0.05, 10); err == nil {
		t.Error("ReRo below the 1/m baseline accepted")
	}
}

// Fig 5.1: Laplace (A.18) stays below OUE until ε ≈ 13.86 (the thesis
// claims [0, 14]; thesis_part2 §3.3 gives "≈ 13.87"; an independent bisection
// in Python on the two closed forms gives 13.862820).
func TestLaplaceOUECrossing(t *testing.T) {
	diff := func(e float64) float64 {
		return must(t)(LaplaceUnitRange(e, 11)) - must(t)(OUE(e, 11))
	}
	lo, hi := 13.0, 14.5
	if !(diff(lo) < 0 && diff(hi) > 0) {
		t.Fatalf("no sign change in [%v, %v]", lo, hi)
	}
	for range 60 {
		if mid := (lo + hi) / 2; diff(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	near(t, "crossing", lo, 13.862820, 5e-6)
}
