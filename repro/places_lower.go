// "tracepriv repro places-lower-bound" as one call (RunPlacesLower): the
// least noise any Gaussian mechanism needs to certify a trace's stays
// against every member of the family (issue 31, items 5-6), beside what
// the default and PlacesEveryLength releases cost.

package repro

import (
	"fmt"
	"io"
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
// issue's settings: stays of 30, 50 and 90 minutes from every point,
// epsilon 1, lambda 2, r = 100 m, four rounds of the trial and no
// weight steps (Steps), a 400 m target.
type PlacesLowerOptions struct {
	Prior                   *prior.Prior
	Durations               []float64 // seconds
	Stride                  int
	Epsilon, Lambda, Radius float64
	Steps, Rounds           int
	TargetRMSM              float64
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

// PlacesLower is the report of RunPlacesLower.
type PlacesLower struct {
	Trace     string                 `json:"trace"`
	Points    int                    `json:"points"`
	SpanS     float64                `json:"span_s"`
	Durations []float64              `json:"durations_s"`
	Stride    int                    `json:"stride"`
	Members   []cip.PlaceLowerMember `json:"members"`
	Epsilon   float64                `json:"epsilon"`
	Lambda    float64                `json:"lambda"`
	RadiusM   float64                `json:"radius_m"`
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
	for _, f := range opt.Prior.Families().Kernels {
		switch f.Kernel {
		case gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52:
			rep.Members = append(rep.Members, cip.PlaceLowerMember{Kernel: f.Kernel, Lengthscale: f.LengthscaleMin, Variance: f.Variance})
		}
	}
	if len(rep.Members) == 0 {
		return nil, fmt.Errorf("places lower bound: the prior's family has no Matérn 1/2, 3/2 or 5/2 kernel")
	}
	req := cip.PlaceLowerRequest{Times: ts, Members: rep.Members, Windows: cip.StayWindows(ts, opt.Durations, opt.Stride),
		Epsilon: opt.Epsilon, Lambda: opt.Lambda, Radius: opt.Radius, Trial: trial.Trial, Steps: opt.Steps, Rounds: opt.Rounds}
	if rep.Bound, err = cip.PlacesNoiseLowerBound(req); err != nil {
		return nil, err
	}
	rep.Infeasible = rep.Bound.RMSNoiseM > rep.TargetRMSM
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// WriteText prints the bound beside the target and the two releases.
func (r *PlacesLower) WriteText(w io.Writer) error {
	starts := "every point"
	if r.Stride > 1 {
		starts = fmt.Sprintf("one point in %d", r.Stride)
	}
	fmt.Fprintf(w, "trace %s: %d points over %.2f h; stays of %v min starting at %s; epsilon %g, lambda %g, r %g m\n",
		r.Trace, r.Points, r.SpanS/3600, minutes(r.Durations), starts, r.Epsilon, r.Lambda, r.RadiusM)
	for _, m := range r.Members {
		fmt.Fprintf(w, "  member %s at %g s, variance from %.1f m^2\n", m.Kernel, m.Lengthscale, m.Variance)
	}
	fmt.Fprintf(w, "lower bound on rms_noise_m of every Gaussian mechanism certifying them: %.1f m (%d constraints, lambda_max <= %.6g)\n",
		r.Bound.RMSNoiseM, r.Bound.Constraints, r.Bound.LambdaMax)
	fmt.Fprintf(w, "a noise found that certifies them (a trial scaled until every stay's loss is within epsilon): %.1f m\n", r.Bound.DesignRMSM)
	fmt.Fprintf(w, "target %.0f m; default release %.1f m (places only against members at least as long as the stay); PlacesEveryLength %.1f m\n",
		r.TargetRMSM, r.DefaultRMSM, r.EveryLengthRMSM)
	verdict := fmt.Sprintf("feasible as far as this bound tells: it is %.1f m below the target", r.TargetRMSM-r.Bound.RMSNoiseM)
	if r.Infeasible {
		verdict = fmt.Sprintf("INFEASIBLE: no Gaussian mechanism of this form certifies these stays against every member within %.0f m", r.TargetRMSM)
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
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
