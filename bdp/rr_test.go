package bdp

import (
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// ρ values as transcribed and computed in thesis_part3 §2.4 (checked again
// with an independent Python evaluation of the formula; the notes' "0.004480"
// is 0.00448 to three significant figures, the formula gives 0.0044831).
func TestChakrabartiFlip(t *testing.T) {
	for _, c := range []struct{ r, eps, want, tol float64 }{
		{0.1, 1, 0.48295, 5.01e-6}, {0.1, 10, 0.00448, 5.01e-6}, {0.2, 4, 0.21709, 5.01e-6},
		{0.1, 0.5, 0.4925, 5.01e-5}, {0.2, 6, 0.0535, 5.01e-5}, {0.3, 6, 0.0258, 5.01e-5},
	} {
		got, err := ChakrabartiFlip(c.r, c.eps)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "ρ", got, c.want, c.tol)
	}
	if _, err := ChakrabartiFlip(0.5, 1); err == nil {
		t.Error("r = 0.5 accepted")
	}
}

func TestRRCountBetaMonteCarlo(t *testing.T) {
	t.Parallel()
	const n, n1, rho, alpha = 60, 25, 0.2, 6.0
	beta, err := RRCountBeta(n, n1, rho, alpha)
	if err != nil {
		t.Fatal(err)
	}
	src := noise.Seeded(6)
	const runs = 200000
	hits := 0
	for range runs {
		z := 0
		for i := range n {
			bit := i < n1
			if uniform01(src) < rho {
				bit = !bit
			}
			if bit {
				z++
			}
		}
		est := (float64(z) - n*rho) / (1 - 2*rho)
		if math.Abs(est-n1) >= alpha-1e-9 {
			hits++
		}
	}
	// Binomial standard error √(β(1−β)/runs) ≈ 0.001; 0.005 is ~5 of them.
	near(t, "β", float64(hits)/runs, beta, 0.005)
	// The PMF is a distribution.
	s := 0.0
	for _, p := range rrCountPMF(700, 350, 0.05) {
		s += p
	}
	near(t, "Σ pmf", s, 1, 1e-12)
}

func TestRRCountAlphaIsTheInfimum(t *testing.T) {
	for _, c := range []struct {
		n, n1     int
		rho, beta float64
	}{{700, 350, 0.0535, 0.05}, {500, 100, 0.2, 0.05}, {50, 10, 0.3, 0.1}} {
		t.Run(fmt.Sprintf("n=%d,n1=%d,rho=%g,beta=%g", c.n, c.n1, c.rho, c.beta), func(t *testing.T) {
			a, err := RRCountAlpha(c.n, c.n1, c.rho, c.beta)
			if err != nil {
				t.Fatal(err)
			}
			at, _ := RRCountBeta(c.n, c.n1, c.rho, a)
			above, _ := RRCountBeta(c.n, c.n1, c.rho, a*(1+1e-9)+1e-9)
			if !(at > c.beta && above <= c.beta) {
				t.Errorf("%+v: α* = %v, β(α*) = %v, β(α*+) = %v", c, a, at, above)
			}
		})
	}
}

// The notes' spot check (thesis_part3 §2.4, n = 700, n₁ = 350, β = 0.05,
// exact convolution; two decimals): α_RR = 3.03, 13.44, 5.08, 8.44.
func TestRRCountAlphaNotes(t *testing.T) {
	for _, c := range []struct{ r, eps, want float64 }{{0.1, 10, 3.03}, {0.2, 6, 13.44}, {0.2, 8, 5.08}, {0.3, 6, 8.44}} {
		t.Run(fmt.Sprintf("r=%g,eps=%g", c.r, c.eps), func(t *testing.T) {
			rho, _ := ChakrabartiFlip(c.r, c.eps)
			a, err := RRCountAlpha(700, 350, rho, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "α_RR", a, c.want, 5.01e-3)
		})
	}
}
