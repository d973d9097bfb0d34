package cip

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// TestUseEnvelope checks that a stored envelope design comes back as the
// envelope NewEnvelope designed (and is then what NewEnvelope returns,
// without a design), and that a design which is not an envelope of its
// family is refused and leaves the cache as it was: weights lowered (the
// overhead made consistent, as a forger would), the tail component gone,
// a member scale, the overhead, the kernel or the version altered. The
// lowered weights are the negative control of the domination proof: a
// check of the digest alone would take them.
func TestUseEnvelope(t *testing.T) {
	fs := prior.FamilySet{Kernels: []prior.Family{
		{Kernel: gp.KernelMatern12, LengthscaleMin: 180, LengthscaleMax: 3600},
		{Kernel: gp.KernelMatern32, LengthscaleMin: 60, LengthscaleMax: 1800},
		{Kernel: gp.KernelMatern52, LengthscaleMin: 60, LengthscaleMax: 900},
	}}
	opt := &EnvelopeOptions{StateSpace: true, PlaceScaled: true}
	designed, err := NewEnvelope(fs, opt)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := json.Marshal(designed.Design(opt))
	if err != nil {
		t.Fatal(err)
	}
	stored := func() *EnvelopeDesign {
		var d EnvelopeDesign
		if err := json.Unmarshal(blob, &d); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	forget := func() {
		envelopeCache.Lock()
		clear(envelopeCache.m)
		envelopeCache.Unlock()
	}
	forget()
	got, err := UseEnvelope(stored())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, designed) {
		t.Fatalf("the stored design came back as\n%+v\nnot\n%+v", got, designed)
	}
	if again, _ := NewEnvelope(fs, opt); again != got {
		t.Fatal("NewEnvelope designed again instead of using the verified design")
	}
	heaviest := 0 // the largest weight
	for j, c := range stored().Components {
		if c.Weight > stored().Components[heaviest].Weight {
			heaviest = j
		}
	}
	resum := func(d *EnvelopeDesign) {
		d.Overhead = 0
		for _, c := range d.Components {
			d.Overhead += c.Weight
		}
	}
	bad := map[string]func(d *EnvelopeDesign){
		"weights lowered 1 %": func(d *EnvelopeDesign) {
			for j := range d.Components {
				d.Components[j].Weight *= 0.99
			}
			resum(d)
		},
		"largest weight halved": func(d *EnvelopeDesign) { d.Components[heaviest].Weight /= 2; resum(d) },
		"tail component gone": func(d *EnvelopeDesign) {
			d.Components = d.Components[1:] // the heaviest tail sorts first
			resum(d)
		},
		"member scale 1": func(d *EnvelopeDesign) { d.MemberScales[0] = 1 },
		"overhead":       func(d *EnvelopeDesign) { d.Overhead *= 0.5 },
		"kernel":         func(d *EnvelopeDesign) { d.Components[0].Kernel = gp.KernelRBF },
		"version":        func(d *EnvelopeDesign) { d.Version++ },
		"not state space": func(d *EnvelopeDesign) {
			d.Family.Kernels = d.Family.Kernels[:1]
			d.Family.Kernels[0].LengthscaleMax = d.Family.Kernels[0].LengthscaleMin
			d.Options.StateSpace = false
		},
		"negative weight":     func(d *EnvelopeDesign) { d.Components[0].Weight = -d.Components[0].Weight; resum(d) },
		"other family member": func(d *EnvelopeDesign) { d.Family.Kernels[1].LengthscaleMin = 5 },
	}
	for name, alter := range bad {
		forget()
		d := stored()
		alter(d)
		if _, err := UseEnvelope(d); !errors.Is(err, ErrEnvelopeDesign) {
			t.Errorf("%s: accepted (%v)", name, err)
			continue
		} else if name == "weights lowered 1 %" && !strings.Contains(err.Error(), "does not dominate") {
			t.Errorf("%s: refused for another reason: %v", name, err)
		}
		envelopeCache.Lock()
		n := len(envelopeCache.m)
		envelopeCache.Unlock()
		if n != 0 {
			t.Errorf("%s: refused, but cached", name)
		}
	}
	forget()
}
