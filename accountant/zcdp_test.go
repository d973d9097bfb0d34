package accountant

import (
	"math"
	"testing"
)

// OpenDP's zCDP_to_approxDP tests: a Gaussian with scale 4 and d_in 1 has
// ρ = 1/32; cdp_epsilon(ρ, 1e-3) = 0.6880024554878086 and δ(ε = 0) =
// 0.1508457845622862.
func TestZCDPKnownValues(t *testing.T) {
	rho := Gaussian{Sigma: 4, Sensitivity: 1}.Rho()
	if rho != 1.0/32 {
		t.Fatalf("rho = %g", rho)
	}
	eps, err := ZCDPEpsilon(rho, 1e-3)
	if err != nil || math.Abs(eps-0.6880024554878086) > 1e-12 {
		t.Errorf("ZCDPEpsilon = %.17g, %v", eps, err)
	}
	d, err := ZCDPDelta(rho, 0)
	if err != nil || math.Abs(d-0.1508457845622862) > 1e-12 {
		t.Errorf("ZCDPDelta(ε=0) = %.17g, %v", d, err)
	}
	back, _ := ZCDPDelta(rho, eps)
	if math.Abs(back-1e-3) > 1e-12 {
		t.Errorf("ZCDPDelta(ZCDPEpsilon) = %.17g", back)
	}
}

// The continuous optimum over α is never worse than the grid, and it is
// never better than the exact GDP curve of the same Gaussian (zCDP is a
// relaxation of it).
func TestZCDPBetweenGridAndGDP(t *testing.T) {
	for _, sigma := range []float64{0.8, 2, 10, 50} {
		g := Gaussian{Sigma: sigma, Sensitivity: 1}
		acc, _ := NewRDPAccountant(nil)
		_ = acc.Compose(g, 1)
		grid, _, _ := acc.Epsilon(1e-6)
		cont, _ := ZCDPEpsilon(g.Rho(), 1e-6)
		exact, _ := GDPEpsilon(g.Mu(), 1e-6)
		if cont > grid+1e-12 || exact > cont+1e-12 {
			t.Errorf("σ=%g: gdp %g ≤ zcdp %g ≤ grid %g violated", sigma, exact, cont, grid)
		}
	}
	if e, _ := ZCDPEpsilon(0, 1e-5); e != 0 {
		t.Errorf("ρ=0: %g", e)
	}
	if _, err := ZCDPEpsilon(1, 0); err == nil {
		t.Error("δ=0 accepted")
	}
}
