package stats

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/combin"
)

// within reports whether got is within tol of want (never for NaN).
func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// binomTail is P[k0 ≤ X ≤ k1] for X ~ Binomial(n, p), summed term by term:
// an independent recomputation of what the interval's ends solve.
func binomTail(n int, p float64, k0, k1 int) float64 {
	s := 0.0
	for k := k0; k <= k1; k++ {
		s += float64(combin.Binomial(n, k)) * math.Pow(p, float64(k)) * math.Pow(1-p, float64(n-k))
	}
	return s
}

func TestClopperPearson(t *testing.T) {
	t.Parallel()
	t.Run("ends", func(t *testing.T) {
		// Closed forms at the ends: k = 0 → upper 1 − (α/2)^{1/n};
		// k = n → lower (α/2)^{1/n}.
		lo0, hi0 := ClopperPearson(0, 10, 0.95)
		lo10, hi10 := ClopperPearson(10, 10, 0.95)
		if lo0 != 0 || !within(hi0, 1-math.Pow(0.025, 0.1), 1e-12) || !within(lo10, math.Pow(0.025, 0.1), 1e-12) || hi10 != 1 {
			t.Errorf("0 of 10: [%v, %v]; 10 of 10: [%v, %v]", lo0, hi0, lo10, hi10)
		}
	})
	// Interior: the limits solve the binomial tail equations.
	for _, c := range []struct {
		k, n  int
		level float64
	}{{5, 10, 0.95}, {1, 20, 0.9}, {17, 40, 0.99}, {3, 7, 0.6}} {
		t.Run(fmt.Sprintf("%d of %d at %g", c.k, c.n, c.level), func(t *testing.T) {
			lo, hi := ClopperPearson(c.k, c.n, c.level)
			a := (1 - c.level) / 2
			if up, down := binomTail(c.n, lo, c.k, c.n), binomTail(c.n, hi, 0, c.k); !within(up, a, 1e-10) || !within(down, a, 1e-10) {
				t.Errorf("[%v, %v]: P[X≥k | lo] = %v, P[X≤k | hi] = %v, want both %v", lo, hi, up, down, a)
			}
		})
	}
	// A published vector: Clopper and Pearson's interval for 5 of 10 at
	// 95 % is [0.187086, 0.812914] (R's binom.test).
	if lo, hi := ClopperPearson(5, 10, 0.95); !within(lo, 0.1870860, 1e-6) || !within(hi, 0.8129140, 1e-6) {
		t.Errorf("5 of 10 at 95 %%: [%v, %v], want [0.1870860, 0.8129140]", lo, hi)
	}
}

func TestClopperPearsonInvalid(t *testing.T) {
	t.Parallel()
	for _, c := range [][3]float64{{-1, 10, 0.95}, {11, 10, 0.95}, {0, 0, 0.95}, {1, 2, 1}, {1, 2, 0}, {1, 2, math.NaN()}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			lo, hi := ClopperPearson(int(c[0]), int(c[1]), c[2])
			if !math.IsNaN(lo) || !math.IsNaN(hi) {
				t.Errorf("ClopperPearson(%v) = %v, %v; want NaN", c, lo, hi)
			}
		})
	}
}
