package trajdata

import (
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

func TestAuditDemo(t *testing.T) {
	t.Parallel()
	ps := AuditDemo()
	if len(ps) != 40 {
		t.Fatalf("%d people, want 40", len(ps))
	}
	prefix := 0
	for _, p := range ps {
		if len(p.Seqs) != AuditDemoMaxSeqs {
			t.Fatalf("%s: %d sequences", p.ID, len(p.Seqs))
		}
		s := p.Seqs[0]
		if len(s) < 1 || len(s) > AuditDemoMaxLen || slices.ContainsFunc(s, func(x int) bool { return x < 0 || x >= AuditDemoSymbols }) {
			t.Fatalf("%s: sequence %v outside the bounds or the alphabet", p.ID, s)
		}
		if len(s) >= 2 && s[0] == 3 && s[1] == 1 && p.ID != AuditDemoVictim {
			prefix++
		}
	}
	v := ps[len(ps)-1]
	if v.ID != AuditDemoVictim || !slices.Equal(v.Seqs[0], []int{3, 1, 2}) {
		t.Fatalf("victim %+v", v)
	}
	for _, p := range ps[:len(ps)-1] {
		if slices.Equal(p.Seqs[0], v.Seqs[0]) {
			t.Fatalf("%s holds the victim's sequence", p.ID)
		}
	}
	if prefix != 23 {
		t.Errorf("%d others share the victim's prefix <3 1>, want 23", prefix)
	}
}

func TestCommutersShape(t *testing.T) {
	t.Parallel()
	opt := CommuterOptions{Rows: 6, Cols: 7, Persons: 200, MaxLen: 6}
	ps, err := Commuters(opt, noise.Seeded(3))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != opt.Persons {
		t.Fatalf("%d people, want %d", len(ps), opt.Persons)
	}
	for _, u := range ps {
		p := u.Seqs[0]
		if len(p) < 3 || len(p) > opt.MaxLen {
			t.Fatalf("%s: path of %d cells", u.ID, len(p))
		}
		for i := 1; i < len(p); i++ {
			r0, c0, r1, c1 := p[i-1]/opt.Cols, p[i-1]%opt.Cols, p[i]/opt.Cols, p[i]%opt.Cols
			if abs(r1-r0)+abs(c1-c0) != 1 {
				t.Fatalf("%s: %v is not a grid walk", u.ID, p)
			}
		}
		h, w := p[0], p[len(p)-1]
		if abs(h/opt.Cols-w/opt.Cols)+abs(h%opt.Cols-w%opt.Cols) != len(p)-1 {
			t.Fatalf("%s: %v is not a shortest path", u.ID, p)
		}
	}
	if _, err := Commuters(CommuterOptions{Rows: 1, Cols: 2, Persons: 1, MaxLen: 3}, nil); err == nil {
		t.Fatal("a grid without two cells 2 apart accepted")
	}
}
