// "tracepriv repro places-lower-bound" as one call (RunPlacesLower): the
// least noise any Gaussian mechanism needs to certify a trace's stays
// against every member of the family (issue 31, items 5-6), beside what
// the default and PlacesEveryLength releases cost.

package repro

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// PlacesLowerOptions configures RunPlacesLower. Zero values take the
// issue's settings: stays of 30, 50 and 90 minutes from every point
// against each Matérn kernel's shortest member, epsilon 1, lambda 2, r =
// 100 m, four rounds of the trial and no weight steps (Steps), a 400 m
// target. PlacesLowerSet adds the constraint classes a certificate
// meeting issue 31's Done-when must also satisfy.
type PlacesLowerOptions struct {
	Prior                   *prior.Prior
	Durations               []float64 // seconds
	Stride                  int
	Epsilon, Lambda, Radius float64
	Steps, Rounds           int
	TargetRMSM              float64
	// Ladder adds stays of each of these durations (seconds) shorter
	// than the trace's span to Durations; Lengthscales > 1 takes that
	// many members per Matérn kernel, geometric from the family's
	// shortest to its longest lengthscale (both ends, the middle when
	// odd); Points adds every point alone (a basic secret), Route the
	// whole trace.
	Ladder       []float64
	Lengthscales int
	Points       bool
	Route        bool
	// MaxStarts caps the windows of each Ladder duration not in
	// Durations, and the single points: their starts are thinned evenly
	// (a larger stride) to at most this many; 0 means no cap. A subset of
	// the windows still gives a valid bound.
	MaxStarts int
	// EveryWindow adds cutting planes from every contiguous window of the
	// trace against every member (cip.PlaceLowerRequest.EveryWindow):
	// CutWindows (0: 200) of each member's worst a round, the rounds
	// stopping once one raises the bound by less than StopBelowM (m; 0:
	// every round).
	EveryWindow bool
	CutWindows  int
	StopBelowM  float64
	// ExtraLengthscales (seconds) adds a member per Matérn kernel at each
	// of these lengthscales inside the kernel's range (issue 31: where
	// the dual weight sits, just above the family's shortest).
	ExtraLengthscales []float64
}

func (o *PlacesLowerOptions) defaults() {
	if len(o.Durations) == 0 {
		o.Durations = []float64{30 * 60, 50 * 60, 90 * 60}
	}
	if o.Epsilon == 0 {
		o.Epsilon = 1
	}
	if o.Lambda == 0 {
		o.Lambda = 2
	}
	if o.Radius == 0 {
		o.Radius = 100
	}
	if o.Rounds == 0 {
		o.Rounds = 4
	}
	if o.TargetRMSM == 0 {
		o.TargetRMSM = 400
	}
}

// The constraint sets of issue 31's Done-when, each containing the last
// (PlacesLowerSet).
const (
	// PlacesLowerStays: stays of 30, 50 and 90 minutes against each
	// Matérn kernel's shortest member ("stays of 30, 50 and 90+ minutes
	// ... incl. lengthscales shorter than the stay").
	PlacesLowerStays = "stays"
	// PlacesLowerDurations adds the ladder of durations from a minute to
	// the trace's span (PlacesLowerLadder): the places class covers every
	// contiguous window, "90+" every stay longer than 90 minutes.
	PlacesLowerDurations = "durations"
	// PlacesLowerLengthscales adds each kernel's range middle and longest
	// end ("at every family member's range ends and middle").
	PlacesLowerLengthscales = "lengthscales"
	// PlacesLowerAll adds every point alone ("points within the certified
	// point epsilon for every member") and the whole trace (the route
	// class, which the certificate's epsilon_max holds to the same
	// epsilon).
	PlacesLowerAll = "all"
)

// PlacesLowerSets lists the sets in order, each containing the last.
var PlacesLowerSets = []string{PlacesLowerStays, PlacesLowerDurations, PlacesLowerLengthscales, PlacesLowerAll}

// PlacesLowerLadder is the ladder of stay durations (seconds) the
// durations set adds, roughly doubling from a minute to four hours;
// durations not shorter than the trace's span are left out (the whole
// trace is the route).
var PlacesLowerLadder = []float64{60, 120, 300, 600, 1200, 2400, 4200, 7200, 10800, 14400}

// PlacesLowerSet returns opt with the named set's constraint classes
// (PlacesLowerSets), its other fields kept.
func PlacesLowerSet(opt PlacesLowerOptions, name string) (PlacesLowerOptions, error) {
	i := slices.Index(PlacesLowerSets, name)
	if i < 0 {
		return opt, fmt.Errorf("constraint set %q: want one of %v", name, PlacesLowerSets)
	}
	opt.Ladder, opt.Lengthscales, opt.Points, opt.Route = nil, 1, false, false
	if i >= 1 {
		opt.Ladder = PlacesLowerLadder
	}
	if i >= 2 {
		opt.Lengthscales = 3
	}
	if i >= 3 {
		opt.Points, opt.Route = true, true
	}
	return opt, nil
}

// PlacesLower is the report of RunPlacesLower.
type PlacesLower struct {
	Trace       string    `json:"trace"`
	Points      int       `json:"points"`
	SpanS       float64   `json:"span_s"`
	Durations   []float64 `json:"durations_s"`
	Stride      int       `json:"stride"`
	Ladder      []float64 `json:"ladder_s,omitempty"`
	PointsClass bool      `json:"points_class"`
	RouteClass  bool      `json:"route_class"`
	MaxStarts   int       `json:"max_starts,omitempty"`
	// EveryWindow: the bound's constraints grew by cutting planes from
	// every contiguous window (Bound.Cuts, Bound.History), and
	// Bound.EveryWindowDesignRMSM certifies every window.
	EveryWindow bool `json:"every_window"`
	// Classes are the windows by class (the single points, one duration,
	// the route): how many entered, from every stride-th point, and the
	// share of the bound's numerator they carry
	// (cip.PlaceLowerBound.WindowShares).
	Classes []PlacesLowerClass     `json:"classes"`
	Members []cip.PlaceLowerMember `json:"members"`
	Epsilon float64                `json:"epsilon"`
	Lambda  float64                `json:"lambda"`
	RadiusM float64                `json:"radius_m"`
	// Bound covers the family as the prior file states it (every variance
	// at least each kernel's least). A certificate that covers every
	// variance, as PlacesEveryLength's does, needs at least as much (the
	// adversary's own uncertainty, which helps the noise, vanishes).
	Bound cip.PlaceLowerBound `json:"bound"`
	// The RMS (rms_noise_m) of the default release and of the release
	// with PlacesEveryLength, and the target.
	DefaultRMSM     float64 `json:"default_rms_noise_m"`
	EveryLengthRMSM float64 `json:"places_every_length_rms_noise_m"`
	TargetRMSM      float64 `json:"target_rms_noise_m"`
	// Infeasible is true when the bound exceeds the target: no Gaussian
	// mechanism of this form certifies these stays against every member
	// within it.
	Infeasible bool    `json:"infeasible"`
	Seconds    float64 `json:"seconds"`
}

// PlacesLowerClass is one class of windows in a PlacesLower report.
type PlacesLowerClass struct {
	// Class is "points", "route" or the stay's duration ("30 min").
	Class     string  `json:"class"`
	DurationS float64 `json:"duration_s"`
	Windows   int     `json:"windows"`
	Stride    int     `json:"stride"`
	Share     float64 `json:"share"`
}

// RunPlacesLower bounds from below the noise of every Gaussian mechanism
// that certifies tr's stays against every Matérn member of opt.Prior's
// family at its shortest lengthscale (cip.PlacesNoiseLowerBound), with the
// default release's noise as the trial direction, and releases tr twice
// (seeded, the default and PlacesEveryLength) for their RMS.
func RunPlacesLower(tr *trace.Trace, opt PlacesLowerOptions) (*PlacesLower, error) {
	if opt.Prior == nil {
		return nil, fmt.Errorf("places lower bound: no prior")
	}
	opt.defaults()
	start := time.Now()
	times := make([]time.Time, len(tr.Points))
	for i, p := range tr.Points {
		times[i] = p.Time
	}
	ts, err := gp.Seconds(times)
	if err != nil {
		return nil, err
	}
	rep := &PlacesLower{Trace: tr.Name, Points: len(ts), SpanS: ts[len(ts)-1] - ts[0], Durations: opt.Durations, Stride: max(opt.Stride, 1),
		Epsilon: opt.Epsilon, Lambda: opt.Lambda, RadiusM: opt.Radius, TargetRMSM: opt.TargetRMSM}
	var trial cip.PlaceLowerRequest
	for _, every := range []bool{false, true} {
		_, cert, err := sanitize.Trace(tr, sanitize.Options{Prior: opt.Prior, Epsilon: opt.Epsilon, Lambda: opt.Lambda, Radius: opt.Radius,
			Source: noise.Seeded(1), PlacesEveryLength: every})
		if err != nil {
			return nil, fmt.Errorf("release (places every length %v): %w", every, err)
		}
		pc := cert.Persons[0]
		if every {
			rep.EveryLengthRMSM = pc.RMSNoiseM
			continue
		}
		rep.DefaultRMSM = pc.RMSNoiseM
		g, err := cert.NoiseCovariance(pc, ts)
		if err != nil {
			return nil, err
		}
		trial.Trial = g
	}
	rep.Members = placesLowerMembers(opt.Prior.Families(), max(opt.Lengthscales, 1), opt.ExtraLengthscales)
	if len(rep.Members) == 0 {
		return nil, fmt.Errorf("places lower bound: the prior's family has no Matérn 1/2, 3/2 or 5/2 kernel")
	}
	rep.Ladder, rep.PointsClass, rep.RouteClass, rep.MaxStarts = opt.Ladder, opt.Points, opt.Route, opt.MaxStarts
	req := cip.PlaceLowerRequest{Times: ts, Members: rep.Members, Windows: placesLowerWindows(ts, opt, rep),
		Epsilon: opt.Epsilon, Lambda: opt.Lambda, Radius: opt.Radius, Trial: trial.Trial, Steps: opt.Steps, Rounds: opt.Rounds,
		EveryWindow: opt.EveryWindow, CutWindows: opt.CutWindows, StopBelowM: opt.StopBelowM}
	rep.EveryWindow = opt.EveryWindow
	if rep.Bound, err = cip.PlacesNoiseLowerBound(req); err != nil {
		return nil, err
	}
	first := 0
	for i := range rep.Classes {
		c := &rep.Classes[i]
		if rep.Bound.WindowShares != nil {
			for _, sh := range rep.Bound.WindowShares[first : first+c.Windows] {
				c.Share += sh
			}
		}
		first += c.Windows
	}
	rep.Infeasible = rep.Bound.RMSNoiseM > rep.TargetRMSM
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// placesLowerMembers returns, for each Matérn kernel of the family,
// perKernel lengthscales geometric from its shortest to its longest (the
// shortest alone for 1), and each of extra inside the kernel's range not
// already among them, each at the kernel's least variance.
func placesLowerMembers(fam prior.FamilySet, perKernel int, extra []float64) []cip.PlaceLowerMember {
	var out []cip.PlaceLowerMember
	for _, f := range fam.Kernels {
		switch f.Kernel {
		case gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52:
		default:
			continue
		}
		for i := range perKernel {
			l := f.LengthscaleMin
			if i > 0 {
				if !(f.LengthscaleMax > f.LengthscaleMin) {
					break
				}
				l = f.LengthscaleMin * math.Pow(f.LengthscaleMax/f.LengthscaleMin, float64(i)/float64(perKernel-1))
			}
			out = append(out, cip.PlaceLowerMember{Kernel: f.Kernel, Lengthscale: l, Variance: f.Variance})
		}
		for _, l := range extra {
			dup := slices.ContainsFunc(out, func(m cip.PlaceLowerMember) bool { return m.Kernel == f.Kernel && m.Lengthscale == l })
			if l >= f.LengthscaleMin && l <= f.LengthscaleMax && !dup {
				out = append(out, cip.PlaceLowerMember{Kernel: f.Kernel, Lengthscale: l, Variance: f.Variance})
			}
		}
	}
	return out
}

// placesLowerWindows returns the windows of opt's classes, class by
// class, and records the classes in rep.
func placesLowerWindows(ts []float64, opt PlacesLowerOptions, rep *PlacesLower) []cip.PlaceWindow {
	span := ts[len(ts)-1] - ts[0]
	var out []cip.PlaceWindow
	add := func(class string, d float64, capped bool) {
		stride := max(opt.Stride, 1)
		ws := cip.StayWindows(ts, []float64{d}, stride)
		if capped && opt.MaxStarts > 0 && len(ws) > opt.MaxStarts {
			stride = (len(ws)*stride + opt.MaxStarts - 1) / opt.MaxStarts
			ws = cip.StayWindows(ts, []float64{d}, stride)
		}
		if len(ws) == 0 {
			return
		}
		out = append(out, ws...)
		rep.Classes = append(rep.Classes, PlacesLowerClass{Class: class, DurationS: d, Windows: len(ws), Stride: stride})
	}
	if opt.Points {
		// A window of duration 0 is one point: a basic secret.
		add("points", 0, true)
	}
	ds := slices.Clone(opt.Durations)
	for _, d := range opt.Ladder {
		if d < span && !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	for _, d := range ds {
		add(fmt.Sprintf("%g min", d/60), d, !slices.Contains(opt.Durations, d))
	}
	if opt.Route {
		out = append(out, cip.PlaceWindow{First: 0, Last: len(ts) - 1})
		rep.Classes = append(rep.Classes, PlacesLowerClass{Class: "route", DurationS: span, Windows: 1, Stride: 1})
	}
	return out
}

// WriteText prints the bound beside the target and the two releases.
func (r *PlacesLower) WriteText(w io.Writer) error {
	starts := "every point"
	if r.Stride > 1 {
		starts = fmt.Sprintf("one point in %d", r.Stride)
	}
	fmt.Fprintf(w, "trace %s: %d points over %.2f h; stays of %v min starting at %s; epsilon %g, lambda %g, r %g m\n",
		r.Trace, r.Points, r.SpanS/3600, minutes(r.Durations), starts, r.Epsilon, r.Lambda, r.RadiusM)
	for k, m := range r.Members {
		fmt.Fprintf(w, "  member %s at %.4g s, variance from %.1f m^2: share of the bound %.3f\n", m.Kernel, m.Lengthscale, m.Variance, share(r.Bound.MemberShares, k))
	}
	for _, c := range r.Classes {
		fmt.Fprintf(w, "  windows %s: %d (one start in %d), share of the bound %.3f\n", c.Class, c.Windows, c.Stride, c.Share)
	}
	fmt.Fprintf(w, "lower bound on rms_noise_m of every Gaussian mechanism certifying them: %.1f m (%d constraints, lambda_max <= %.6g; round %d)\n",
		r.Bound.RMSNoiseM, r.Bound.Constraints, r.Bound.LambdaMax, r.Bound.Round)
	fmt.Fprintf(w, "a noise found that certifies them (a trial scaled until every stay's loss is within epsilon): %.1f m\n", r.Bound.DesignRMSM)
	if r.EveryWindow {
		fmt.Fprintf(w, "cutting planes from every contiguous window: %d constraints added (share of the bound %.3f); a noise found that certifies every window against these members: %.1f m\n",
			r.Bound.Cuts, r.Bound.CutShare, r.Bound.EveryWindowDesignRMSM)
		for _, h := range r.Bound.History {
			fmt.Fprintf(w, "  round %d: bound %.1f m, %d constraints; upper end %.1f m (constraints), %.1f m (every window; %d pairs above the target); %d added\n",
				h.Round, h.RMSNoiseM, h.Constraints, h.DesignRMSM, h.EveryWindowDesignRMSM, h.Above, h.Added)
		}
	}
	fmt.Fprintf(w, "target %.0f m; default release %.1f m (places only against members at least as long as the stay); PlacesEveryLength %.1f m\n",
		r.TargetRMSM, r.DefaultRMSM, r.EveryLengthRMSM)
	verdict := fmt.Sprintf("feasible as far as this bound tells: it is %.1f m below the target", r.TargetRMSM-r.Bound.RMSNoiseM)
	if r.Infeasible {
		verdict = fmt.Sprintf("INFEASIBLE: no Gaussian mechanism of this form certifies these stays against every member within %.0f m", r.TargetRMSM)
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}

func share(s []float64, k int) float64 {
	if k < len(s) {
		return s[k]
	}
	return 0
}

func minutes(ds []float64) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d / 60
	}
	return out
}

// RunPlacesLowerFile reads the trace file in (its traces joined in time
// order: one person) and the prior file priorPath, and runs
// RunPlacesLower; opt.Prior is replaced by the file's.
func RunPlacesLowerFile(in, priorPath string, opt PlacesLowerOptions) (*PlacesLower, error) {
	pr, err := prior.ReadFile(priorPath)
	if err != nil {
		return nil, fmt.Errorf("--prior %s: %w", priorPath, err)
	}
	trs, _, err := trace.ReadFile(in, trace.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("--in %s: %w", in, err)
	}
	if len(trs) == 0 {
		return nil, fmt.Errorf("--in %s: no trace in the file", in)
	}
	opt.Prior = pr
	return RunPlacesLower(joinInTime(trs), opt)
}

// joinInTime joins a file's traces into one person's, in time order.
func joinInTime(trs []*trace.Trace) *trace.Trace {
	tr := &trace.Trace{UID: trs[0].UID, Name: trs[0].Name}
	for _, t := range trs {
		tr.Points = append(tr.Points, t.Points...)
	}
	slices.SortStableFunc(tr.Points, func(a, b trace.Point) int { return a.Time.Compare(b.Time) })
	return tr
}
