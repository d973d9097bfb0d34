package gp

import (
	"math"
	"testing"
	"time"
)

func TestKernelKnownValues(t *testing.T) {
	s3, s5 := math.Sqrt(3), math.Sqrt(5)
	cases := []struct {
		name string
		k    Kernel
		s, t float64
		want float64
	}{
		// At distance one lengthscale the RBF is variance * e^-1/2.
		{"rbf", RBF{2, 3}, 1, 4, 2 * math.Exp(-0.5)},
		{"rbf zero", RBF{2, 3}, 5, 5, 2},
		// Half a period apart, sin^2 = 1: variance * exp(-2/l^2).
		{"periodic half", Periodic{1.5, 0.5, 24}, 0, 12, 1.5 * math.Exp(-8)},
		{"periodic full", Periodic{1.5, 0.5, 24}, 3, 27, 1.5},
		{"matern32", Matern32{1, 2}, 0, 2, (1 + s3) * math.Exp(-s3)},
		{"matern52", Matern52{1, 2}, 0, 2, (1 + s5 + 5.0/3) * math.Exp(-s5)},
		{"matern12", Matern12{2, 3}, 0, 3, 2 * math.Exp(-1)},
		// u = sqrt7 at one lengthscale: 1 + u + 2u^2/5 + u^3/15.
		{"matern72", Matern72{1, 2}, 0, 2, (1 + math.Sqrt(7) + 14.0/5 + 7*math.Sqrt(7)/15) * math.Exp(-math.Sqrt(7))},
		{"sum", Sum{RBF{1, 1}, Matern32{1, 2}}, 0, 1, math.Exp(-0.5) + (1+s3/2)*math.Exp(-s3/2)},
		{"product", Product{RBF{2, 1}, Periodic{1, 1, 4}}, 0, 1, 2 * math.Exp(-0.5) * math.Exp(-2*0.5)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.k.Eval(c.s, c.t); relErr(got, c.want) > 1e-14 {
				t.Errorf("%s: Eval = %v, want %v", c.name, got, c.want)
			}
			if got := c.k.Eval(c.t, c.s); relErr(got, c.want) > 1e-14 {
				t.Errorf("%s: not symmetric", c.name)
			}
		})
	}
}

func TestKernelGradFiniteDifference(t *testing.T) {
	ks := []Kernel{
		RBF{1.3, 2.1},
		Periodic{0.7, 0.9, 5.5},
		Matern32{1.1, 1.7},
		Matern52{0.8, 2.4},
		Matern12{1.4, 0.9},
		Matern72{0.6, 3.1},
		Sum{RBF{1, 3}, Periodic{0.5, 1.2, 7}},
		Product{Matern52{1.2, 4}, Periodic{1, 0.8, 6}},
	}
	for _, k := range ks {
		ps := k.Params()
		g := make([]float64, len(ps))
		for _, pair := range [][2]float64{{0, 1.3}, {2, 7.9}, {-1, 0.4}} {
			k.Grad(g, pair[0], pair[1])
			for i := range ps {
				h := 1e-6
				up, dn := paramsOf(k), paramsOf(k)
				up[i] *= math.Exp(h)
				dn[i] *= math.Exp(-h)
				ku, err := k.WithParams(up)
				if err != nil {
					t.Fatal(err)
				}
				kd, _ := k.WithParams(dn)
				fd := (ku.Eval(pair[0], pair[1]) - kd.Eval(pair[0], pair[1])) / (2 * h)
				if math.Abs(fd-g[i]) > 1e-7*math.Max(1, math.Abs(fd)) {
					t.Errorf("%T %s at %v: grad %v, finite difference %v", k, ps[i].Name, pair, g[i], fd)
				}
			}
		}
	}
}

func paramsOf(k Kernel) []float64 {
	var v []float64
	for _, p := range k.Params() {
		v = append(v, p.Value)
	}
	return v
}

func TestWithParamsRejectsBadValues(t *testing.T) {
	if _, err := (RBF{1, 1}).WithParams([]float64{1, -2}); err == nil {
		t.Error("negative lengthscale accepted")
	}
	if _, err := (RBF{1, 1}).WithParams([]float64{1}); err == nil {
		t.Error("wrong count accepted")
	}
	if err := Validate(Periodic{1, 1, 0}); err == nil {
		t.Error("zero period accepted")
	}
	if err := Validate(Sum{RBF{1, 1}, Matern32{1, math.Inf(1)}}); err == nil {
		t.Error("infinite lengthscale accepted")
	}
}

func TestTimes(t *testing.T) {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	ts, err := Seconds([]time.Time{t0, t0.Add(5 * time.Second), t0.Add(12 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if ts[0] != 0 || ts[1] != 5 || ts[2] != 12 {
		t.Errorf("Seconds = %v", ts)
	}
	p, err := MeanPeriod(ts)
	if err != nil || p != 6 {
		t.Errorf("MeanPeriod = %v, %v, want 6", p, err)
	}
	// A 30 s lengthscale at a 6 s period is 5 samples.
	if got := EffectiveLengthscale(30, p); got != 5 {
		t.Errorf("EffectiveLengthscale = %v", got)
	}
	// Gaps 5, 7, 1, 2: median (2+5)/2.
	if m, err := MedianPeriod([]float64{0, 5, 12, 13, 15}); err != nil || m != 3.5 {
		t.Errorf("MedianPeriod = %v, %v, want 3.5", m, err)
	}
	if _, err := Seconds([]time.Time{t0, t0}); err == nil {
		t.Error("repeated time accepted")
	}
	if got := Indices(3); len(got) != 3 || got[2] != 2 {
		t.Errorf("Indices = %v", got)
	}
}
