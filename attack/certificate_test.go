package attack_test

import (
	"bytes"
	"testing"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// The library round trip a Go user would write: sanitise with package
// sanitize, write the certificate, read it back, and attack the release
// from it alone. The attack never does worse than reading the release, and
// its report says where it stands against the certificate.
func TestFromCertificateRoundTrip(t *testing.T) {
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{UID: "000"})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := gp.ReadPrior(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	outs, cert, err := sanitize.Release(orig, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(4)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sanitize.WriteCertificate(&buf, cert); err != nil {
		t.Fatal(err)
	}
	back, err := sanitize.ReadCertificate(&buf)
	if err != nil {
		t.Fatal(err)
	}
	rep, recs, err := attack.FromCertificate(back, orig, outs, attack.CertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Len() != orig[0].Len() || rep.SecretPoints != orig[0].Len() || len(rep.Persons) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if !(rep.RMSE > 0 && rep.RMSE <= rep.ReleaseRMSE) {
		t.Errorf("reconstruction RMSE %v m against the release's %v m", rep.RMSE, rep.ReleaseRMSE)
	}
	if p := rep.Persons[0]; p.EpsilonCertified != cert.EpsilonMax || p.UID != "000" {
		t.Errorf("person %+v", p)
	}
	t.Logf("reconstruction %.1f m, release %.1f m, within %g m: %.2f, coverage %.2f", rep.RMSE, rep.ReleaseRMSE, rep.RadiusM, rep.WithinRadius, rep.Coverage95)
}
