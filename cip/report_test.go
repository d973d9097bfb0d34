package cip

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

func TestParseSecret(t *testing.T) {
	s, err := ParseSecret(" 24, 25", 50)
	if err != nil || !slices.Equal(s.Indices, []int{24, 25}) {
		t.Fatalf(`ParseSecret(" 24, 25") = %v, %v; want [24 25]`, s.Indices, err)
	}
	var pe *param.Error
	if _, err := ParseSecret("24,x", 50); !errors.As(err, &pe) || pe.Name != "secret" || !strings.Contains(pe.Why, `"x"`) {
		t.Errorf(`ParseSecret("24,x") = %v; want a *param.Error naming "x"`, err)
	}
	// Out of range and repeated indices are Validate's errors.
	for _, spec := range []string{"50", "3,3", "-1"} {
		if _, err := ParseSecret(spec, 50); err == nil {
			t.Errorf("ParseSecret(%q, 50) accepted", spec)
		}
	}
}

func TestParseTimes(t *testing.T) {
	ts, err := ParseTimes("0, 1.5,3")
	if err != nil || !slices.Equal(ts, []float64{0, 1.5, 3}) {
		t.Fatalf("ParseTimes = %v, %v", ts, err)
	}
	for _, s := range []string{"0,0", "1,0", "0,NaN", "0,x", "0,+Inf"} {
		var pe *param.Error
		if _, err := ParseTimes(s); !errors.As(err, &pe) || pe.Name != "times" {
			t.Errorf("ParseTimes(%q) = %v; want a *param.Error", s, err)
		}
	}
}

func TestParseWindow(t *testing.T) {
	if i, j, err := ParseWindow("3:7", 10); err != nil || i != 3 || j != 7 {
		t.Fatalf("ParseWindow(3:7) = %d, %d, %v", i, j, err)
	}
	for _, s := range []string{"7:3", "3", "0:10", "-1:2", "a:b"} {
		if _, _, err := ParseWindow(s, 10); !errors.Is(err, param.ErrInvalid) {
			t.Errorf("ParseWindow(%q, 10) = %v; want a parameter error", s, err)
		}
	}
}

// TestAssessRigid recomputes the stood-still loss of independent noise by
// hand (1' (v I)^-1 1 = k/v) and the epsilons by lambda/2 r^2 L; a window
// assessed over the wrong points or epsilons at the wrong scale fail.
func TestAssessRigid(t *testing.T) {
	const n, v = 12, 0.5
	k, err := gp.NewKernel("rbf", 1, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	sigma := gp.Gram(k, gp.Indices(n))
	g := mat.NewSymDense(n, nil)
	for i := range n {
		g.SetSym(i, i, v)
	}
	r, err := AssessRigid(sigma, g, 2, 5, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.Points != 4 || r.First != 2 || r.Last != 5 {
		t.Errorf("window %+v; want points 2..5", r)
	}
	if want := 4 / v; math.Abs(r.StillLossFactor-want) > 1e-9*want {
		t.Errorf("stood-still loss factor %v, want k/v = %v", r.StillLossFactor, want)
	}
	want, err := RigidLossFactor(sigma, g, Compound(2, 3, 4, 5))
	if err != nil || r.LossFactor != want {
		t.Errorf("loss factor %v, want RigidLossFactor's %v (%v)", r.LossFactor, want, err)
	}
	// The adversary who conditions on the rest knows more than one who
	// believes the person stood still.
	if !(r.LossFactor >= r.StillLossFactor*(1-1e-9)) {
		t.Errorf("conditioned loss %v below stood-still %v", r.LossFactor, r.StillLossFactor)
	}
	if r.Epsilon == nil || math.Abs(*r.Epsilon-2.0/2*100*r.LossFactor) > 1e-9**r.Epsilon ||
		math.Abs(*r.StillEpsilon-2.0/2*100*r.StillLossFactor) > 1e-9**r.StillEpsilon {
		t.Errorf("epsilons %v, %v; want lambda/2 r^2 L", r.Epsilon, r.StillEpsilon)
	}
	if r, _ := AssessRigid(sigma, g, 0, n-1, 0, 0); r.Epsilon != nil {
		t.Errorf("epsilon %v without lambda", *r.Epsilon)
	}
}
