package device_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/trace"
)

func samplePLT(t *testing.T) []byte {
	t.Helper()
	traces, err := sample.Traces()
	if err != nil {
		t.Fatal(err)
	}
	var plt bytes.Buffer
	if err := trace.Write(&plt, traces[:1], trace.PLT); err != nil {
		t.Fatal(err)
	}
	return plt.Bytes()
}

type releasedDoc struct {
	Trace, Certificate string
	Digest             string  `json:"certificate_sha256"`
	EpsilonMax         float64 `json:"epsilon_max"`
	Seconds            float64
	Randomness         string
}

func decodeReleased(t *testing.T, b []byte) releasedDoc {
	t.Helper()
	var r releasedDoc
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanChargesTheExactCertificate checks charge before draw: the
// digest a Plan names before anything is drawn is the SHA-256 of the very
// certificate bytes the draw then carries, on the crypto path and the
// seeded one, and a seeded plan draws exactly what ReleaseSeeded releases.
// On the code before the plan (the certificate held the time the release
// took) no digest known before the draw could match.
func TestPlanChargesTheExactCertificate(t *testing.T) {
	plt := samplePLT(t)
	const opts = `{"epsilon":1,"lambda":2,"radius_m":100,"uid":"p"}`
	p, err := device.PlanReleaseSeeded(plt, "plt", opts, 9)
	if err != nil {
		t.Fatal(err)
	}
	var charge struct {
		Mechanism         string  `json:"mechanism"`
		Epsilon           float64 `json:"epsilon"`
		RadiusM           float64 `json:"radius_m"`
		Lambda            float64 `json:"lambda"`
		CertificateSHA256 string  `json:"certificate_sha256"`
	}
	if err := json.Unmarshal([]byte(p.Charge()), &charge); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(p.Certificate())); hex.EncodeToString(sum[:]) != p.CertificateSHA256() || charge.CertificateSHA256 != p.CertificateSHA256() {
		t.Fatalf("the plan's digest %s is not its certificate's (charge names %s)", p.CertificateSHA256(), charge.CertificateSHA256)
	}
	out, err := p.Draw("c-plan-seeded")
	if err != nil {
		t.Fatal(err)
	}
	got := decodeReleased(t, out)
	if got.Digest != p.CertificateSHA256() || got.Certificate != p.Certificate() {
		t.Errorf("drawn certificate sha256 %s, planned %s", got.Digest, p.CertificateSHA256())
	}
	if charge.Mechanism != "cip" || charge.Epsilon != got.EpsilonMax || charge.RadiusM != 100 || charge.Lambda != 2 {
		t.Errorf("charge %+v for a release certified at %v", charge, got.EpsilonMax)
	}
	if !(got.Seconds > 0) || !strings.Contains(got.Certificate, `"seconds": 0`) {
		t.Errorf("the time taken (%v s) must be beside the certificate, not in it", got.Seconds)
	}
	ref, err := device.ReleaseSeeded(plt, "plt", opts, 9)
	if err != nil {
		t.Fatal(err)
	}
	if want := decodeReleased(t, ref); want.Trace != got.Trace || want.Certificate != got.Certificate {
		t.Errorf("a seeded plan's draw differs from ReleaseSeeded's")
	}

	// The crypto path: the certificate planned is the one drawn under.
	q, err := device.PlanRelease(plt, "plt", opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err = q.Draw("c-plan-crypto")
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeReleased(t, out); r.Digest != q.CertificateSHA256() || r.Randomness != "crypto" {
		t.Errorf("crypto: drawn digest %s, planned %s, randomness %q", r.Digest, q.CertificateSHA256(), r.Randomness)
	}
	if q.CertificateSHA256() == p.CertificateSHA256() {
		t.Errorf("a crypto and a seeded release name the same certificate: the digest does not cover the randomness")
	}
}

// TestOneDrawPerCharge checks that a charge pays for one draw: a plan
// drawn twice, another plan drawn for a used charge id, a second session
// for a session's charge and a charge id restored from storage are all
// refused with ErrCharged, and nothing is released for them.
func TestOneDrawPerCharge(t *testing.T) {
	plt := samplePLT(t)
	const opts = `{"epsilon":1,"lambda":2,"radius_m":100}`
	p, err := device.PlanReleaseSeeded(plt, "plt", opts, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Draw(""); err == nil {
		t.Fatal("a draw without a charge id was not refused")
	}
	if _, err := p.Draw("c-once"); err != nil {
		t.Fatal(err)
	}
	if out, err := p.Draw("c-once"); !errors.Is(err, device.ErrCharged) || out != nil {
		t.Errorf("the same charge drawn twice: %v, %d bytes", err, len(out))
	}
	if out, err := p.Draw("c-other"); !errors.Is(err, device.ErrCharged) || out != nil {
		t.Errorf("a drawn plan drawn again for another charge: %v, %d bytes", err, len(out))
	}
	q, err := device.PlanReleaseSeeded(plt, "plt", opts, 3)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := q.Draw("c-once"); !errors.Is(err, device.ErrCharged) || out != nil {
		t.Errorf("a replayed charge drawn by a new plan: %v, %d bytes", err, len(out))
	}
	if _, err := device.NewChargedSession(testConfig, "c-session"); err != nil {
		t.Fatal(err)
	}
	if s, err := device.NewChargedSession(testConfig, "c-session"); !errors.Is(err, device.ErrCharged) || s != nil {
		t.Errorf("a second session for one charge: %v", err)
	}
	// What a page stored survives a reload: restored ids are claimed.
	var ids []string
	if err := json.Unmarshal([]byte(device.Claims()), &ids); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c-once", "c-session"} {
		found := false
		for _, id := range ids {
			found = found || id == want
		}
		if !found {
			t.Errorf("Claims() = %s lacks %s", device.Claims(), want)
		}
	}
	if err := device.RestoreClaims(`["c-restored"]`); err != nil {
		t.Fatal(err)
	}
	if out, err := q.Draw("c-restored"); !errors.Is(err, device.ErrCharged) || out != nil {
		t.Errorf("a restored charge id drawn: %v", err)
	}
	// The negative control: a fresh charge id draws.
	if _, err := q.Draw("c-fresh"); err != nil {
		t.Errorf("a fresh charge was refused: %v", err)
	}
	if err := device.RestoreClaims(`{"c":1}`); err == nil {
		t.Error("a malformed claims list was accepted")
	}
}
