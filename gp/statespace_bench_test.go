package gp

import "testing"

// BenchmarkWhitenedTransition times one rigorous whitened transition (the
// per-distinct-step cost of an exact state-space release).
func BenchmarkWhitenedTransition(b *testing.B) {
	for _, k := range []Kernel{Matern32{1, 10}, Matern72{1, 10}} {
		m, _ := StateSpace(k)
		a := make([]float64, m.StateDim()*m.StateDim())
		b.Run(KernelName(k), func(b *testing.B) {
			dt := 1.0
			for b.Loop() {
				dt += 0.001
				if _, err := m.WhitenedTransition(a, dt, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
