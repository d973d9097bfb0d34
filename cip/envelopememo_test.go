package cip

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sdp"
)

// forgetEnvelopes empties NewEnvelope's process-wide memo.
func forgetEnvelopes() {
	envelopeCache.Lock()
	clear(envelopeCache.m)
	envelopeCache.Unlock()
}

// NewEnvelope's memo is keyed by everything the design depends on: a
// family or options differing in any one input (a kernel, either end of a
// lengthscale range, the period, the least variance, a second kernel, each
// option) gets its own design, equal to one designed afresh and different
// from the first, never the remembered one; a repeated call returns the
// remembered design, equal to a fresh one. The negative control: the same
// comparison on a memo keyed by the first kernel's name alone (a key that
// drops inputs) finds a stale design.
func TestNewEnvelopeRemembered(t *testing.T) {
	// Not parallel: it empties the process's memo, which the other tests
	// only read through (their designs are made again when missing).
	// Single lengthscales without StateSpace design no linear program (the
	// family's member is the noise), so most inputs cost nothing.
	single := func(kernel string, l float64) prior.Family {
		return prior.Family{Kernel: kernel, LengthscaleMin: l, LengthscaleMax: l}
	}
	base := prior.FamilySet{Kernels: []prior.Family{single(gp.KernelMatern32, 60)}}
	opt := EnvelopeOptions{}
	stateSpace := EnvelopeOptions{StateSpace: true}
	type input struct {
		name string
		f    prior.FamilySet
		o    EnvelopeOptions
		from *input // the input that differs in this one (nil: base)
	}
	with := func(name string, alter func(f *prior.Family), o EnvelopeOptions) input {
		f := base.Kernels[0]
		alter(&f)
		return input{name: name, f: prior.FamilySet{Kernels: []prior.Family{f}}, o: o}
	}
	// A range family designs a linear program: cheap at [50, 60] s.
	rng := with("shortest lengthscale", func(f *prior.Family) { f.LengthscaleMin = 50 }, opt)
	ranged := func(name string, lMin float64, o EnvelopeOptions, from *input) input {
		in := with(name, func(f *prior.Family) { f.LengthscaleMin = lMin }, o)
		in.from = from
		return in
	}
	// StateSpace matters to a single lengthscale only (a range is always
	// designed on Matérn components).
	m12 := input{name: "matern12", f: prior.FamilySet{Kernels: []prior.Family{single(gp.KernelMatern12, 60)}}}
	ss := input{name: "state space", f: m12.f, o: stateSpace, from: &m12}
	rangeSS := ranged("range, state space", 50, stateSpace, nil)
	periodic := input{name: "periodic", f: prior.FamilySet{Kernels: []prior.Family{{Kernel: gp.KernelPeriodic, LengthscaleMin: 60, LengthscaleMax: 60, Period: 86400}}}}
	inputs := []input{
		with("kernel", func(f *prior.Family) { f.Kernel = gp.KernelMatern52 }, opt),
		rng,
		ranged("shortest lengthscale in its 7th digit", 49.99999, opt, &rng),
		with("longest lengthscale", func(f *prior.Family) { f.LengthscaleMax = 70 }, opt),
		with("least variance", func(f *prior.Family) { f.Variance = 100 }, opt),
		ss,
		ranged("place scaled", 50, EnvelopeOptions{StateSpace: true, PlaceScaled: true}, &rangeSS),
		{name: "a second kernel", f: prior.FamilySet{Kernels: []prior.Family{base.Kernels[0], single(gp.KernelMatern12, 60)}}, o: opt},
		periodic,
		{name: "period", f: prior.FamilySet{Kernels: []prior.Family{{Kernel: gp.KernelPeriodic, LengthscaleMin: 60, LengthscaleMax: 60, Period: 3600}}}, from: &periodic},
	}

	fresh := map[string]*Envelope{}
	design := func(name string, f prior.FamilySet, o EnvelopeOptions) *Envelope {
		if e, ok := fresh[name]; ok {
			return e
		}
		e, err := newEnvelope(f, &o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fresh[name] = e
		return e
	}
	// check runs the comparison through get (NewEnvelope, or the control)
	// from a memo holding the design of the input it differs from only
	// (seed puts it there) and returns the inputs that got a stale or
	// wrong design.
	check := func(seed func(f prior.FamilySet, o EnvelopeOptions, e *Envelope), get func(f prior.FamilySet, o *EnvelopeOptions) (*Envelope, error)) []string {
		var bad []string
		for _, in := range inputs {
			from := input{name: "base", f: base, o: opt}
			if in.from != nil {
				from = *in.from
			}
			first := design(from.name, from.f, from.o)
			seed(from.f, from.o, first)
			got, err := get(in.f, &in.o)
			if err != nil {
				t.Fatalf("%s: %v", in.name, err)
			}
			if !reflect.DeepEqual(got, design(in.name, in.f, in.o)) || reflect.DeepEqual(got, first) {
				bad = append(bad, in.name)
			}
		}
		return bad
	}
	if bad := check(func(f prior.FamilySet, o EnvelopeOptions, e *Envelope) {
		forgetEnvelopes()
		cacheEnvelope(envelopeKey{f.Key(), o}, e)
	}, NewEnvelope); len(bad) > 0 {
		t.Errorf("NewEnvelope returned a stale or wrong design after changing: %v", bad)
	}
	// A hit: the same pointer, equal to a fresh design.
	forgetEnvelopes()
	a, err := NewEnvelope(base, &opt)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := NewEnvelope(base, &opt); b != a || !reflect.DeepEqual(b, design("base", base, opt)) {
		t.Error("a repeated NewEnvelope is not the remembered design equal to a fresh one")
	}
	// The negative control: a memo keyed by the first kernel's name alone.
	byName := map[string]*Envelope{}
	if bad := check(func(f prior.FamilySet, _ EnvelopeOptions, e *Envelope) {
		clear(byName)
		byName[f.Kernels[0].Kernel] = e
	}, func(f prior.FamilySet, o *EnvelopeOptions) (*Envelope, error) {
		if e, ok := byName[f.Kernels[0].Kernel]; ok {
			return e, nil
		}
		return newEnvelope(f, o)
	}); len(bad) == 0 {
		t.Error("negative control: a memo keyed by the kernel's name alone passed the comparison")
	}
	forgetEnvelopes()
}

// NewEnvelope's memo holds at most 65 designs however many families a
// process designs for, and concurrent callers of the same family get one
// design (the race detector checks the locking: go test -race).
func TestNewEnvelopeMemoBounded(t *testing.T) {
	// Not parallel: it fills and empties the process's memo.
	forgetEnvelopes()
	for i := range 80 {
		f := prior.FamilySet{Kernels: []prior.Family{{Kernel: gp.KernelMatern32, LengthscaleMin: 60 + float64(i), LengthscaleMax: 60 + float64(i)}}}
		if _, err := NewEnvelope(f, nil); err != nil { // proportional: no linear program
			t.Fatal(err)
		}
		envelopeCache.Lock()
		n := len(envelopeCache.m)
		envelopeCache.Unlock()
		if n > 65 {
			t.Fatalf("the memo holds %d designs", n)
		}
	}
	forgetEnvelopes()
	f := prior.FamilySet{Kernels: []prior.Family{{Kernel: gp.KernelMatern32, LengthscaleMin: 60, LengthscaleMax: 120}}}
	var wg sync.WaitGroup
	got := make([]*Envelope, 4)
	for i := range got {
		wg.Go(func() {
			e, err := NewEnvelope(f, &EnvelopeOptions{StateSpace: true})
			if err != nil {
				t.Error(err)
			}
			got[i] = e
		})
	}
	wg.Wait()
	for i := range got {
		if !reflect.DeepEqual(got[i], got[0]) {
			t.Errorf("caller %d got another design", i)
		}
	}
	forgetEnvelopes()
}

// sumExprs gives, term for term and bit for bit, the expression a
// left-to-right sum gives (the envelope's linear program is then the same
// model), for 0 to 200 terms of one or several variables, without
// constants as in the program's rows (their constants would be summed in
// another order).
// The negative control: a sum in another order differs.
func TestSumExprsSameAsFold(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	m := sdp.NewModel()
	vars := make([]sdp.Var, 50)
	for j := range vars {
		vars[j] = m.ScalarVar()
	}
	for n := range 201 {
		es := make([]sdp.LinExpr, n)
		for i := range es {
			es[i] = vars[rng.IntN(len(vars))].Expr().Scale(rng.NormFloat64())
			if i%3 == 0 {
				es[i] = es[i].Plus(vars[rng.IntN(len(vars))].Expr())
			}
		}
		var fold sdp.LinExpr
		for _, e := range es {
			fold = fold.Plus(e)
		}
		if got := sumExprs(es); !reflect.DeepEqual(got, fold) {
			t.Fatalf("%d terms: %v, a left-to-right sum %v", n, got, fold)
		}
		if n >= 2 {
			var rev sdp.LinExpr
			for i := n - 1; i >= 0; i-- {
				rev = rev.Plus(es[i])
			}
			if reflect.DeepEqual(sumExprs(es), rev) && !reflect.DeepEqual(es[0], es[n-1]) {
				t.Fatalf("negative control: %d terms summed in reverse compare equal", n)
			}
		}
	}
}
