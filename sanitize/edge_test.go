package sanitize

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// TestCertificateEdge checks what a certificate states about the kernels
// just outside its family (issue 31): every standard kernel below each
// family kernel's range down to the fixes' spacing, epsilons that an
// independent dense recomputation of every point's loss from the
// certificate's own noise covariance (NoiseCovariance) never exceeds, the
// legend and the headline meaning naming the family, and a round trip.
// Negative control: the point epsilon of a member (the certified one) is
// exceeded by the dense loss just below the family, so an edge that
// repeated it would fail.
func TestCertificateEdge(t *testing.T) {
	v := 300.0 * 300
	pr := &prior.Prior{Version: 3, Kernel: gp.KernelMatern32, Variance: v, Lengthscale: 600,
		FamilySet: &prior.FamilySet{Kernels: []prior.Family{
			{Kernel: gp.KernelMatern32, LengthscaleMin: 100, LengthscaleMax: 7200, Variance: v},
			{Kernel: gp.KernelMatern52, LengthscaleMin: 90, LengthscaleMax: 7200, Variance: v},
		}}}
	cov := 0.95
	pr.FamilySet.HeldOutCoverage = &cov
	tr := walk(120, 39.95, 116.35) // 1-4 s apart: mean spacing 2.5 s
	_, cert, err := Trace(tr, options(pr))
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Edge) == 0 || cert.EdgeBound == "" {
		t.Fatalf("no edge stated: %+v", cert.Edge)
	}
	seen := map[string]bool{}
	for _, e := range cert.Edge {
		seen[e.Kernel] = true
		if !(e.Epsilon > 0) || !(e.LengthscaleS >= 1) {
			t.Errorf("edge %+v", e)
		}
	}
	for _, k := range cip.EdgeStandardKernels {
		if !seen[k] {
			t.Errorf("no edge entry for %s", k)
		}
	}
	for _, w := range []string{"against Matérn 3/2, 5/2 priors 90 s–2 h, 95 % of held-out windows"} {
		if !strings.Contains(cert.Legend(), w) || !strings.Contains(cert.LegendText, w) || !strings.Contains(cert.Meaning.Text, w) {
			t.Errorf("legend %q / meaning %q lack %q", cert.Legend(), cert.Meaning.Text, w)
		}
	}

	// Dense recomputation from the certificate: every point's (E1) loss
	// under the edge kernel, at the person's timestamps.
	p := cert.Persons[0]
	ts := secondsOf(t, tr.Points)
	g, err := cert.NoiseCovariance(p, ts)
	if err != nil {
		t.Fatal(err)
	}
	broken := false
	checked := 0
	for _, e := range cert.Edge {
		if e.LengthscaleS > 2000 && e.Kernel != gp.KernelRBF {
			continue // above the range: one trace of 5 minutes says little there
		}
		k, _ := gp.NewKernel(e.Kernel, 1, e.LengthscaleS, 0)
		sigma := gp.Gram(k, ts)
		worst := 0.0
		for i := 0; i < len(ts); i += 7 {
			lf, err := cip.LossFactorDirect(sigma, g, cip.Secret{Indices: []int{i}})
			if err != nil {
				t.Fatalf("%+v point %d: %v", e, i, err)
			}
			worst = math.Max(worst, cip.Epsilon(lf, cert.Lambda, cert.RadiusM, 1))
		}
		checked++
		if worst > e.Epsilon*(1+1e-9) {
			t.Errorf("%s at %.4g s: dense point epsilon %.6g above the stated edge %.6g", e.Kernel, e.LengthscaleS, worst, e.Epsilon)
		}
		if worst > cert.SecretClasses.Points.Epsilon {
			broken = true
		}
	}
	if checked < 10 {
		t.Errorf("only %d edge entries checked", checked)
	}
	if !broken {
		t.Error("negative control: no dense loss outside the family exceeds the members' point epsilon; the edge would not be needed")
	}

	var buf bytes.Buffer
	if err := WriteCertificate(&buf, cert); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCertificate(&buf)
	if err != nil || len(back.Edge) != len(cert.Edge) || back.Edge[0] != cert.Edge[0] || back.PriorFamily.HeldOutCoverage == nil || *back.PriorFamily.HeldOutCoverage != cov {
		t.Errorf("round trip: %v, %+v", err, back)
	}
	if !strings.Contains(cert.EdgeSummary(), "just below the family") {
		t.Errorf("edge summary %q", cert.EdgeSummary())
	}
}
