package geoind

import (
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// TestAuditNoisePower: the noise audit flags planar Laplace and the
// predictive mechanism with 0.7 times their noise in at least 9 of 10
// seeded audits, and the correct builds in at most 2 of 10 (each is flagged
// with probability 5 % at most; P(>= 3 of 10) = 1.2 %). -short keeps one
// seed of each.
func TestAuditNoisePower(t *testing.T) {
	seeds := 10
	if testing.Short() {
		seeds = 1
	}
	for _, mech := range []string{AuditPlanarLaplace, AuditPredictive} {
		for _, f := range []float64{0.7, 1} {
			flagged := 0
			lo, hi := 1e300, 0.0
			for s := range seeds {
				rep, err := AuditNoise(NoiseAuditOptions{Mechanism: mech, NoiseFactor: f, Src: noise.Seeded(uint64(3400 + s))})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Violation {
					flagged++
				}
				lo, hi = min(lo, rep.EpsilonLower/rep.Epsilon), max(hi, rep.EpsilonLower/rep.Epsilon)
			}
			t.Logf("%s at noise factor %g: flagged %d/%d, epsilon_lower/epsilon %.3f-%.3f", mech, f, flagged, seeds, lo, hi)
			if f < 1 && 10*flagged < 9*seeds {
				t.Errorf("%s with 0.7 times its noise flagged in %d of %d audits, want >= 90 %%", mech, flagged, seeds)
			}
			if f == 1 && (flagged > seeds/5 || (seeds == 1 && flagged > 0)) {
				t.Errorf("correct %s flagged in %d of %d audits", mech, flagged, seeds)
			}
		}
	}
}

// TestAuditNoiseRefusesBadOptions: the weakened build is reachable only
// through a factor in (0, 1), and the errors name the option.
func TestAuditNoiseRefusesBadOptions(t *testing.T) {
	for _, o := range []NoiseAuditOptions{
		{Mechanism: "laplace"}, {Mechanism: AuditPlanarLaplace, NoiseFactor: 1.5},
		{Mechanism: AuditPlanarLaplace, NoiseFactor: -1}, {Mechanism: AuditPlanarLaplace, Confidence: 1},
	} {
		if _, err := AuditNoise(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if (PlanarLaplace{Grid: 1}).factor() != 1 {
		t.Error("a PlanarLaplace built outside the audit is weakened")
	}
}

// BenchmarkAuditNoiseFalseAlarms measures the noise audit's false alarms on
// the correct mechanisms over 200 seeded audits (each flagged with
// probability at most 5 % by the proof) and its cost per audit:
// go test ./geoind -run XXX -bench AuditNoiseFalseAlarms -benchtime 1x.
func BenchmarkAuditNoiseFalseAlarms(b *testing.B) {
	for _, mech := range []string{AuditPlanarLaplace, AuditPredictive} {
		b.Run(mech, func(b *testing.B) {
			const seeds = 200
			for range b.N {
				flagged := 0
				for s := range seeds {
					rep, err := AuditNoise(NoiseAuditOptions{Mechanism: mech, Src: noise.Seeded(uint64(100000 + s))})
					if err != nil {
						b.Fatal(err)
					}
					if rep.Violation {
						flagged++
					}
				}
				b.ReportMetric(float64(flagged)/seeds, "flag_rate")
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*seeds), "ms/audit")
		})
	}
}
