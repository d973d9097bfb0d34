package cip

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

func TestComposeLoss(t *testing.T) {
	k := gp.RBF{Variance: 1, Lengthscale: 3}
	ts := gp.Indices(20)
	g, _ := IndependentUniform(20, 1)
	single, err := LossFactor(gp.Gram(k, ts), g, Basic(10))
	if err != nil {
		t.Fatal(err)
	}
	// A second release far away in time adds nothing (RBF decays).
	far := make([]float64, 20)
	for i := range far {
		far[i] = 1000 + float64(i)
	}
	l, err := ComposeLoss(k, [][]float64{ts, far}, []mat.Symmetric{g, g}, Basic(10))
	if err != nil {
		t.Fatal(err)
	}
	if relErr(l, single) > 1e-9 {
		t.Errorf("far release: joint %v, single %v", l, single)
	}
	// A second release shifted by half a sample leaks more.
	near := make([]float64, 20)
	for i := range near {
		near[i] = 0.5 + float64(i)
	}
	ln, err := ComposeLoss(k, [][]float64{ts, near}, []mat.Symmetric{g, g}, Basic(10))
	if err != nil {
		t.Fatal(err)
	}
	if !(ln > single*1.5) {
		t.Errorf("near release: joint %v, single %v", ln, single)
	}
	// It is (E1) on the stacked problem.
	all := append(append([]float64(nil), ts...), near...)
	want, _ := LossFactorDirect(gp.Gram(k, all), BlockDiag(g, g), Basic(10))
	if relErr(ln, want) > 1e-10 {
		t.Errorf("joint %v, direct on stacked prior %v", ln, want)
	}
	if _, err := ComposeLoss(k, [][]float64{ts}, []mat.Symmetric{g, g}, Basic(1)); err == nil {
		t.Error("mismatched releases accepted")
	}
}

func TestSecretsAndDimensions(t *testing.T) {
	if got := EveryPoint(3); len(got) != 3 || got[2].Indices[0] != 2 {
		t.Errorf("EveryPoint = %v", got)
	}
	l := Layout{Points: 10, Dims: 2}
	u := l.Unroll(Compound(3, 4))
	if want := []int{3, 4, 13, 14}; len(u.Indices) != 4 || u.Indices[2] != want[2] || u.NumLocations() != 2 {
		t.Errorf("Unroll = %+v", u)
	}
	// Two independent dimensions with the same prior and noise: the joint
	// (E1) on the unrolled problem is the per-dimension factor (the worst
	// displacement lies in one dimension), and Corollary 7.2.1's sum is
	// twice that, a valid upper bound.
	sigma := rbf(3, 10)
	g := randomNoise(newRNG(10), 10, 1)
	one, _ := LossFactor(sigma, g, Basic(4))
	joint, err := LossFactor(BlockDiag(sigma, sigma), BlockDiag(g, g), l.Unroll(Basic(4)))
	if err != nil {
		t.Fatal(err)
	}
	if relErr(joint, one) > 1e-10 {
		t.Errorf("joint 2-D %v, per dimension %v", joint, one)
	}
	if sum := CombineDimensions(one, one); math.Abs(sum-2*one) > 1e-15 || sum < joint {
		t.Errorf("CombineDimensions = %v", sum)
	}
}
