package bdp

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.8g, want %.8g (tol %g)", name, got, want, tol)
	}
}

// thesis_part3.md §5.3 closed-form table.
func TestGaussianFactor(t *testing.T) {
	h := func(m int, rho float64) float64 {
		t.Helper()
		v, err := Gaussian{M: m, Rho: rho}.Factor()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	near(t, "h(3, 0.275)", h(3, 0.275), 1.853448, 5.01e-7)
	tau, _ := Gaussian{M: 3, Rho: 0.275}.Tau(1)
	near(t, "τ/ε(3, 0.275)", tau, 0.539535, 5.01e-7)
	near(t, "h(2, 0.4483)", h(2, 0.4483), 1.4483, 1e-12)
	near(t, "h(2, 0.45)", h(2, 0.45), 1.45, 1e-12)
	near(t, "h(2, ρ) = 1+ρ", h(2, 0.9), 1.9, 1e-12)
	near(t, "h(1, ·)", h(1, 0.9), 1, 0)
	// Eq. 6.43 thresholds, with h(m, ρ*) = m exactly.
	for _, c := range []struct {
		m    int
		want float64
	}{{2, 1.0}, {3, 0.470588}, {4, 0.3}, {5, 0.219178}, {6, 0.172414}, {10, 0.092784}} {
		r := RhoThreshold(c.m)
		near(t, "ρ*", r, c.want, 5.01e-7)
		if c.m > 2 {
			near(t, "h(m, ρ*)", h(c.m, r), float64(c.m), 1e-12)
			if (Gaussian{M: c.m, Rho: r * 0.99}).BeatsGroups() != true || (Gaussian{M: c.m, Rho: r * 1.01}).BeatsGroups() {
				t.Errorf("BeatsGroups wrong around ρ* for m = %d", c.m)
			}
		}
	}
	if _, err := (Gaussian{M: 4, Rho: 0.5}).Factor(); err == nil {
		t.Error("ρ(m−2) = 1 accepted")
	}
	if _, err := (Gaussian{M: 3, Rho: -0.1}).Factor(); err == nil {
		t.Error("negative ρ accepted")
	}
}

func TestMarkovModel(t *testing.T) {
	// The printed transition matrices (thesis_part3 §3.1); M1's first row
	// sums to 0.999, so it needs a tolerance of 1e-3.
	mats := []struct {
		p     [][]float64
		gamma float64
		w0    float64
	}{
		{[][]float64{{0.882, 0.117}, {0.305, 0.695}}, 7.5385, 0},
		{[][]float64{{0.445, 0.555}, {0.149, 0.850}}, 5.7047, 0},
		{[][]float64{{0.818, 0.182}, {0.371, 0.629}}, 4.4945, 0.6709},
		{[][]float64{{0.894, 0.106}, {0.478, 0.522}}, 8.4340, 0.8185},
	}
	for _, c := range mats {
		t.Run(fmt.Sprintf("gamma=%g", c.gamma), func(t *testing.T) {
			mk, err := NewMarkov(c.p, 1.5e-3)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "γ", mk.Gamma, c.gamma, 5.01e-5)
		})
	}
	if _, err := NewMarkov(mats[0].p, 1e-9); err == nil {
		t.Error("row summing to 0.999 accepted at tolerance 1e-9")
	}
	// Stationary distributions: 2-state closed form (P10, P01)/(P01+P10).
	for _, c := range mats[2:] {
		w, err := Stationary(c.p)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "w0", w[0], c.w0, 5.01e-5)
		near(t, "w0 closed form", w[0], c.p[1][0]/(c.p[0][1]+c.p[1][0]), 1e-12)
	}
	// 4 ln γ for the table's γ.
	for _, c := range []struct{ g, f float64 }{{3.29, 4.7636}, {4.49, 6.0074}, {7.54, 8.0809}, {8.43, 8.5272}} {
		near(t, "4 ln γ", Markov{Gamma: c.g}.Floor(), c.f, 5.01e-5)
	}
	if _, err := (Markov{Gamma: 3.29}).Tau(4.7); !errors.Is(err, ErrBelowFloor) {
		t.Errorf("below the floor: %v", err)
	}
	tau, err := Markov{Gamma: 1}.Tau(0.7)
	if err != nil || tau != 0.7 {
		t.Errorf("γ = 1: τ = %v, %v; want ε", tau, err)
	}
	if _, err := NewMarkov([][]float64{{1, 0}, {0.5, 0.5}}, 1e-9); err == nil {
		t.Error("zero transition probability accepted (H1)")
	}
	// Eq. 6.70: the Markov bound beats the general one iff γ < e^{(n−1)ε/4}.
	near(t, "threshold n=80", math.Exp(79*0.5/4), 19438.3, 0.05)
	near(t, "threshold n=20", math.Exp(19*0.5/4), 10.751, 5e-4)
}

func TestBestOf(t *testing.T) {
	// Markov data of length n: τ = max(ε/n, ε − 4 ln γ).
	mk := Markov{Gamma: 7.54}
	c, err := BestOf(20, Groups{M: 288}, mk)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "τ", c.Tau, 20-mk.Floor(), 1e-12)
	if c.Model != mk.Name() || len(c.Candidates) != 2 {
		t.Errorf("best = %+v", c)
	}
	// Below the floor the general bound takes over.
	c, err = BestOf(5, Groups{M: 288}, mk)
	if err != nil || c.Model != "groups(m=288)" {
		t.Fatalf("fallback: %+v, %v", c, err)
	}
	near(t, "factor", c.Factor, 288, 1e-12)
	// Gaussian data: τ = ε/min(m, h).
	c, _ = BestOf(1, Groups{M: 3}, Gaussian{M: 3, Rho: 0.275})
	near(t, "Galton factor", c.Factor, 1.853448, 5.01e-7)
	c, _ = BestOf(1, Groups{M: 3}, Gaussian{M: 3, Rho: 0.6})
	near(t, "ρ above ρ*: groups", c.Factor, 3, 1e-12)
	if _, err := BestOf(1, Markov{Gamma: 100}); err == nil {
		t.Error("no valid model accepted")
	}
	if _, err := BestOf(0, Groups{M: 2}); err == nil {
		t.Error("ε = 0 accepted")
	}
}

func TestGaussianFromCovariance(t *testing.T) {
	// Two independent blocks: a 3-block with correlations up to 0.275 and a
	// 2-block, constant variance 4.
	s := mat.NewSymDense(5, []float64{
		4, 1.1, 0.5, 0, 0,
		1.1, 4, 0.8, 0, 0,
		0.5, 0.8, 4, 0, 0,
		0, 0, 0, 4, -0.4,
		0, 0, 0, -0.4, 4,
	})
	g, err := GaussianFromCovariance(s, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	if g.M != 3 {
		t.Errorf("m = %d, want 3", g.M)
	}
	near(t, "ρ", g.Rho, 0.275, 1e-15)
	bad := mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2})
	if _, err := GaussianFromCovariance(bad, 1e-9); err == nil {
		t.Error("non-constant diagonal accepted")
	}
	notPD := mat.NewSymDense(2, []float64{1, 1.5, 1.5, 1})
	if _, err := GaussianFromCovariance(notPD, 1e-9); err == nil {
		t.Error("indefinite matrix accepted")
	}
}

func TestAccuracy(t *testing.T) {
	a, err := LaplaceAlpha(0.05, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "ln 20", a, 2.995732, 5.01e-7)
	// Reference α table (thesis_part3 §3.4): FamilyIQ Δ = 120, ε = 1.
	h, _ := Gaussian{M: 2, Rho: 0.4483}.Factor()
	for _, c := range []struct{ factor, want float64 }{{1, 359.5}, {h, 520.6}, {2, 719.0}, {3, 1078.5}} {
		t.Run(fmt.Sprintf("factor=%g", c.factor), func(t *testing.T) {
			a, _ := LaplaceAlpha(0.05, 120, 1/c.factor)
			near(t, "FamilyIQ α", a, c.want, 0.051)
		})
	}
	// Markov counts: Activity, ε = 10, γ = 7.54.
	tau, _ := Markov{Gamma: 7.54}.Tau(10)
	a, _ = LaplaceAlpha(0.05, 1, tau)
	near(t, "Activity α", a, 1.561, 5.01e-4)
	al, ok := FreeLunch(1, 0.2, 10)
	if !ok || al != 5 {
		t.Errorf("FreeLunch = %v, %v", al, ok)
	}
	if _, ok := FreeLunch(1, 0.27, 10); ok {
		t.Error("FreeLunch applied above β = 1/(e+1) = 0.268941")
	}
}
