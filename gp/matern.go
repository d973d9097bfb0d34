package gp

import "math"

// Matern12 is the Matérn kernel with smoothness 1/2 (the exponential, or
// Ornstein-Uhlenbeck, kernel): Variance * exp(-|s-t| / Lengthscale).
type Matern12 struct {
	Variance    float64
	Lengthscale float64
}

func (k Matern12) Eval(s, t float64) float64 {
	return k.Variance * math.Exp(-math.Abs(s-t)/k.Lengthscale)
}

func (k Matern12) Params() []Param {
	return []Param{{"variance", k.Variance}, {"lengthscale", k.Lengthscale}}
}

func (k Matern12) WithParams(v []float64) (Kernel, error) {
	if err := checkValues(k, v); err != nil {
		return nil, err
	}
	return Matern12{Variance: v[0], Lengthscale: v[1]}, nil
}

func (k Matern12) Grad(dst []float64, s, t float64) {
	u := math.Abs(s-t) / k.Lengthscale
	e := k.Variance * math.Exp(-u)
	dst[0] = e
	dst[1] = e * u
}

// Matern72 is the Matérn kernel with smoothness 7/2:
// Variance * (1 + u + 2u^2/5 + u^3/15) exp(-u), u = sqrt(7) |s-t| / Lengthscale.
type Matern72 struct {
	Variance    float64
	Lengthscale float64
}

func (k Matern72) Eval(s, t float64) float64 {
	u := math.Sqrt(7) * math.Abs(s-t) / k.Lengthscale
	return k.Variance * (1 + u + u*u*(2.0/5+u/15)) * math.Exp(-u)
}

func (k Matern72) Params() []Param {
	return []Param{{"variance", k.Variance}, {"lengthscale", k.Lengthscale}}
}

func (k Matern72) WithParams(v []float64) (Kernel, error) {
	if err := checkValues(k, v); err != nil {
		return nil, err
	}
	return Matern72{Variance: v[0], Lengthscale: v[1]}, nil
}

// Grad uses d/du [(1 + u + 2u^2/5 + u^3/15) e^-u] = -(u/15)(3 + 3u + u^2) e^-u
// and du/dlog l = -u.
func (k Matern72) Grad(dst []float64, s, t float64) {
	u := math.Sqrt(7) * math.Abs(s-t) / k.Lengthscale
	e := math.Exp(-u)
	dst[0] = k.Variance * (1 + u + u*u*(2.0/5+u/15)) * e
	dst[1] = k.Variance * u * u / 15 * (3 + 3*u + u*u) * e
}
