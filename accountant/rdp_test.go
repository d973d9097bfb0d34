package accountant

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestDefaultOrders(t *testing.T) {
	o := DefaultOrders()
	// 99 orders 1.1…10.9, 53 integers 11…63, then four powers of two.
	if len(o) != 156 || o[0] != 1.1 || o[98] != 10.9 || o[99] != 11 || o[151] != 63 || o[155] != 1024 {
		t.Fatalf("DefaultOrders() = %v", o)
	}
}

// dp_accounting's test_compute_epsilon_delta_pure_dp: a constant curve of
// 1.1 on orders 2..32 at δ = 1e-5 gives 1.32783806176 at order 32.
func TestRDPToEpsilonKnownValue(t *testing.T) {
	var orders, curve []float64
	for a := 2; a <= 32; a++ {
		orders = append(orders, float64(a))
		curve = append(curve, 1.1)
	}
	eps, order, err := RDPToEpsilon(orders, curve, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(eps-1.32783806176) > 1e-10 || order != 32 {
		t.Errorf("eps = %.12g at order %g, want 1.32783806176 at 32", eps, order)
	}
	// The delta conversion inverts it at the same order.
	d, dorder, err := RDPToDelta(orders, curve, eps)
	if err != nil {
		t.Fatal(err)
	}
	if !near(d, 1e-5, 1e-9) || dorder != 32 {
		t.Errorf("delta(%g) = %g at order %g, want 1e-5 at 32", eps, d, dorder)
	}
}

func TestRDPToEpsilonEdgeCases(t *testing.T) {
	// A zero curve is (0, δ)-DP for every δ > 0.
	eps, _, err := RDPToEpsilon([]float64{2, 3}, []float64{0, 0}, 1e-9)
	if err != nil || eps != 0 {
		t.Errorf("zero curve: eps = %g, %v", eps, err)
	}
	// δ above the KL bound √(1−e^{−r}) also gives ε = 0.
	r := 0.01
	eps, _, _ = RDPToEpsilon([]float64{2}, []float64{r}, math.Sqrt(-math.Expm1(-r))*1.0001)
	if eps != 0 {
		t.Errorf("eps above KL bound = %g, want 0", eps)
	}
	// Orders ≤ 1.01 give no finite bound.
	eps, _, _ = RDPToEpsilon([]float64{1.005}, []float64{0.5}, 1e-5)
	if !math.IsInf(eps, 1) {
		t.Errorf("eps at order 1.005 = %g, want +Inf", eps)
	}
	for _, c := range []struct {
		orders, curve []float64
		delta         float64
	}{
		{[]float64{2}, []float64{1}, 0},
		{[]float64{2}, []float64{1}, 1.5},
		{[]float64{1}, []float64{1}, 1e-5},
		{[]float64{2}, []float64{-1}, 1e-5},
		{[]float64{2, 3}, []float64{1}, 1e-5},
	} {
		t.Run(fmt.Sprintf("orders=%v,curve=%v,delta=%g", c.orders, c.curve, c.delta), func(t *testing.T) {
			if _, _, err := RDPToEpsilon(c.orders, c.curve, c.delta); err == nil {
				t.Errorf("RDPToEpsilon(%v, %v, %g): no error", c.orders, c.curve, c.delta)
			}
		})
	}
}

// Known Laplace values (anchors C.6) and Mironov's limits: KL at α → 1 and
// ε at α → ∞.
func TestLaplaceRDP(t *testing.T) {
	for _, c := range []struct{ alpha, want float64 }{
		{2, 0.6191236299985929},
		{10, 0.9286829020966803},
	} {
		got, err := RDP(Laplace{Scale: 1, Sensitivity: 1}, c.alpha)
		if err != nil || !near(got, c.want, 1e-14) {
			t.Errorf("Laplace ε=1 RDP(%g) = %.17g, %v; want %.17g", c.alpha, got, err, c.want)
		}
	}
	for _, eps := range []float64{0.01, 0.5, 1, 3} {
		kl := eps + math.Expm1(-eps)
		if got := laplaceRDP(eps, 1); !near(got, kl, 1e-14) {
			t.Errorf("KL limit ε=%g: %.17g want %.17g", eps, got, kl)
		}
		// Just above 1 the Taylor branch joins the closed form smoothly.
		if got := laplaceRDP(eps, 1+1e-9); math.Abs(got-kl) > 1e-8 {
			t.Errorf("α=1+1e-9, ε=%g: %.17g vs KL %.17g", eps, got, kl)
		}
		if got := laplaceRDP(eps, 1e9); !near(got, eps, 1e-8) {
			t.Errorf("α→∞, ε=%g: %g", eps, got)
		}
		// dp_accounting's test_laplace: KL ≤ min(ε, ε²/2).
		if kl > math.Min(eps, eps*eps/2)+1e-15 {
			t.Errorf("KL %g > min(ε, ε²/2) at ε=%g", kl, eps)
		}
	}
}

func TestGaussianRDP(t *testing.T) {
	for _, a := range []float64{1.5, 2, 32, 1024} {
		got, _ := RDP(Gaussian{Sigma: 3, Sensitivity: 2}, a)
		if want := a * 4 / (2 * 9); !near(got, want, 1e-15) {
			t.Errorf("Gaussian RDP(%g) = %g, want %g", a, got, want)
		}
	}
}

// GRR's stable formula against the direct sum Σ_y P(y)^α Q(y)^{1−α}.
func TestGRRRDPMatchesDirectSum(t *testing.T) {
	for _, k := range []int{2, 3, 10} {
		for _, eps := range []float64{0.1, 1, 4} {
			for _, a := range []float64{1.1, 2, 7.5, 64} {
				z := math.Exp(eps) + float64(k) - 1
				p, q := math.Exp(eps)/z, 1/z
				s := math.Pow(p, a)*math.Pow(q, 1-a) + math.Pow(q, a)*math.Pow(p, 1-a) + float64(k-2)*q
				want := math.Log(s) / (a - 1)
				if got := grrRDP(eps, k, a); !near(got, want, 1e-12) {
					t.Errorf("GRR k=%d ε=%g α=%g: %.17g want %.17g", k, eps, a, got, want)
				}
			}
		}
	}
	// The large-αε branch stays continuous and bounded by ε.
	if got := grrRDP(10, 5, 1024); !(got <= 10 && got > 9.9) {
		t.Errorf("GRR large αε = %g", got)
	}
	// Pure ε-DP is bounded by binary randomized response; never above ε.
	got, _ := RDP(EpsilonDelta{Epsilon: 2}, 1024)
	if got > 2 || got < 1.99 {
		t.Errorf("pure ε=2 RDP at 1024 = %g", got)
	}
}

// The discrete Laplace closed form against a brute-force sum over the
// integers.
func TestDiscreteLaplaceRDPMatchesSum(t *testing.T) {
	for _, c := range []struct {
		scale float64
		sens  int
		alpha float64
	}{{1 / 0.7, 1, 2.5}, {1 / 0.3, 3, 7}, {2, 2, 1.1}, {0.5, 4, 32}} {
		t.Run(fmt.Sprintf("scale=%g,sens=%d,alpha=%g", c.scale, c.sens, c.alpha), func(t *testing.T) {
			tt := 1 / c.scale
			norm := math.Tanh(tt / 2)
			s := 0.0
			for x := -4000; x <= 4000; x++ {
				lp := -tt * math.Abs(float64(x))
				lq := -tt * math.Abs(float64(x-c.sens))
				s += norm * math.Exp(c.alpha*lp+(1-c.alpha)*lq)
			}
			want := math.Log(s) / (c.alpha - 1)
			got, err := RDP(DiscreteLaplace{Scale: c.scale, Sensitivity: c.sens}, c.alpha)
			if err != nil || !near(got, want, 1e-12) {
				t.Errorf("%+v: %.17g, %v; want %.17g", c, got, err, want)
			}
			if eps := float64(c.sens) / c.scale; got > eps {
				t.Errorf("%+v: RDP %g exceeds pure ε %g", c, got, eps)
			}
		})
	}
	// mpmath (60 digits) gives 0.47056451826834228985 for t=0.7, Δ=1, α=2.5.
	got, _ := RDP(DiscreteLaplace{Scale: 1 / 0.7, Sensitivity: 1}, 2.5)
	if !near(got, 0.47056451826834228985, 1e-14) {
		t.Errorf("mpmath check: %.17g", got)
	}
}

func TestRDPCurveTabulated(t *testing.T) {
	c := RDPCurve{Orders: []float64{2, 8, 4}, Epsilons: []float64{0.2, 0.5, 0.7}}
	for _, x := range []struct{ a, want float64 }{
		{1.5, 0.2}, {2, 0.2}, {3, 0.5}, {8, 0.5}, {9, math.Inf(1)},
	} {
		if got := c.At(x.a); got != x.want {
			t.Errorf("At(%g) = %g, want %g", x.a, got, x.want)
		}
	}
	acc, _ := NewRDPAccountant(nil)
	if err := acc.Compose(c, 0); err != nil {
		t.Fatal(err)
	}
	if e, _, err := acc.Epsilon(1e-5); err != nil || e != 0 {
		t.Errorf("zero runs of a curve infinite at high orders: ε = %g, %v", e, err)
	}
	if err := (RDPCurve{Rho: 1, Orders: []float64{2}, Epsilons: []float64{1}}).Validate(); err == nil {
		t.Error("rho and table together accepted")
	}
	if err := (RDPCurve{Orders: []float64{2}, Epsilons: []float64{1, 2}}).Validate(); err == nil {
		t.Error("mismatched table accepted")
	}
}

// Composing n Gaussians with σ equals one Gaussian with σ/√n, at every order.
func TestRDPAccountantComposesGaussians(t *testing.T) {
	const n = 16
	a, _ := NewRDPAccountant(nil)
	if err := a.Compose(Gaussian{Sigma: 8, Sensitivity: 1}, n); err != nil {
		t.Fatal(err)
	}
	b, _ := NewRDPAccountant(nil)
	if err := b.Compose(Gaussian{Sigma: 8 / math.Sqrt(n), Sensitivity: 1}, 1); err != nil {
		t.Fatal(err)
	}
	_, ca := a.Curve()
	_, cb := b.Curve()
	for i := range ca {
		if !near(ca[i], cb[i], 1e-14) {
			t.Fatalf("order %d: %g vs %g", i, ca[i], cb[i])
		}
	}
	ea, oa, _ := a.Epsilon(1e-5)
	eb, ob, _ := b.Epsilon(1e-5)
	if ea != eb || oa != ob {
		t.Errorf("eps %g@%g vs %g@%g", ea, oa, eb, ob)
	}
	// Composed and SelfComposed events agree with repeated Compose calls.
	c, _ := NewRDPAccountant(nil)
	ev := Composed{Events: []Event{SelfComposed{Event: Gaussian{Sigma: 8, Sensitivity: 1}, Count: 10}, Gaussian{Sigma: 8, Sensitivity: 1}}}
	if err := c.Compose(ev, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Compose(Gaussian{Sigma: 8, Sensitivity: 1}, 5); err != nil {
		t.Fatal(err)
	}
	ec, _, _ := c.Epsilon(1e-5)
	if !near(ec, ea, 1e-14) {
		t.Errorf("composed events: %g vs %g", ec, ea)
	}
}

// ε(δ) and δ(ε) are monotone and invert each other (up to the grid).
func TestRDPAccountantMonotoneAndInverse(t *testing.T) {
	acc, _ := NewRDPAccountant(nil)
	_ = acc.Compose(Laplace{Scale: 2, Sensitivity: 1}, 10)
	_ = acc.Compose(Gaussian{Sigma: 5, Sensitivity: 1}, 3)
	prev := math.Inf(1)
	for _, d := range []float64{1e-12, 1e-9, 1e-6, 1e-3, 0.1} {
		eps, order, err := acc.Epsilon(d)
		if err != nil {
			t.Fatal(err)
		}
		if eps > prev {
			t.Errorf("ε(%g) = %g increased", d, eps)
		}
		prev = eps
		back, _, _ := acc.Delta(eps)
		if back > d*(1+1e-9) {
			t.Errorf("δ(ε(%g)) = %g > %g (order %g)", d, back, d, order)
		}
	}
}

func TestRDPUnsupported(t *testing.T) {
	acc, _ := NewRDPAccountant(nil)
	for _, ev := range []Event{EpsilonDelta{Epsilon: 1, Delta: 1e-6}, PlanarLaplace(0.1, "m")} {
		t.Run(fmt.Sprintf("%T", ev), func(t *testing.T) {
			if acc.Supports(ev) {
				t.Errorf("%v supported", ev)
			}
			if err := acc.Compose(ev, 1); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%v: err = %v, want ErrUnsupported", ev, err)
			}
		})
	}
	if err := acc.Compose(Gaussian{Sigma: -1, Sensitivity: 1}, 1); err == nil {
		t.Error("negative sigma accepted")
	}
	if _, err := NewRDPAccountant([]float64{0.5}); err == nil {
		t.Error("order 0.5 accepted")
	}
}

// The discrete Gaussian bound α Δ²/(2σ²) holds against the exact sum over
// the integers, with equality when (α−1)Δ is an integer.
func TestDiscreteGaussianRDPBound(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		sens  int
		alpha float64
		exact bool
	}{{1, 1, 2, true}, {0.7, 2, 3, true}, {0.4, 1, 2.5, false}, {0.5, 1, 1.7, false}, {1.3, 1, 2.5, false}} {
		t.Run(fmt.Sprintf("sigma=%g,sens=%d,alpha=%g", c.sigma, c.sens, c.alpha), func(t *testing.T) {
			logw := func(x float64) float64 { return -x * x / (2 * c.sigma * c.sigma) }
			z, s := 0.0, 0.0
			for x := -200; x <= 200; x++ {
				fx := float64(x)
				z += math.Exp(logw(fx))
				s += math.Exp(c.alpha*logw(fx) + (1-c.alpha)*logw(fx-float64(c.sens)))
			}
			exact := math.Log(s/z) / (c.alpha - 1)
			got, err := RDP(DiscreteGaussian{Sigma: c.sigma, Sensitivity: c.sens}, c.alpha)
			if err != nil || got < exact-1e-12 {
				t.Errorf("%+v: bound %g below exact %g (%v)", c, got, exact, err)
			}
			if c.exact && !near(got, exact, 1e-12) {
				t.Errorf("%+v: bound %g, exact %g, want equality", c, got, exact)
			}
			// For σ ≳ 1 the lattice effect is below 1e-14 (it decays like
			// e^{−2π²σ²}), so strictness is only checked for small σ.
			if !c.exact && c.sigma < 1 && !(got > exact+1e-9) {
				t.Errorf("%+v: bound %g not strictly above exact %g", c, got, exact)
			}
		})
	}
}
