package cip

import (
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// The remembered answers are the computed ones, and noise that differs in
// one component's variance gets its own answer, not a remembered one.
func TestEdgeLossFactorsMemo(t *testing.T) {
	ks := []EdgeKernel{{Kernel: gp.KernelRBF, LengthscaleS: 20}, {Kernel: gp.KernelMatern32, LengthscaleS: 40}}
	for _, v := range []float64{100, 100.000001, 250} {
		noise := []gp.Kernel{gp.Matern12{Variance: v, Lengthscale: 50}, gp.Matern32{Variance: 2 * v, Lengthscale: 30}}
		want, err := edgeLossFactors(noise, ks)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := EdgeLossFactors(noise, ks)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("variance %v: remembered %v, computed %v", v, got, want)
			}
			got[0] = -1 // the caller's copy: must not change what is remembered
		}
	}
}
