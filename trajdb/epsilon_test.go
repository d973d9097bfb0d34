package trajdb_test

import (
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trajdb"
)

// TestBoundsCheckEpsilon: bounds whose noise per count exceeds the
// default bounds' at MinEpsilon are refused with a *param.Error, before a
// tree is drawn (--max-len 1e11 at epsilon 1 once ran out of memory);
// the default bounds at MinEpsilon and the largest admitted product are
// the controls.
func TestBoundsCheckEpsilon(t *testing.T) {
	def := trajdb.DefaultBounds()
	for _, tc := range []struct {
		b   trajdb.Bounds
		eps float64
		ok  bool
	}{
		{def, trajdb.MinEpsilon, true},
		{trajdb.Bounds{MaxLen: 100, MaxSeqs: 500}, 1, true}, // exactly MaxNoiseRatio
		{trajdb.Bounds{MaxLen: 100, MaxSeqs: 501}, 1, false},
		{trajdb.Bounds{MaxLen: 99999999999, MaxSeqs: 5}, 1, false},
		{trajdb.Bounds{MaxLen: 10, MaxSeqs: 99999999999}, 1e3, false},
		{def, trajdb.MinEpsilon / 2, false}, // CheckEpsilon's own rule
		{trajdb.Bounds{MaxLen: 0, MaxSeqs: 5}, 1, false},
	} {
		err := tc.b.CheckEpsilon(tc.eps)
		if (err == nil) != tc.ok {
			t.Errorf("%+v at %g: %v; want ok %v", tc.b, tc.eps, err, tc.ok)
		}
		if err != nil && tc.b.MaxLen > 0 && !errors.Is(err, param.ErrInvalid) {
			t.Errorf("%+v at %g: %v is not a *param.Error", tc.b, tc.eps, err)
		}
	}
	// The library refuses them too, not only the command (bounds just
	// over the limit: a broken check costs seconds here, not the memory).
	m, err := trajdb.NewMechanism(trajdb.MechanismNGram, trajdb.Bounds{MaxLen: 100, MaxSeqs: 501}, 0)
	if err != nil {
		t.Fatal(err)
	}
	db := &trajdb.DB{Size: 2, Users: []trajdb.User{{ID: "a", Seqs: [][]int{{0, 1}}}}}
	if _, err := m.Synthesize(db, 1, nil); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("Synthesize over the limit: %v; want a *param.Error", err)
	}
}
