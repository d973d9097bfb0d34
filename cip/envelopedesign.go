package cip

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// An envelope's design (its linear program) depends on the prior family
// and EnvelopeOptions alone, and is the largest part of a device's first
// release (issue 33). EnvelopeDesign is an Envelope as data, for a device
// to store and give back on its next start (UseEnvelope); nothing in it is
// trusted: UseEnvelope proves the domination again on the stored weights,
// which costs the verification's frequency grid but not the linear
// program.

// EnvelopeDesignVersion is the version of EnvelopeDesign's JSON.
const EnvelopeDesignVersion = 1

// EnvelopeDesign is an Envelope of a family under options, as data.
type EnvelopeDesign struct {
	Version      int                 `json:"version"`
	Family       prior.FamilySet     `json:"family"`
	Options      EnvelopeOptions     `json:"options"`
	Components   []EnvelopeComponent `json:"components"`
	Overhead     float64             `json:"overhead"`
	MemberScales []float64           `json:"member_scales"`
	Check        EnvelopeCheck       `json:"check"`
}

// EnvelopeComponent is one noise kernel of an envelope: a Matérn kernel
// (gp.KernelName) of variance Weight.
type EnvelopeComponent struct {
	Kernel      string  `json:"kernel"`
	Weight      float64 `json:"weight"`
	Lengthscale float64 `json:"lengthscale_s"`
}

// Design returns e, designed with opt (the options NewEnvelope was given),
// as data; nil for a proportional envelope (it has no design to keep).
func (e *Envelope) Design(opt *EnvelopeOptions) *EnvelopeDesign {
	if e.Proportional {
		return nil
	}
	var o EnvelopeOptions
	if opt != nil {
		o = *opt
	}
	d := &EnvelopeDesign{Version: EnvelopeDesignVersion, Family: e.Family, Options: o, Overhead: e.Overhead,
		MemberScales: append([]float64(nil), e.MemberScales...), Check: e.Check}
	for _, k := range e.Components {
		d.Components = append(d.Components, EnvelopeComponent{Kernel: gp.KernelName(k), Weight: varianceOf(k), Lengthscale: lengthscaleOf(k)})
	}
	return d
}

// ErrEnvelopeDesign means a stored envelope design was refused: it is not
// an envelope of its family (corrupted, altered, or of another version of
// this code). Design the envelope again (NewEnvelope).
var ErrEnvelopeDesign = errors.New("cip: the stored envelope design is refused")

// UseEnvelope verifies d as an envelope of d.Family under d.Options and
// caches it, so that NewEnvelope(d.Family, &d.Options) returns it without
// solving the linear program. The verification is NewEnvelope's own proof
// on d's weights: the family's envelope at most the noise density on every
// bracket of the verification grid, with a relative margin of half
// NewEnvelope's, and the tail argument for one heavier-tailed component;
// the member scales and the overhead are recomputed. A design that fails
// is refused (ErrEnvelopeDesign) and the cache is left as it was.
func UseEnvelope(d *EnvelopeDesign) (*Envelope, error) {
	env, err := d.verify()
	if err != nil {
		return nil, err
	}
	cacheEnvelope(envelopeKey{d.Family.Key(), d.Options}, env)
	return env, nil
}

func (d *EnvelopeDesign) verify() (*Envelope, error) {
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrEnvelopeDesign, fmt.Sprintf(format, a...))
	}
	if d == nil {
		return nil, refuse("no design")
	}
	if d.Version != EnvelopeDesignVersion {
		return nil, refuse("version %d, this code reads %d", d.Version, EnvelopeDesignVersion)
	}
	f, o := d.Family, d.Options
	if err := f.Validate(); err != nil {
		return nil, refuse("family: %v", err)
	}
	if f.Single() && !o.StateSpace {
		return nil, refuse("a single-lengthscale family's envelope is proportional, not designed")
	}
	e, err := newEnvelopeLP(f, &o)
	if err != nil {
		return nil, refuse("%v", err)
	}
	if len(d.MemberScales) != len(e.members) {
		return nil, refuse("%d member scales for %d kernels", len(d.MemberScales), len(e.members))
	}
	for i, m := range e.members {
		if d.MemberScales[i] != m.scale {
			return nil, refuse("member scale %d is %v, not %v", i, d.MemberScales[i], m.scale)
		}
	}
	if len(d.Components) == 0 {
		return nil, refuse("no component")
	}
	comps := make([]gp.Spectral, len(d.Components))
	kernels := make([]gp.Kernel, len(d.Components))
	nus := make([]float64, len(d.Components))
	overhead := 0.0
	for j, c := range d.Components {
		if !(c.Weight > 0) || math.IsInf(c.Weight, 0) || !(c.Lengthscale > 0) || math.IsInf(c.Lengthscale, 0) {
			return nil, refuse("component %d: weight %v, lengthscale %v", j, c.Weight, c.Lengthscale)
		}
		k, err := gp.NewKernel(c.Kernel, c.Weight, c.Lengthscale, 0)
		if err != nil {
			return nil, refuse("component %d: %v", j, err)
		}
		sp, ok := k.(gp.Spectral)
		nu, ok2 := gp.Smoothness(k)
		if !ok || !ok2 || math.IsInf(nu, 1) {
			return nil, refuse("component %d: %s is not a Matérn kernel", j, c.Kernel)
		}
		comps[j], kernels[j], nus[j] = sp, k, nu
		overhead += c.Weight
	}
	if overhead != d.Overhead {
		return nil, refuse("overhead %v, the weights sum to %v", d.Overhead, overhead)
	}
	logD := func(w float64) float64 {
		// log sum_j S_j(w), the weights in the kernels' variances, stably.
		mx := math.Inf(-1)
		ls := make([]float64, len(comps))
		for j, k := range comps {
			ls[j] = k.LogSpectralDensity(w)
			mx = math.Max(mx, ls[j])
		}
		s := 0.0
		for _, l := range ls {
			s += math.Exp(l - mx)
		}
		return mx + math.Log(s)
	}
	need := -math.Log1p(envelopeMargin / 2)
	lo, hi := e.omegaRange()
	ws := grid(lo, hi, verifyStep)
	if worst, _ := e.worstRatio(ws, logD); !(worst <= need) {
		return nil, refuse("it does not dominate the family: log(E/D) reaches %.3g", worst)
	}
	wN := ws[len(ws)-1]
	tail := false
	for j, k := range comps {
		l := d.Components[j].Lengthscale
		if e.heavyOK(nus[j], l) && wN >= e.tailFrom(nus[j]) && e.logEnv(wN)-k.LogSpectralDensity(wN) <= need {
			tail = true
			break
		}
	}
	if !tail {
		return nil, refuse("no component carries the tail argument beyond %g rad/s", wN)
	}
	return &Envelope{Family: f, Components: kernels, Overhead: d.Overhead, MemberScales: append([]float64(nil), d.MemberScales...), Check: d.Check}, nil
}

// varianceOf reads the "variance" hyperparameter of k (a component's
// weight).
func varianceOf(k gp.Kernel) float64 {
	for _, p := range k.Params() {
		if p.Name == "variance" {
			return p.Value
		}
	}
	return math.NaN()
}
