package cip

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// Every method has one canonical string that parses back to itself; the
// selectors and the older spellings parse to what they name.
func TestParseMethod(t *testing.T) {
	for _, m := range Methods() {
		got, err := ParseMethod(string(m))
		if err != nil || got != m {
			t.Errorf("%q: %v, %v", m, got, err)
		}
		if d := m.Describe(); d == "unknown" || d == "" {
			t.Errorf("%q has no description", m)
		}
	}
	for s, want := range map[string]Method{
		"": MethodAuto, "auto": MethodAuto, "paper": MethodPaper, " E3 ": MethodE3,
		"optimal": MethodE3, "e3-barrier": MethodE3, "optimal (e3-barrier)": MethodE3, "optimal (proportional)": MethodE3,
	} {
		if got, err := ParseMethod(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParseMethod("e2"); err == nil || !strings.Contains(err.Error(), "e3, proportional, envelope") {
		t.Errorf("unknown method: %v", err)
	}
	if !MethodEnvelope.Kernel() || !MethodProportional.Kernel() || MethodE3.Kernel() || !MethodPaper.Paper() || MethodE3.Paper() {
		t.Error("Kernel/Paper classification")
	}
}

// MethodE3 runs the designers it names, on the same inputs, and returns
// their certified loss factors.
func TestDesignNoiseE3(t *testing.T) {
	t.Parallel()
	sigma := rbf(4, 20)
	// One basic secret: (E2).
	want, err := OptimalBasic(sigma, 7, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DesignNoise(DesignRequest{Sigma: sigma, Secrets: []Secret{Basic(7)}, Budget: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if d.Method != MethodE3 || d.Solver != "e2" || !d.Exact || d.Set != nil || !mat.Equal(d.SigmaG, want.SigmaG) || d.LossFactors[0] != want.LossFactor {
		t.Errorf("basic budget: %s/%s, loss %v, want %v", d.Method, d.Solver, d.LossFactors, want.LossFactor)
	}
	wt, err := OptimalBasicTarget(sigma, 7, 3)
	if err != nil {
		t.Fatal(err)
	}
	if d, err = DesignNoise(DesignRequest{Method: MethodE3, Sigma: sigma, Secrets: []Secret{Basic(7)}, Targets: []float64{3}}); err != nil {
		t.Fatal(err)
	}
	if d.Solver != "e2" || d.Budget != wt.Budget || d.LossFactors[0] > 3 {
		t.Errorf("basic target: %s, budget %v want %v, loss %v", d.Solver, d.Budget, wt.Budget, d.LossFactors)
	}
	// Several secrets: (E3), target and budget mode.
	secrets := []Secret{Basic(3), Compound(10, 11), Basic(15)}
	targets, err := TargetLossFactors(secrets, 0.5, 2, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if targets[0] != 2 || targets[1] != 1 {
		t.Errorf("targets %v, want 2 per basic, 1 for the two-location secret", targets)
	}
	var stages []string
	d, err = DesignNoise(DesignRequest{Sigma: sigma, Secrets: secrets, Targets: targets, Progress: func(s string) { stages = append(stages, s) }})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := OptimalTarget(sigma, secrets, targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Solver != ws.Method || d.Set == nil || d.Budget != ws.Budget || d.LowerBound != ws.LowerBound || len(stages) != 1 {
		t.Errorf("set target: %s, budget %v want %v, bound %v want %v, stages %v", d.Solver, d.Budget, ws.Budget, d.LowerBound, ws.LowerBound, stages)
	}
	certified(t, "set target", sigma, d, secrets)
	for i, l := range d.LossFactors {
		if l > targets[i]*(1+1e-12) {
			t.Errorf("secret %d: loss %v above target %v", i, l, targets[i])
		}
	}
	if d, err = DesignNoise(DesignRequest{Sigma: sigma, Secrets: secrets, Budget: 50}); err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.Budget-50) > 1e-9*50 || d.Set == nil {
		t.Errorf("set budget: %v", d.Budget)
	}
	certified(t, "set budget", sigma, d, secrets)
	// Every point a basic secret: the closed form c Sigma.
	if d, err = DesignNoise(DesignRequest{Sigma: sigma, Secrets: EveryPoint(20), Budget: 5}); err != nil {
		t.Fatal(err)
	}
	if d.Solver != "proportional" {
		t.Errorf("every point: solver %q", d.Solver)
	}
}

// The kernel designs: target mode is DesignFamily's; budget mode scales
// the same kernel to the budget, and meets the targets of the loss factors
// it certifies.
func TestDesignNoiseKernel(t *testing.T) {
	t.Parallel()
	ts := make([]float64, 40)
	for i := range ts {
		ts[i] = 5 * float64(i)
	}
	single, err := NewEnvelope(prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 20, LengthscaleMax: 20, Variance: 100}.Set(), nil)
	if err != nil {
		t.Fatal(err)
	}
	fam, err := NewEnvelope(prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 10, LengthscaleMax: 40, Variance: 100}.Set(), nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []Secret{Basic(4), Compound(20, 21)}
	for _, c := range []struct {
		env  *Envelope
		want Method
	}{{single, MethodProportional}, {fam, MethodEnvelope}} {
		t.Run(string(c.want), func(t *testing.T) {
			d, err := DesignNoise(DesignRequest{Envelope: c.env, Times: ts, Secrets: secrets, Targets: []float64{0.01}})
			if err != nil {
				t.Fatal(err)
			}
			fd, err := DesignFamily(c.env, ts, secrets, []float64{0.01, 0.01})
			if err != nil {
				t.Fatal(err)
			}
			if d.Method != c.want || d.Family.Alpha != fd.Alpha || d.LossFactors[1] != fd.Bounds[1] || d.Exact || d.SigmaG == nil {
				t.Errorf("%v: method %s, alpha %v want %v, bounds %v want %v", c.env.Family, d.Method, d.Family.Alpha, fd.Alpha, d.LossFactors, fd.Bounds)
			}
			if math.Abs(d.Budget-mat.Trace(d.SigmaG)) > 1e-9*d.Budget {
				t.Errorf("%v: budget %v, tr SigmaG %v", c.env.Family, d.Budget, mat.Trace(d.SigmaG))
			}
			b, err := DesignNoise(DesignRequest{Method: c.want, Envelope: c.env, Times: ts, Secrets: secrets, Budget: d.Budget, KernelOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if b.SigmaG != nil || relErr(b.Family.Alpha, d.Family.Alpha) > 1e-12 || relErr(b.LossFactors[0], d.LossFactors[0]) > 1e-12 {
				t.Errorf("%v budget mode: alpha %v want %v, losses %v want %v", c.env.Family, b.Family.Alpha, d.Family.Alpha, b.LossFactors, d.LossFactors)
			}
		})
	}
	// Basic secrets under a single-lengthscale family: exact.
	d, err := DesignNoise(DesignRequest{Envelope: single, Times: ts, Secrets: EveryPoint(40), Targets: []float64{0.01}})
	if err != nil || !d.Exact {
		t.Errorf("every point, single lengthscale: exact %v, %v", d != nil && d.Exact, err)
	}
}

func TestDesignNoisePaper(t *testing.T) {
	sigma := rbf(3, 12)
	d, err := DesignNoise(DesignRequest{Method: MethodPaper, Sigma: sigma, Secrets: []Secret{Basic(5)}, Budget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Method != MethodPaperSDPA || d.Paper == nil {
		t.Errorf("one secret: %s", d.Method)
	}
	certified(t, "SDP_A", sigma, d, []Secret{Basic(5)})
	secrets := []Secret{Basic(2), Basic(8)}
	if d, err = DesignNoise(DesignRequest{Method: MethodPaper, Sigma: sigma, Secrets: secrets, Budget: 0.5}); err != nil {
		t.Fatal(err)
	}
	if d.Method != MethodPaperMultipleSecrets {
		t.Errorf("two secrets: %s", d.Method)
	}
	certified(t, "Multiple Secrets", sigma, d, secrets)
}

// certified checks the design's loss factors against (E1) on its SigmaG.
func certified(t *testing.T, what string, sigma mat.Symmetric, d *NoiseDesign, secrets []Secret) {
	t.Helper()
	g := mat.NewSymDense(d.SigmaG.SymmetricDim(), nil)
	g.CopySym(d.SigmaG)
	for i := range g.SymmetricDim() {
		g.SetSym(i, i, g.At(i, i)+d.Jitter)
	}
	ls, err := LossFactors(sigma, g, secrets)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ls {
		if relErr(ls[i], d.LossFactors[i]) > 1e-8 {
			t.Errorf("%s: secret %d: design says %v, (E1) %v", what, i, d.LossFactors[i], ls[i])
		}
	}
}

func TestDesignNoiseErrors(t *testing.T) {
	sigma := rbf(3, 10)
	env, err := NewEnvelope(prior.Family{Kernel: gp.KernelRBF, LengthscaleMin: 10, LengthscaleMax: 40}.Set(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := gp.Indices(10)
	one := []Secret{Basic(2)}
	for _, c := range []struct {
		req  DesignRequest
		want string
	}{
		{DesignRequest{Secrets: one, Budget: 1}, "no prior"},
		{DesignRequest{Sigma: sigma, Envelope: env, Times: ts, Secrets: one, Budget: 1}, "not both"},
		{DesignRequest{Sigma: sigma, Budget: 1}, "no secrets"},
		{DesignRequest{Sigma: sigma, Secrets: one}, "budget"},
		{DesignRequest{Sigma: sigma, Secrets: one, Budget: 1, Targets: []float64{1}}, "not both"},
		{DesignRequest{Sigma: sigma, Secrets: one, Targets: []float64{-1}}, "positive"},
		{DesignRequest{Sigma: sigma, Secrets: []Secret{Basic(1), Basic(2)}, Targets: []float64{1, 1, 1}}, "3 targets for 2 secrets"},
		{DesignRequest{Method: "magic", Sigma: sigma, Secrets: one, Budget: 1}, `"magic"`},
		{DesignRequest{Method: MethodEnvelope, Sigma: sigma, Secrets: one, Budget: 1}, "kernel design"},
		{DesignRequest{Method: MethodE3, Envelope: env, Times: ts, Secrets: one, Budget: 1}, "needs the prior covariance"},
		{DesignRequest{Method: MethodProportional, Envelope: env, Times: ts, Secrets: one, Budget: 1}, "single-lengthscale"},
		{DesignRequest{Method: MethodPaperSDPA, Sigma: sigma, Secrets: []Secret{Basic(1), Basic(2)}, Budget: 1}, "one secret"},
		{DesignRequest{Method: MethodPaper, Sigma: sigma, Secrets: one, Targets: []float64{1}}, "no target mode"},
		{DesignRequest{Sigma: sigma, Secrets: []Secret{Basic(10)}, Budget: 1}, "out of range"},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, err := DesignNoise(c.req)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: error %v, want it to mention %q", c.req.Method, err, c.want)
			}
		})
	}
}

func TestCheckCovariance(t *testing.T) {
	if err := CheckCovariance(rbf(6.1, 30)); err != nil {
		t.Errorf("an RBF Gram matrix (singular in floating point): %v", err)
	}
	if err := CheckCovariance(mat.NewSymDense(2, []float64{1, 2, 2, 1})); err == nil || !strings.Contains(err.Error(), "not positive semidefinite") {
		t.Errorf("indefinite: %v", err)
	}
	if err := CheckCovariance(mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("NaN: %v", err)
	}
}

func TestSecretsTwoSigma(t *testing.T) {
	sigma := rbf(3, 15)
	g, _ := IndependentUniform(15, 3)
	p, err := NewPosterior(sigma, g)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := p.TwoSigma(Compound(3, 4))
	got, err := p.SecretsTwoSigma([]Secret{Compound(3, 4)})
	if err != nil || got != one {
		t.Errorf("one secret: %v, want TwoSigma %v", got, one)
	}
	// Several: the mean over their distinct points (4 counted once).
	got, err = p.SecretsTwoSigma([]Secret{Compound(3, 4), Basic(4), Basic(9)})
	if want := p.MeanTwoSigma([]int{3, 4, 9}); err != nil || got != want {
		t.Errorf("several: %v, want %v", got, want)
	}
	if _, err := p.SecretsTwoSigma([]Secret{Basic(1), Basic(20)}); err == nil {
		t.Error("out-of-range secret accepted")
	}
}

func TestNumLocations(t *testing.T) {
	s := Compound(1, 2, 3)
	if s.NumLocations() != 3 {
		t.Errorf("NumLocations %d", s.NumLocations())
	}
	s.KLoc = 1
	if s.NumLocations() != 1 {
		t.Errorf("KLoc 1: NumLocations %d", s.NumLocations())
	}
}
