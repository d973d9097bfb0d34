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
	orig, outs, cert := sampleRelease(t, 4)
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

// sampleRelease reads the bundled sample (user 000) and releases it with
// the bundled prior family at epsilon 1, lambda 2, r = 100 m from a seeded
// source: the original, the release and its certificate.
func sampleRelease(t testing.TB, seed uint64) (orig, outs []*trace.Trace, cert *sanitize.Certificate) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{UID: "000"})
	if err != nil {
		t.Fatal(err)
	}
	if orig, err = trace.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	prior, err := gp.ReadPrior(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	if outs, cert, err = sanitize.Release(orig, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(seed)}); err != nil {
		t.Fatal(err)
	}
	return orig, outs, cert
}
