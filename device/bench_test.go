package device_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/trace"
)

// walkPLT is a 1 Hz walk of n points with stops, as PLT (the wasm
// benchmarks' walk).
func walkPLT(tb testing.TB, n int) []byte {
	tb.Helper()
	tr := &trace.Trace{UID: "walker"}
	t0 := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	lat, lon := 39.9842, 116.3184
	for i := range n {
		v := 3 * math.Max(0, math.Sin(float64(i)/900))
		h := float64(i) / 400
		lat += v * math.Cos(h) / 111_000
		lon += v * math.Sin(h) / 85_000
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * time.Second), Lat: lat, Lon: lon, Alt: math.NaN()})
	}
	var b bytes.Buffer
	if err := trace.Write(&b, []*trace.Trace{tr}, trace.PLT); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
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
