package gp

import (
	"fmt"
	"math"
)

// Kernel is a covariance function of time, with hyperparameters that a
// fitter can read, replace and differentiate against.
type Kernel interface {
	// Eval returns k(s, t).
	Eval(s, t float64) float64
	// Params returns the hyperparameters in natural units, in a fixed
	// order. Every hyperparameter is positive.
	Params() []Param
	// WithParams returns a copy of the kernel with the hyperparameters
	// replaced by values (natural units, the order of Params).
	WithParams(values []float64) (Kernel, error)
	// Grad writes into dst (len(Params())) the derivatives of k(s, t)
	// with respect to the logarithm of each hyperparameter.
	Grad(dst []float64, s, t float64)
}

// Param is a named kernel hyperparameter.
type Param struct {
	Name  string
	Value float64
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("gp: %s must be positive and finite, got %v", name, v)
	}
	return nil
}

func checkValues(k Kernel, values []float64) error {
	ps := k.Params()
	if len(values) != len(ps) {
		return fmt.Errorf("gp: %d hyperparameter values for a kernel with %d", len(values), len(ps))
	}
	for i, v := range values {
		if err := checkPositive(ps[i].Name, v); err != nil {
			return err
		}
	}
	return nil
}

// Validate reports whether every hyperparameter of k is positive and finite.
func Validate(k Kernel) error {
	if k == nil {
		return fmt.Errorf("gp: nil kernel")
	}
	for _, p := range k.Params() {
		if err := checkPositive(p.Name, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// RBF is the squared-exponential kernel
// Variance * exp(-(s-t)^2 / (2 Lengthscale^2)).
type RBF struct {
	Variance    float64
	Lengthscale float64
}

func (k RBF) Eval(s, t float64) float64 {
	d := (s - t) / k.Lengthscale
	return k.Variance * math.Exp(-0.5*d*d)
}

func (k RBF) Params() []Param {
	return []Param{{"variance", k.Variance}, {"lengthscale", k.Lengthscale}}
}

func (k RBF) WithParams(v []float64) (Kernel, error) {
	if err := checkValues(k, v); err != nil {
		return nil, err
	}
	return RBF{Variance: v[0], Lengthscale: v[1]}, nil
}

func (k RBF) Grad(dst []float64, s, t float64) {
	d := (s - t) / k.Lengthscale
	e := k.Variance * math.Exp(-0.5*d*d)
	dst[0] = e
	dst[1] = e * d * d
}

// Periodic is the exp-sine-squared kernel of Meehan and Chaudhuri's PER_cov:
// Variance * exp(-2 sin^2(pi |s-t| / Period) / Lengthscale^2).
type Periodic struct {
	Variance    float64
	Lengthscale float64
	Period      float64
}

func (k Periodic) Eval(s, t float64) float64 {
	sn := math.Sin(math.Pi * math.Abs(s-t) / k.Period)
	return k.Variance * math.Exp(-2*sn*sn/(k.Lengthscale*k.Lengthscale))
}

func (k Periodic) Params() []Param {
	return []Param{{"variance", k.Variance}, {"lengthscale", k.Lengthscale}, {"period", k.Period}}
}

func (k Periodic) WithParams(v []float64) (Kernel, error) {
	if err := checkValues(k, v); err != nil {
		return nil, err
	}
	return Periodic{Variance: v[0], Lengthscale: v[1], Period: v[2]}, nil
}

func (k Periodic) Grad(dst []float64, s, t float64) {
	d := math.Abs(s - t)
	l2 := k.Lengthscale * k.Lengthscale
	arg := math.Pi * d / k.Period
	sn := math.Sin(arg)
	e := k.Variance * math.Exp(-2*sn*sn/l2)
	dst[0] = e
	dst[1] = e * 4 * sn * sn / l2
	// d/dlog p of -2 sin^2(pi d/p)/l^2 = 2 sin(2 pi d/p) (pi d/p) / l^2.
	dst[2] = e * 2 * math.Sin(2*arg) * arg / l2
}

// Matern32 is the Matérn kernel with smoothness 3/2:
// Variance * (1 + u) exp(-u), u = sqrt(3) |s-t| / Lengthscale.
type Matern32 struct {
	Variance    float64
	Lengthscale float64
}

func (k Matern32) Eval(s, t float64) float64 {
	u := math.Sqrt(3) * math.Abs(s-t) / k.Lengthscale
	return k.Variance * (1 + u) * math.Exp(-u)
}

func (k Matern32) Params() []Param {
	return []Param{{"variance", k.Variance}, {"lengthscale", k.Lengthscale}}
}

func (k Matern32) WithParams(v []float64) (Kernel, error) {
	if err := checkValues(k, v); err != nil {
		return nil, err
	}
	return Matern32{Variance: v[0], Lengthscale: v[1]}, nil
}

func (k Matern32) Grad(dst []float64, s, t float64) {
	u := math.Sqrt(3) * math.Abs(s-t) / k.Lengthscale
	e := math.Exp(-u)
	dst[0] = k.Variance * (1 + u) * e
	dst[1] = k.Variance * u * u * e
}

// Matern52 is the Matérn kernel with smoothness 5/2:
// Variance * (1 + u + u^2/3) exp(-u), u = sqrt(5) |s-t| / Lengthscale.
type Matern52 struct {
	Variance    float64
	Lengthscale float64
}

func (k Matern52) Eval(s, t float64) float64 {
	u := math.Sqrt(5) * math.Abs(s-t) / k.Lengthscale
	return k.Variance * (1 + u + u*u/3) * math.Exp(-u)
}

func (k Matern52) Params() []Param {
	return []Param{{"variance", k.Variance}, {"lengthscale", k.Lengthscale}}
}

func (k Matern52) WithParams(v []float64) (Kernel, error) {
	if err := checkValues(k, v); err != nil {
		return nil, err
	}
	return Matern52{Variance: v[0], Lengthscale: v[1]}, nil
}

func (k Matern52) Grad(dst []float64, s, t float64) {
	u := math.Sqrt(5) * math.Abs(s-t) / k.Lengthscale
	e := math.Exp(-u)
	dst[0] = k.Variance * (1 + u + u*u/3) * e
	dst[1] = k.Variance * u * u * (1 + u) / 3 * e
}

// Sum is the kernel K1 + K2. Its hyperparameters are those of K1 then K2,
// named "k1.<name>" and "k2.<name>".
type Sum struct{ K1, K2 Kernel }

func (k Sum) Eval(s, t float64) float64 { return k.K1.Eval(s, t) + k.K2.Eval(s, t) }

func (k Sum) Params() []Param { return joinParams(k.K1, k.K2) }

func (k Sum) WithParams(v []float64) (Kernel, error) {
	a, b, err := splitParams(k.K1, k.K2, v)
	if err != nil {
		return nil, err
	}
	return Sum{a, b}, nil
}

func (k Sum) Grad(dst []float64, s, t float64) {
	n1 := len(k.K1.Params())
	k.K1.Grad(dst[:n1], s, t)
	k.K2.Grad(dst[n1:], s, t)
}

// Product is the kernel K1 * K2, with hyperparameters named as for Sum.
type Product struct{ K1, K2 Kernel }

func (k Product) Eval(s, t float64) float64 { return k.K1.Eval(s, t) * k.K2.Eval(s, t) }

func (k Product) Params() []Param { return joinParams(k.K1, k.K2) }

func (k Product) WithParams(v []float64) (Kernel, error) {
	a, b, err := splitParams(k.K1, k.K2, v)
	if err != nil {
		return nil, err
	}
	return Product{a, b}, nil
}

func (k Product) Grad(dst []float64, s, t float64) {
	n1 := len(k.K1.Params())
	k.K1.Grad(dst[:n1], s, t)
	k.K2.Grad(dst[n1:], s, t)
	e1, e2 := k.K1.Eval(s, t), k.K2.Eval(s, t)
	for i := range dst[:n1] {
		dst[i] *= e2
	}
	for i := range dst[n1:] {
		dst[n1+i] *= e1
	}
}

func joinParams(a, b Kernel) []Param {
	var ps []Param
	for _, p := range a.Params() {
		ps = append(ps, Param{"k1." + p.Name, p.Value})
	}
	for _, p := range b.Params() {
		ps = append(ps, Param{"k2." + p.Name, p.Value})
	}
	return ps
}

func splitParams(a, b Kernel, v []float64) (Kernel, Kernel, error) {
	n1, n2 := len(a.Params()), len(b.Params())
	if len(v) != n1+n2 {
		return nil, nil, fmt.Errorf("gp: %d hyperparameter values for a kernel with %d", len(v), n1+n2)
	}
	ka, err := a.WithParams(v[:n1])
	if err != nil {
		return nil, nil, err
	}
	kb, err := b.WithParams(v[n1:])
	if err != nil {
		return nil, nil, err
	}
	return ka, kb, nil
}
