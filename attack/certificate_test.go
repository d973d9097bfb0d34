package attack_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// The library round trip a Go user would write: sanitise with package
// sanitize, write the certificate, read it back, and attack the release
// from it alone. The attack never does worse than reading the release, and
// its report says where it stands against the certificate.
func TestFromCertificateRoundTrip(t *testing.T) {
	orig, _, cert := sampleRelease(t, 4)
	a := sampleAttack(t)
	rep, recs := a.rep, a.recs
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
// source: the original, the release and its certificate. The release (1 s)
// is made once per seed per test binary and shared: callers only read it.
func sampleRelease(t testing.TB, seed uint64) (orig, outs []*trace.Trace, cert *sanitize.Certificate) {
	t.Helper()
	sampleReleases.Lock()
	defer sampleReleases.Unlock()
	if r, ok := sampleReleases.m[seed]; ok {
		return r.orig, r.outs, r.cert
	}
	orig = sampleTraces(t)
	prior, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	if outs, cert, err = sanitize.Release(orig, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(seed)}); err != nil {
		t.Fatal(err)
	}
	if sampleReleases.m == nil {
		sampleReleases.m = map[uint64]sampleRel{}
	}
	sampleReleases.m[seed] = sampleRel{orig, outs, cert}
	return orig, outs, cert
}

// sampleAttack is the default attack (places on) of sampleRelease(4)
// from its certificate written and read back, with its progress calls
// recorded: TestFromCertificateRoundTrip and TestAttackPlacesFromCertificate
// read the same attack, made once per test binary.
func sampleAttack(t testing.TB) *sampleAtt {
	t.Helper()
	sampleAttacks.Lock()
	defer sampleAttacks.Unlock()
	if sampleAttacks.a != nil {
		return sampleAttacks.a
	}
	orig, outs, cert := sampleRelease(t, 4)
	var buf bytes.Buffer
	if err := sanitize.WriteCertificate(&buf, cert); err != nil {
		t.Fatal(err)
	}
	back, err := sanitize.ReadCertificate(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a := &sampleAtt{}
	a.rep, a.recs, err = attack.FromCertificate(back, orig, outs, attack.CertOptions{Progress: func(done, total int, _ string) {
		a.calls++
		if done > total || done < a.steps {
			a.badSteps = append(a.badSteps, [3]int{done, total, a.steps})
		}
		a.steps, a.last = done, total
	}})
	if err != nil {
		t.Fatal(err)
	}
	sampleAttacks.a = a
	return a
}

type sampleAtt struct {
	rep                *attack.CertReport
	recs               []*trace.Trace
	steps, last, calls int
	badSteps           [][3]int // progress calls that went back or past the total: done, total, previous done
}

var sampleAttacks struct {
	sync.Mutex
	a *sampleAtt
}

type sampleRel struct {
	orig, outs []*trace.Trace
	cert       *sanitize.Certificate
}

var sampleReleases struct {
	sync.Mutex
	m map[uint64]sampleRel
}

// sampleTraces reads the bundled sample (user 000), a fresh copy.
func sampleTraces(t testing.TB) []*trace.Trace {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{UID: "000"})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return orig
}

// One file of a corpus release: a person released with two traces, then
// attacked on one of them with the person's certificate. The traces are
// found by their times (whatever their position), the report says how
// many of the certified points were attacked, and a trace that is not in
// the certificate is refused with what to do. The trips are the sample's
// first 100 fixes (the whole 274-fix sample before session 43): what is
// checked is which points are attacked, not how well.
func TestFromCertificatePartialPerson(t *testing.T) {
	prior, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	orig := sampleTraces(t)
	orig[0].Points = orig[0].Points[:100]
	// Two trips of one person: the sample's start, and the same a day later.
	later := &trace.Trace{UID: orig[0].UID, Name: "later"}
	for _, p := range orig[0].Points {
		p.Time = p.Time.Add(24 * time.Hour)
		later.Points = append(later.Points, p)
	}
	both := []*trace.Trace{orig[0], later}
	rel, cert, err := sanitize.Release(both, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(5)})
	if err != nil {
		t.Fatal(err)
	}
	rep, recs, err := attack.FromCertificate(cert, both[1:], rel[1:], attack.CertOptions{Places: attack.PlaceOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Persons[0]
	if p.Points != later.Len() || p.CertifiedPoints != 2*later.Len() || len(recs) != 1 || recs[0].Len() != later.Len() {
		t.Fatalf("attacked %d of %d certified points, %d reconstructions", p.Points, p.CertifiedPoints, len(recs))
	}
	if p.Adversary.East.Path != attack.PathStateSpace || !(rep.RMSE > 0 && rep.RMSE <= rep.ReleaseRMSE) {
		t.Errorf("path %q, RMSE %.1f m against the release's %.1f m", p.Adversary.East.Path, rep.RMSE, rep.ReleaseRMSE)
	}
	full, _, err := attack.FromCertificate(cert, both, rel, attack.CertOptions{Places: attack.PlaceOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	if q := full.Persons[0]; q.Points != q.CertifiedPoints || q.Points != 2*later.Len() {
		t.Errorf("whole person: %d of %d points", q.Points, q.CertifiedPoints)
	}
	t.Logf("one trip of two: RMSE %.1f m; both: %.1f m; release %.1f m", rep.RMSE, full.RMSE, full.ReleaseRMSE)
	// A trace of no certificate.
	other := &trace.Trace{UID: "x", Points: later.Points[:10]}
	if _, _, err := attack.FromCertificate(cert, []*trace.Trace{other}, []*trace.Trace{other}, attack.CertOptions{}); err == nil || !strings.Contains(err.Error(), "not a trace of the certificate") {
		t.Errorf("a trace of no certificate: %v", err)
	}
}
