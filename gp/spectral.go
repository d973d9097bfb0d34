package gp

import (
	"fmt"
	"math"
)

// Spectral is a stationary kernel, k(s, t) = c(s - t), with a known
// spectral density S: c(tau) = (1/2 pi) * integral of S(w) e^{i w tau} dw
// over the real line, w in radians per unit of time.
//
// By Bochner's theorem a stationary kernel is positive semi-definite
// exactly when its spectral density is non-negative; so if S1 >= S2 at
// every frequency, k1 - k2 is a kernel, and the Gram matrices of k1 dominate
// those of k2 (in the PSD order) at any set of timestamps. That is the fact
// the robust CIP designs rest on (package cip, Envelope).
type Spectral interface {
	Kernel
	// SpectralDensity returns S(w) for w >= 0 (S is even).
	SpectralDensity(w float64) float64
	// LogSpectralDensity returns log S(w), finite where S underflows.
	LogSpectralDensity(w float64) float64
}

// SpectralDensity of the RBF kernel: Variance * l sqrt(2 pi) exp(-l^2 w^2 / 2).
func (k RBF) SpectralDensity(w float64) float64 {
	l := k.Lengthscale
	return k.Variance * l * math.Sqrt(2*math.Pi) * math.Exp(-0.5*l*l*w*w)
}

// LogSpectralDensity of the RBF kernel.
func (k RBF) LogSpectralDensity(w float64) float64 {
	l := k.Lengthscale
	return math.Log(k.Variance*l*math.Sqrt(2*math.Pi)) - 0.5*l*l*w*w
}

// maternLogDensity is the logarithm of maternDensity.
func maternLogDensity(variance, l, nu, c, w float64) float64 {
	lam := math.Sqrt(2*nu) / l
	return math.Log(variance*c/lam) - (nu+0.5)*math.Log1p(w*w/(lam*lam))
}

// maternDensity returns Variance * C lam^(2 nu) / (lam^2 + w^2)^(nu + 1/2),
// lam = sqrt(2 nu) / l, C = 2 sqrt(pi) Gamma(nu + 1/2) / Gamma(nu), the
// spectral density of the unit-variance Matérn kernel of smoothness nu
// (Rasmussen and Williams, eq. 4.15, with this package's normalisation).
// It is evaluated as C/lam * r^(nu+1/2), r = lam^2/(lam^2+w^2), so that it
// neither overflows nor underflows before the result does.
func maternDensity(variance, l, nu, c, w float64) float64 {
	lam := math.Sqrt(2*nu) / l
	r := lam * lam / (lam*lam + w*w)
	return variance * c / lam * math.Pow(r, nu+0.5)
}

// SpectralDensity of Matern12: Variance * 2 lam / (lam^2 + w^2), lam = 1/l.
func (k Matern12) SpectralDensity(w float64) float64 {
	return maternDensity(k.Variance, k.Lengthscale, 0.5, 2, w)
}

// SpectralDensity of Matern32: Variance * 4 lam^3 / (lam^2 + w^2)^2.
func (k Matern32) SpectralDensity(w float64) float64 {
	return maternDensity(k.Variance, k.Lengthscale, 1.5, 4, w)
}

// SpectralDensity of Matern52: Variance * (16/3) lam^5 / (lam^2 + w^2)^3.
func (k Matern52) SpectralDensity(w float64) float64 {
	return maternDensity(k.Variance, k.Lengthscale, 2.5, 16.0/3, w)
}

// SpectralDensity of Matern72: Variance * (32/5) lam^7 / (lam^2 + w^2)^4.
func (k Matern72) SpectralDensity(w float64) float64 {
	return maternDensity(k.Variance, k.Lengthscale, 3.5, 32.0/5, w)
}

// LogSpectralDensity of Matern12.
func (k Matern12) LogSpectralDensity(w float64) float64 {
	return maternLogDensity(k.Variance, k.Lengthscale, 0.5, 2, w)
}

// LogSpectralDensity of Matern32.
func (k Matern32) LogSpectralDensity(w float64) float64 {
	return maternLogDensity(k.Variance, k.Lengthscale, 1.5, 4, w)
}

// LogSpectralDensity of Matern52.
func (k Matern52) LogSpectralDensity(w float64) float64 {
	return maternLogDensity(k.Variance, k.Lengthscale, 2.5, 16.0/3, w)
}

// LogSpectralDensity of Matern72.
func (k Matern72) LogSpectralDensity(w float64) float64 {
	return maternLogDensity(k.Variance, k.Lengthscale, 3.5, 32.0/5, w)
}

// Smoothness returns the Matérn smoothness nu of a kernel (0.5, 1.5, 2.5 or
// 3.5) and +Inf for the RBF kernel (the limit nu -> infinity); ok is false
// for other kernels. The tail of the spectral density of a Matérn kernel
// decays as w^-(2 nu + 1): smaller nu, heavier tail.
func Smoothness(k Kernel) (nu float64, ok bool) {
	switch k.(type) {
	case Matern12:
		return 0.5, true
	case Matern32:
		return 1.5, true
	case Matern52:
		return 2.5, true
	case Matern72:
		return 3.5, true
	case RBF:
		return math.Inf(1), true
	}
	return 0, false
}

// Kernel names accepted by NewKernel, in the spelling of prior files and
// command-line flags.
const (
	KernelRBF      = "rbf"
	KernelMatern12 = "matern12"
	KernelMatern32 = "matern32"
	KernelMatern52 = "matern52"
	KernelMatern72 = "matern72"
	KernelPeriodic = "periodic"
)

// KernelNames lists the names NewKernel accepts.
var KernelNames = []string{KernelRBF, KernelMatern12, KernelMatern32, KernelMatern52, KernelMatern72, KernelPeriodic}

// NewKernel returns the kernel of the given name (KernelNames) with its
// hyperparameters; period is used by the periodic kernel only. It is the
// one place where a kernel name becomes a kernel.
func NewKernel(name string, variance, lengthscale, period float64) (Kernel, error) {
	var k Kernel
	switch name {
	case KernelRBF:
		k = RBF{Variance: variance, Lengthscale: lengthscale}
	case KernelMatern12:
		k = Matern12{Variance: variance, Lengthscale: lengthscale}
	case KernelMatern32:
		k = Matern32{Variance: variance, Lengthscale: lengthscale}
	case KernelMatern52:
		k = Matern52{Variance: variance, Lengthscale: lengthscale}
	case KernelMatern72:
		k = Matern72{Variance: variance, Lengthscale: lengthscale}
	case KernelPeriodic:
		k = Periodic{Variance: variance, Lengthscale: lengthscale, Period: period}
	default:
		return nil, fmt.Errorf("gp: kernel %q is not one of %v", name, KernelNames)
	}
	if err := Validate(k); err != nil {
		return nil, err
	}
	return k, nil
}

// KernelName returns the NewKernel name of a kernel built by NewKernel, and
// "" for other kernels (sums, products).
func KernelName(k Kernel) string {
	switch k.(type) {
	case RBF:
		return KernelRBF
	case Matern12:
		return KernelMatern12
	case Matern32:
		return KernelMatern32
	case Matern52:
		return KernelMatern52
	case Matern72:
		return KernelMatern72
	case Periodic:
		return KernelPeriodic
	}
	return ""
}
