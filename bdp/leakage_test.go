package bdp

import (
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

func product(p0 []float64, n int) Joint {
	j := Joint{States: len(p0), N: n}
	j.P = make([]float64, j.size())
	for x := range j.P {
		pr := 1.0
		for i := range n {
			pr *= p0[j.digit(x, i)]
		}
		j.P[x] = pr
	}
	return j
}

func leak(t *testing.T, j Joint, lik [][]float64) float64 {
	t.Helper()
	r, err := Leakage(j, lik)
	if err != nil {
		t.Fatal(err)
	}
	return r.BDPL
}

// Closed forms the oracle must reproduce exactly: independent records leak
// τ (BDP = DP, l.771); two perfectly correlated records leak 2τ, the group
// bound m·τ with equality.
func TestLeakageClosedForms(t *testing.T) {
	for _, tau := range []float64{0.3, 1, 2} {
		near(t, "independent", leak(t, product([]float64{0.3, 0.7}, 3), PerRecord(RR(tau), 3)), tau, 1e-12)
		twin := Joint{States: 2, N: 2, P: []float64{0.4, 0, 0, 0.6}} // X1 = X2
		near(t, "twins", leak(t, twin, PerRecord(RR(tau), 2)), 2*tau, 1e-12)
	}
}

// Theorem 6.3: random joint distributions made of independent groups of at
// most m records leak at most m·τ under per-record RR.
func TestLeakageGroupsBound(t *testing.T) {
	src := noise.Seeded(5)
	u := func() float64 { return (float64(src.Uint64()>>11) + 0.5) / (1 << 53) }
	for trial := 0; trial < 20; trial++ {
		// Records {0,1} and {2,3} are two independent groups of m = 2;
		// record 4 is independent.
		a, b := make([]float64, 4), make([]float64, 4)
		sa, sb := 0.0, 0.0
		for k := range 4 {
			a[k], b[k] = u(), u()
			sa += a[k]
			sb += b[k]
		}
		c := u()
		j := Joint{States: 2, N: 5, P: make([]float64, 32)}
		for x := range 32 {
			g1 := x & 3
			g2 := x >> 2 & 3
			x4 := x >> 4 & 1
			p4 := c
			if x4 == 1 {
				p4 = 1 - c
			}
			j.P[x] = a[g1] / sa * b[g2] / sb * p4
		}
		for _, tau := range []float64{0.5, 1.5} {
			g, _ := Groups{M: 2}.Leakage(tau)
			if l := leak(t, j, PerRecord(RR(tau), 5)); l > g+1e-12 {
				t.Errorf("trial %d τ=%v: BDPL %v above the group bound %v", trial, tau, l, g)
			}
		}
	}
}

// Theorem 6.20 on stationary binary chains, and the brute-force value of
// thesis_part3 §1.4 (P = [[0.8,0.2],[0.3,0.7]], n = 5, ε = 1: 2.408, against
// the Markov bound 6.545 and the general bound 5).
func TestLeakageMarkov(t *testing.T) {
	p := [][]float64{{0.8, 0.2}, {0.3, 0.7}}
	w, err := Stationary(p)
	if err != nil {
		t.Fatal(err)
	}
	mk, _ := NewMarkov(p, 1e-12)
	for n := 2; n <= 5; n++ {
		j, err := MarkovJoint(p, w, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, tau := range []float64{0.5, 1} {
			l := leak(t, j, PerRecord(RR(tau), n))
			mb, _ := mk.Leakage(tau)
			if l > mb+1e-12 || l > float64(n)*tau+1e-12 {
				t.Errorf("n=%d τ=%v: BDPL %v above min(Markov %v, general %v)", n, tau, l, mb, float64(n)*tau)
			}
			if n == 5 && tau == 1 {
				near(t, "BDPL n=5", l, 2.408, 5.01e-4)
				near(t, "Markov bound", mb, 6.545, 5.01e-4)
			}
		}
	}
}

// Example 6.4 (Table 6.1): the general bound is tight although neither
// record determines the other; BDPL → 2ε as r grows. Oracle values from
// thesis_part3 §1.2 (ε = 1: r = 10 → 1.7956, r = 100 → 1.9769), and the
// thesis's closed-form lower bound (l.3123) must hold.
func TestLeakageExample64(t *testing.T) {
	const eps = 1.0
	for _, c := range []struct {
		r    float64
		want float64
	}{{3, 1.4624}, {10, 1.7956}, {100, 1.9769}, {1000, 1.9977}} {
		t.Run(fmt.Sprintf("r=%g", c.r), func(t *testing.T) {
			r := c.r
			// Index x = x1 + 2·x2 (record 0 = X1).
			j := Joint{States: 2, N: 2, P: []float64{
				1 / (r * r),                     // X1=0, X2=0
				(r - 1) / (r * r),               // X1=1, X2=0
				1 / (r * r * r),                 // X1=0, X2=1
				(r*r*r - r*r - 1) / (r * r * r), // X1=1, X2=1
			}}
			l := leak(t, j, PerRecord(RR(eps), 2))
			near(t, "Example 6.4 BDPL", l, c.want, 5.01e-5)
			e1, e2 := math.E, math.Exp(2)
			den := r*r*r - r - 1
			lower := math.Log((e2*r/(r+1) + e1/(r+1)) / (e1*(r*r-r)/den + (r*r*r-r*r-1)/den))
			if l < lower-1e-12 || l > 2*eps+1e-12 {
				t.Errorf("r=%v: BDPL %v outside [closed-form %v, 2ε]", r, l, lower)
			}
		})
	}
}

func TestLeakageBadInput(t *testing.T) {
	if PerRecord(nil, 2) != nil || PerRecord([][]float64{{0.5, 0.5}, {1}}, 2) != nil {
		t.Error("bad channel accepted")
	}
	j := product([]float64{0.5, 0.5}, 2)
	if _, err := Leakage(j, PerRecord(RR(1), 3)); err == nil {
		t.Error("likelihood for the wrong number of records accepted")
	}
	if _, err := Leakage(j, nil); err == nil {
		t.Error("nil likelihood accepted")
	}
	if _, err := Leakage(Joint{States: 2, N: 2, P: []float64{0.5, 0.5, 0.5, 0.5}}, PerRecord(RR(1), 2)); err == nil {
		t.Error("joint summing to 2 accepted")
	}
}
