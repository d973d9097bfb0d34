package device_test

import (
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/internal/sample/synth"
)

// walkPLT is synth's 1 Hz walk of n points with stops (the wasm
// benchmarks' walk).
func walkPLT(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := synth.WalkPLT(n)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkPlannedRelease10k is what the on-device page does for a trace
// release (issue 33), natively: PlanRelease and Draw of a 10,000-point
// 1 Hz walk at epsilon 1, lambda 2, r = 100 m with the bundled family,
// crypto randomness. The envelope is designed before the timer starts
// (the module designs it once per page); its cost is
// BenchmarkFirstPlan's.
func BenchmarkPlannedRelease10k(b *testing.B) {
	data := walkPLT(b, 10_000)
	const opts = `{"epsilon":1,"lambda":2,"radius_m":100}`
	if _, err := device.PlanRelease(data, "plt", opts); err != nil {
		b.Fatal(err)
	}
	var plan, draw, planCPU, drawCPU time.Duration
	i := 0
	for b.Loop() {
		t0, c0 := time.Now(), processCPU()
		p, err := device.PlanRelease(data, "plt", opts)
		if err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), processCPU()
		i++
		if _, err := p.Draw("bench-" + time.Now().Format(time.RFC3339Nano) + string(rune('a'+i%26))); err != nil {
			b.Fatal(err)
		}
		plan += t1.Sub(t0)
		draw += time.Since(t1)
		planCPU += c1 - c0
		drawCPU += processCPU() - c1
	}
	n := float64(b.N)
	b.ReportMetric(plan.Seconds()/n, "s/plan")
	b.ReportMetric(draw.Seconds()/n, "s/draw")
	// CPU time beside wall time: the machine is shared (natively, the draw
	// runs on every core; in a browser, on one thread).
	b.ReportMetric(planCPU.Seconds()/n, "cpu-s/plan")
	b.ReportMetric(drawCPU.Seconds()/n, "cpu-s/draw")
}
