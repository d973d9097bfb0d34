package attack_test

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/attack"
)

// The place attack from a certificate: the bundled sample has one stay of
// 15 minutes or more; FromCertificate finds it on
// the truth, estimates it from the release with the certificate's noise
// covariance (whose per-point RMS must match the certificate's stated
// rms_noise_m), reports its error as stay_error_m, subsamples when told
// to, and reports nothing when the place attack is off.
//
// The default attack is TestFromCertificateRoundTrip's (sampleAttack: the
// certificate written and read back, the same release).
func TestAttackPlacesFromCertificate(t *testing.T) {
	orig, outs, cert := sampleRelease(t, 4)
	stays, err := attack.Stays(orig[0].Points, attack.StayOptions{})
	if err != nil || len(stays) != 1 {
		t.Fatalf("the sample's stays: %+v, %v; want one", stays, err)
	}
	a := sampleAttack(t)
	rep := a.rep
	for _, b := range a.badSteps {
		t.Errorf("progress %d of %d after %d", b[0], b[1], b[2])
	}
	if a.steps != a.last || a.calls < 10 {
		t.Errorf("progress ended at %d of %d after %d calls, want the total and a call per likelihood", a.steps, a.last, a.calls)
	}
	if len(rep.Stays) != 1 || rep.StayErrorM == nil || rep.StayRule == nil {
		t.Fatalf("stays %+v, stay_error_m %v", rep.Stays, rep.StayErrorM)
	}
	s := rep.Stays[0]
	if s.Start != stays[0].Start || s.End != stays[0].End || s.Points != stays[0].Points() || s.PointsUsed != s.Points || s.UID != orig[0].UID {
		t.Errorf("stay %+v, want points %d-%d", s, stays[0].Start, stays[0].End)
	}
	if *rep.StayErrorM != s.ErrorM || !(s.ErrorM > 0) || !(s.StatedSDM > 0) || !(s.PlainMeanErrorM > 0) || math.Abs(s.DurationS-stays[0].Duration().Seconds()) > 1e-9 {
		t.Errorf("stay %+v, stay_error_m %v", s, *rep.StayErrorM)
	}
	// The noise is stationary: its per-point RMS on the stay is the
	// certificate's over the whole person (plus the output grid's nugget).
	if want := cert.Persons[0].RMSNoiseM; math.Abs(s.NoiseRMSM/want-1) > 1e-3 {
		t.Errorf("noise RMS on the stay %.3f m, certificate %.3f m", s.NoiseRMSM, want)
	}
	if rep.StayRule.RadiusM != attack.DefaultStayRadiusM || rep.StayRule.MinDurationS != 900 || rep.StayRule.MaxPoints != attack.DefaultPlaceMaxPoints {
		t.Errorf("stay rule %+v", rep.StayRule)
	}
	t.Logf("stay of %d points over %.0f s: place error %.1f m (stated SD %.1f m per coordinate), plain mean %.1f m, per-point release RMS %.1f m",
		s.Points, s.DurationS, s.ErrorM, s.StatedSDM, s.PlainMeanErrorM, s.ReleaseRMSM)

	sub, _, err := attack.FromCertificate(cert, orig, outs, attack.CertOptions{Places: attack.PlaceOptions{MaxPoints: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if s := sub.Stays[0]; s.PointsUsed != 50 || s.Points != stays[0].Points() || !(s.StatedSDM >= rep.Stays[0].StatedSDM) {
		t.Errorf("subsampled stay %+v: want 50 of %d points, a stated SD no smaller than with all (%v)", s, stays[0].Points(), rep.Stays[0].StatedSDM)
	}
	off, _, err := attack.FromCertificate(cert, orig, outs, attack.CertOptions{Places: attack.PlaceOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	if off.StayErrorM != nil || len(off.Stays) != 0 || off.StayRule != nil {
		t.Errorf("place attack off: %v, %+v", off.StayErrorM, off.Stays)
	}
	if _, _, err := attack.FromCertificate(cert, orig, outs, attack.CertOptions{SelectKernels: []string{"periodic"}}); err == nil {
		t.Error("model selection over a periodic kernel: no error")
	}
}
