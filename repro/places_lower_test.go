package repro

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// BenchmarkPlacesLowerBound runs "tracepriv repro places-lower-bound" on
// the traces where issue 31's RMS targets are measured: the first 1,000
// fixes of GeoLife 000/20081028003826.plt (BenchmarkNoiseCost's trace) and
// the whole 1,477-fix, 4.4-hour trace (TestPlacesEveryLength's), with the
// bundled family, epsilon 1, lambda 2, r = 100 m, for two constraint sets
// (PlacesLowerSets): "stays", 30-, 50- and 90-minute stays from every
// point (one in two on the longer trace, to keep the run within minutes:
// a subset of the windows still gives a valid bound) against each
// kernel's shortest member, six rounds of the trial (four on the longer
// trace); and "all", those stays plus the ladder of durations, every
// kernel's range ends and middle, single points and the route, with at
// most 150 (120) windows per added duration and three rounds. It reports
// the lower bound on rms_noise_m of every Gaussian mechanism certifying
// those constraints (bound_rms_m), the RMS of a noise the computation
// found that certifies them (design_rms_m), and the default's and
// PlacesEveryLength's RMS. The every-window cases add cutting planes from
// every contiguous window (200 per member a round, up to six rounds,
// stopping once a round raises the bound by under 0.5 m) and report the
// RMS of a noise found that certifies every window
// (every_window_design_rms_m); one adds members at 25, 30 and 40 s. It is
// skipped when the data set is not beside the repository.
func BenchmarkPlacesLowerBound(b *testing.B) {
	const file = "../../shared/data/geolife/000/20081028003826.plt"
	if _, err := os.Stat(file); err != nil {
		b.Skip("GeoLife data not found:", err)
	}
	for _, c := range []struct {
		name, set                        string
		points, stride, round, maxStarts int
		every                            bool
		extra                            []float64
	}{
		{"1000-points", PlacesLowerStays, 1000, 1, 6, 0, false, nil},
		{"held-out-4.4h-stride-2", PlacesLowerStays, 0, 2, 4, 0, false, nil},
		{"1000-points-all", PlacesLowerAll, 1000, 1, 3, 150, false, nil},
		{"held-out-4.4h-stride-2-all", PlacesLowerAll, 0, 2, 3, 120, false, nil},
		{"1000-points-all-every-window", PlacesLowerAll, 1000, 1, 6, 150, true, nil},
		{"1000-points-all-every-window-short-lengthscales", PlacesLowerAll, 1000, 1, 6, 150, true, []float64{25, 30, 40}},
		{"held-out-4.4h-stride-2-all-every-window", PlacesLowerAll, 0, 2, 6, 120, true, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			opt, err := PlacesLowerSet(PlacesLowerOptions{Stride: c.stride, Rounds: c.round, MaxStarts: c.maxStarts,
				EveryWindow: c.every, ExtraLengthscales: c.extra}, c.set)
			if c.every {
				opt.StopBelowM = 0.5
			}
			if err != nil {
				b.Fatal(err)
			}
			var rep *PlacesLower
			for b.Loop() {
				rep, err = runPlacesLowerPrefix(file, c.points, opt)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rep.Bound.RMSNoiseM, "bound_rms_m")
			b.ReportMetric(rep.Bound.DesignRMSM, "design_rms_m")
			b.ReportMetric(rep.DefaultRMSM, "default_rms_m")
			b.ReportMetric(rep.EveryLengthRMSM, "every_length_rms_m")
			if c.every {
				b.ReportMetric(rep.Bound.EveryWindowDesignRMSM, "every_window_design_rms_m")
			}
		})
	}
}

// TestPlacesLowerSets checks what each constraint set adds, on the
// bundled prior and a synthetic 2-hour trace (no bound is computed): each
// set contains the last; "lengthscales" takes each Matérn kernel's
// shortest, geometric middle and longest lengthscale at its least
// variance; "all" adds every point alone (capped by MaxStarts) and the
// whole trace once; ladder durations not shorter than the span are left
// out.
func TestPlacesLowerSets(t *testing.T) {
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	ts := make([]float64, 721)
	for i := range ts {
		ts[i] = 10 * float64(i)
	}
	prev := 0
	for k, name := range PlacesLowerSets {
		opt, err := PlacesLowerSet(PlacesLowerOptions{MaxStarts: 100}, name)
		if err != nil {
			t.Fatal(err)
		}
		opt.defaults()
		rep := &PlacesLower{}
		ws := placesLowerWindows(ts, opt, rep)
		members := placesLowerMembers(pr.Families(), max(opt.Lengthscales, 1), nil)
		if n := len(ws) * len(members); n <= prev {
			t.Errorf("set %s: %d constraints, not more than the set before's %d", name, n, prev)
		} else {
			prev = n
		}
		wantMembers := 3
		if k >= 2 {
			wantMembers = 9
		}
		if len(members) != wantMembers {
			t.Errorf("set %s: %d members, want %d", name, len(members), wantMembers)
		}
		last := rep.Classes[len(rep.Classes)-1]
		if got := last.Class == "route"; got != (k == 3) {
			t.Errorf("set %s: last class %q", name, last.Class)
		}
		if k == 3 {
			if rep.Classes[0].Class != "points" || rep.Classes[0].Windows > 100 || ws[0].First != ws[0].Last {
				t.Errorf("set all: first class %+v, window %v: want at most 100 single points", rep.Classes[0], ws[0])
			}
			if w := ws[len(ws)-1]; w.First != 0 || w.Last != len(ts)-1 {
				t.Errorf("set all: the route's window is %v", w)
			}
		}
		for _, c := range rep.Classes {
			if c.DurationS >= 7200 && c.Class != "route" {
				t.Errorf("set %s: class %s at or beyond the 2-hour span", name, c.Class)
			}
		}
	}
	members := placesLowerMembers(pr.Families(), 3, nil)
	// The short lengthscales where the dual weight sits: one member per
	// kernel at each, inside every kernel's range; one already present or
	// outside a range is not added twice or at all.
	extra := placesLowerMembers(pr.Families(), 3, []float64{25, 30, 40, 20, 10})
	if len(extra) != 18 {
		t.Errorf("with lengthscales 25, 30, 40 s (and 20 s, present, and 10 s, outside): %d members, want 18", len(extra))
	}
	members = extra
	for _, m := range members {
		var fam prior.Family
		for _, f := range pr.Families().Kernels {
			if f.Kernel == m.Kernel {
				fam = f
			}
		}
		if m.Lengthscale < fam.LengthscaleMin*(1-1e-12) || m.Lengthscale > fam.LengthscaleMax*(1+1e-12) || m.Variance != fam.Variance {
			t.Errorf("member %+v outside its kernel's family %+v", m, fam)
		}
	}
	if mid := extra[1].Lengthscale; math.Abs(mid-math.Sqrt(20*720000)) > 1e-6*mid {
		t.Errorf("Matérn 1/2's middle member at %g s, want the geometric middle %g s", mid, math.Sqrt(20*720000))
	}
	if _, err := PlacesLowerSet(PlacesLowerOptions{}, "everything"); err == nil {
		t.Error("an unknown set is accepted")
	}
}

// runPlacesLowerPrefix runs RunPlacesLower on the first n points of file
// (all when n is 0) with the bundled prior and the settings.
func runPlacesLowerPrefix(file string, n int, opt PlacesLowerOptions) (*PlacesLower, error) {
	trs, _, err := trace.ReadFile(file, trace.ReadOptions{})
	if err != nil {
		return nil, err
	}
	tr := joinInTime(trs)
	if n > 0 && n < len(tr.Points) {
		tr.Points = tr.Points[:n]
	}
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		return nil, err
	}
	opt.Prior = pr
	return RunPlacesLower(tr, opt)
}
