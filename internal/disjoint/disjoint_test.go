package disjoint

import "testing"

func TestSets(t *testing.T) {
	s := New(6)
	s.Union(0, 1)
	s.Union(3, 4)
	s.Union(1, 4)
	for _, c := range []struct {
		i, j int
		same bool
	}{{0, 3, true}, {1, 4, true}, {0, 2, false}, {5, 4, false}, {2, 2, true}} {
		if got := s.Find(c.i) == s.Find(c.j); got != c.same {
			t.Errorf("%d and %d together: %v, want %v", c.i, c.j, got, c.same)
		}
	}
}
